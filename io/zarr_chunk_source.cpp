// Reading and decoding Zarr chunks and shards from a store.
#include "io/zarr_chunk_source.h"

#include <algorithm>

#include "io/io_error.h"
#include "io/zarr_chunk_key.h"
#include "io/zarr_codecs.h"

namespace stacklens::io {

namespace {

constexpr uint64_t kEmpty = ~uint64_t(0);

std::string gridText(const std::vector<int64_t>& g) {
  std::string s = "[";
  for (size_t i = 0; i < g.size(); ++i) s += (i ? ", " : "") + std::to_string(g[i]);
  return s + "]";
}

}  // namespace

ZarrChunkSource::ZarrChunkSource(std::shared_ptr<const ZarrStore> store, ZarrArrayMeta meta,
                                 int64_t cacheBytes)
    : store_(std::move(store)),
      meta_(std::move(meta)),
      chunks_(cacheBytes),
      indexes_(cacheBytes / 4) {
  const ZarrChunkCoding& c = meta_.coding;
  const size_t n = c.shape.size();
  for (size_t i = 0; i < n; ++i) grid_.push_back((meta_.shape[i] + c.shape[i] - 1) / c.shape[i]);
  // Stored axis j (extent shape[order[j]]) in C order gives chunk axis order[j] its stride.
  strides_.assign(n, 0);
  int64_t stride = 1;
  for (size_t j = n; j-- > 0;) {
    strides_[size_t(c.order[j])] = stride;
    stride *= c.shape[size_t(c.order[j])];
  }
  // Compressors add at most a few bytes per kB (blosc 16 + 1/256, zstd and deflate less than
  // 1/128, plus headers); anything larger is damage, refused before it is read.
  storedCap_ = c.decodedBytes + c.decodedBytes / 64 + (64 << 10);
  // Enough for the chunks a slice's parallel reads decode while the cache lets go of as many,
  // and at most 1/16 of the cache's bytes beside it.
  const int64_t spares = std::clamp<int64_t>(cacheBytes / 16 / std::max<int64_t>(1, c.decodedBytes),
                                             0, 2 * int64_t(store_->parallelReads()));
  spares_ = std::make_shared<ZarrSpareBuffers>(size_t(c.decodedBytes), size_t(spares));
}

std::shared_ptr<const ZarrChunkBytes> ZarrChunkSource::chunk(
    const std::vector<int64_t>& grid) const {
  const std::string cacheKey = gridText(grid);
  if (auto hit = chunks_.find(cacheKey)) return hit;
  auto values = meta_.sharding ? readInner(grid) : readPlain(grid);
  chunks_.insert(cacheKey, values);
  return values;
}

std::shared_ptr<const ZarrChunkBytes> ZarrChunkSource::decode(
    const std::vector<unsigned char>& stored, const std::string& where) const {
  auto bytes = std::make_shared<ZarrChunkBytes>(spares_);
  decodeZarrChunk(stored.data(), stored.size(), meta_.coding, where, bytes->data());
  return bytes;
}

std::shared_ptr<const ZarrChunkBytes> ZarrChunkSource::readPlain(
    const std::vector<int64_t>& grid) const {
  const std::string key = zarrChunkKey(meta_, grid);
  const std::string path = meta_.folder + "/" + key;
  std::optional<StoreBytes> stored;
  try {
    stored = store_->read(path, storedCap_, StoreObject::Chunk);
  } catch (const StoreObjectTooLarge& e) {
    throw IoError(path, "damaged chunk " + key + ": " +
                            (e.size() >= 0 ? std::to_string(e.size()) + " bytes stored"
                                           : "more bytes sent than announced") +
                            ", more than any encoding of its " +
                            std::to_string(meta_.coding.decodedBytes) + " bytes takes");
  }
  if (!stored) return std::make_shared<const ZarrChunkBytes>();
  return decode(*stored, path + " (chunk " + key + ")");
}

std::shared_ptr<const std::vector<uint64_t>> ZarrChunkSource::shardIndex(
    const std::string& key) const {
  if (auto hit = indexes_.find(key)) return hit;
  const ZarrSharding& s = *meta_.sharding;
  const std::string path = meta_.folder + "/" + key;
  const std::string where = path + " (shard " + key + ")";
  auto range = store_->readRange(path, s.indexAtEnd ? -1 : 0, s.indexBytes);
  if (!range) {  // remembered, so that the shard's other inner chunks ask no more
    auto absent = std::make_shared<const std::vector<uint64_t>>();
    indexes_.insert(key, absent);
    return absent;
  }
  if (range->objectSize < s.indexBytes || int64_t(range->bytes.size()) != s.indexBytes)
    throw IoError(where, "damaged shard: " + std::to_string(range->objectSize) +
                             " bytes, less than its " + std::to_string(s.indexBytes) +
                             "-byte index");
  StoreBytes bytes = std::move(range->bytes);
  if (s.indexChecksum) stripCrc32c(bytes, where + " index");
  // The pairs, then the shard's size: inner chunks are checked against it before they are read.
  auto index = std::make_shared<std::vector<uint64_t>>(size_t(2 * s.innerCount + 1));
  for (size_t i = 0; i + 1 < index->size(); ++i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | bytes[8 * i + size_t(b)];  // little endian
    (*index)[i] = v;
  }
  index->back() = uint64_t(range->objectSize);
  indexes_.insert(key, index);
  return index;
}

std::shared_ptr<const ZarrChunkBytes> ZarrChunkSource::readInner(
    const std::vector<int64_t>& grid) const {
  const ZarrSharding& s = *meta_.sharding;
  std::vector<int64_t> shard(grid.size());
  int64_t slot = 0;  // the inner chunk's place in the index, C order within the shard
  for (size_t i = 0; i < grid.size(); ++i) {
    shard[i] = grid[i] / s.chunksPerShard[i];
    slot = slot * s.chunksPerShard[i] + grid[i] % s.chunksPerShard[i];
  }
  const std::string key = zarrChunkKey(meta_, shard);
  const std::string path = meta_.folder + "/" + key;
  const std::string where = path + " (shard " + key + ", inner chunk " + gridText(grid) + ")";
  const auto index = shardIndex(key);
  if (index->empty()) return std::make_shared<const ZarrChunkBytes>();
  const uint64_t size = index->back();
  const uint64_t offset = (*index)[size_t(2 * slot)], nbytes = (*index)[size_t(2 * slot + 1)];
  if (offset == kEmpty && nbytes == kEmpty) return std::make_shared<const ZarrChunkBytes>();
  if (offset > size || nbytes > size - offset)
    throw IoError(where, "damaged shard: the index points at bytes " + std::to_string(offset) +
                             "+" + std::to_string(nbytes) + " of a " + std::to_string(size) +
                             "-byte shard");
  if (int64_t(nbytes) > storedCap_)
    throw IoError(where, "damaged shard: an inner chunk of " + std::to_string(nbytes) +
                             " bytes, more than any encoding of its " +
                             std::to_string(meta_.coding.decodedBytes) + " bytes takes");
  auto range = store_->readRange(path, int64_t(offset), int64_t(nbytes));
  if (!range || range->bytes.size() != nbytes)
    throw IoError(where, "damaged chunk: the shard ends early (it changed while being read)");
  return decode(range->bytes, where);
}

}  // namespace stacklens::io
