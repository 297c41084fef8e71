// Reading and decoding Zarr chunks and shards from a local folder.
#include "io/zarr_chunk_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/io_error.h"
#include "io/unique_fd.h"
#include "io/zarr_chunk_key.h"
#include "io/zarr_codecs.h"
#include "io/zarr_dtype.h"

namespace stacklens::io {

namespace {

constexpr uint64_t kEmpty = ~uint64_t(0);

std::string gridText(const std::vector<int64_t>& g) {
  std::string s = "[";
  for (size_t i = 0; i < g.size(); ++i) s += (i ? ", " : "") + std::to_string(g[i]);
  return s + "]";
}

// Reads n bytes at offset; throws IoError(where) on a short read.
std::vector<unsigned char> readRange(int fd, int64_t offset, int64_t n, const std::string& where) {
  std::vector<unsigned char> out(static_cast<size_t>(n));
  int64_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out.data() + done, size_t(n - done), off_t(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw IoError(where, std::strerror(errno));
    if (got == 0) throw IoError(where, "damaged chunk: the file ends early");
    done += got;
  }
  return out;
}

// The open file and its size, or fd -1 where it does not exist (a chunk never written).
struct OpenedFile {
  UniqueFd fd;
  int64_t size = 0;
};

OpenedFile openIfPresent(const std::string& path) {
  OpenedFile f;
  f.fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return f;
    throw IoError(path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(f.fd.get(), &st) != 0) throw IoError(path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw IoError(path, "a chunk that is not a regular file");
  f.size = st.st_size;
  return f;
}

}  // namespace

ZarrChunkSource::ZarrChunkSource(ZarrArrayMeta meta, int64_t cacheBytes)
    : meta_(std::move(meta)), chunks_(cacheBytes), indexes_(cacheBytes / 4) {
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
}

std::shared_ptr<const std::vector<float>> ZarrChunkSource::chunk(
    const std::vector<int64_t>& grid) const {
  const std::string cacheKey = gridText(grid);
  if (auto hit = chunks_.find(cacheKey)) return hit;
  auto values = meta_.sharding ? readInner(grid) : readPlain(grid);
  chunks_.insert(cacheKey, values);
  return values;
}

std::shared_ptr<const std::vector<float>> ZarrChunkSource::decode(std::vector<unsigned char> stored,
                                                                  const std::string& where) const {
  const ZarrBytes raw = decodeZarrChunk(std::move(stored), meta_.coding, where);
  auto values =
      std::make_shared<std::vector<float>>(size_t(raw.size()) / size_t(meta_.dtype.bytes));
  convertZarrElements(raw.data(), int64_t(values->size()), meta_.dtype, values->data());
  return values;
}

std::shared_ptr<const std::vector<float>> ZarrChunkSource::readPlain(
    const std::vector<int64_t>& grid) const {
  const std::string key = zarrChunkKey(meta_, grid);
  const std::string path = meta_.folder + "/" + key;
  OpenedFile f = openIfPresent(path);
  if (f.fd.get() < 0) return std::make_shared<const std::vector<float>>();
  if (f.size > storedCap_)
    throw IoError(path, "damaged chunk " + key + ": " + std::to_string(f.size) +
                            " bytes stored, more than any encoding of its " +
                            std::to_string(meta_.coding.decodedBytes) + " bytes takes");
  return decode(readRange(f.fd.get(), 0, f.size, path + " (chunk " + key + ")"),
                path + " (chunk " + key + ")");
}

std::shared_ptr<const std::vector<uint64_t>> ZarrChunkSource::shardIndex(const std::string& key,
                                                                         int fd,
                                                                         int64_t size) const {
  if (auto hit = indexes_.find(key)) return hit;
  const ZarrSharding& s = *meta_.sharding;
  const std::string where = meta_.folder + "/" + key + " (shard " + key + ")";
  if (size < s.indexBytes)
    throw IoError(where, "damaged shard: " + std::to_string(size) + " bytes, less than its " +
                             std::to_string(s.indexBytes) + "-byte index");
  std::vector<unsigned char> bytes =
      readRange(fd, s.indexAtEnd ? size - s.indexBytes : 0, s.indexBytes, where);
  if (s.indexChecksum) stripCrc32c(bytes, where + " index");
  auto index = std::make_shared<std::vector<uint64_t>>(size_t(2 * s.innerCount));
  for (size_t i = 0; i < index->size(); ++i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | bytes[8 * i + size_t(b)];  // little endian
    (*index)[i] = v;
  }
  indexes_.insert(key, index);
  return index;
}

std::shared_ptr<const std::vector<float>> ZarrChunkSource::readInner(
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
  OpenedFile f = openIfPresent(path);
  if (f.fd.get() < 0) return std::make_shared<const std::vector<float>>();
  const auto index = shardIndex(key, f.fd.get(), f.size);
  const uint64_t offset = (*index)[size_t(2 * slot)], nbytes = (*index)[size_t(2 * slot + 1)];
  if (offset == kEmpty && nbytes == kEmpty) return std::make_shared<const std::vector<float>>();
  if (offset > uint64_t(f.size) || nbytes > uint64_t(f.size) - offset)
    throw IoError(where, "damaged shard: the index points at bytes " + std::to_string(offset) +
                             "+" + std::to_string(nbytes) + " of a " + std::to_string(f.size) +
                             "-byte shard");
  if (int64_t(nbytes) > storedCap_)
    throw IoError(where, "damaged shard: an inner chunk of " + std::to_string(nbytes) +
                             " bytes, more than any encoding of its " +
                             std::to_string(meta_.coding.decodedBytes) + " bytes takes");
  return decode(readRange(f.fd.get(), int64_t(offset), int64_t(nbytes), where), where);
}

}  // namespace stacklens::io
