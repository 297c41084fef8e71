// The decoded chunks of one Zarr array, read from its store (a local folder or an HTTP(S) URL) on
// demand: plain chunk objects, or inner chunks read by byte range out of v3 shards through the
// shard's index. Decoded chunks and shard indexes are kept in bounded caches, whichever the
// store. Safe to use from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/zarr_chunk_bytes.h"
#include "io/zarr_chunk_cache.h"
#include "io/zarr_metadata.h"
#include "io/zarr_store.h"

namespace stacklens::io {

class ZarrChunkSource {
 public:
  ZarrChunkSource(std::shared_ptr<const ZarrStore> store, ZarrArrayMeta meta, int64_t cacheBytes);

  const ZarrArrayMeta& meta() const { return meta_; }
  const ZarrStore& store() const { return *store_; }
  // Element strides, per chunk axis, into a decoded chunk (which is in stored order).
  const std::vector<int64_t>& strides() const { return strides_; }

  // The decoded chunk at grid coordinates, in its stored data type and byte order (converted to
  // float32 as it is copied out: convertZarrElements), so that the cache holds as many chunks as
  // their size allows; an empty vector where the chunk (or its shard) is not stored, which reads
  // as the fill value. Throws IoError naming the chunk's key.
  std::shared_ptr<const ZarrChunkBytes> chunk(const std::vector<int64_t>& grid) const;

 private:
  std::shared_ptr<const ZarrChunkBytes> readPlain(const std::vector<int64_t>& grid) const;
  std::shared_ptr<const ZarrChunkBytes> readInner(const std::vector<int64_t>& grid) const;
  // The shard's index of (offset, length) pairs followed by the shard's size in bytes; empty
  // where the shard is not stored.
  std::shared_ptr<const std::vector<uint64_t>> shardIndex(const std::string& key) const;
  std::shared_ptr<const ZarrChunkBytes> decode(const std::vector<unsigned char>& stored,
                                               const std::string& where) const;

  std::shared_ptr<const ZarrStore> store_;
  ZarrArrayMeta meta_;
  std::vector<int64_t> grid_, strides_;
  int64_t storedCap_ = 0;  // the most bytes any encoding of one chunk can take
  std::shared_ptr<ZarrSpareBuffers> spares_;
  mutable ZarrChunkCache<ZarrChunkBytes> chunks_;
  mutable ZarrChunkCache<std::vector<uint64_t>> indexes_;
};

}  // namespace stacklens::io
