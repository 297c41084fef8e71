// The decoded chunks of one Zarr array, read from its folder on demand: plain chunk files, or
// inner chunks read by byte range out of v3 shards through the shard's index. Decoded chunks and
// shard indexes are kept in bounded caches. Safe to use from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/zarr_chunk_cache.h"
#include "io/zarr_metadata.h"

namespace stacklens::io {

class ZarrChunkSource {
 public:
  ZarrChunkSource(ZarrArrayMeta meta, int64_t cacheBytes);

  const ZarrArrayMeta& meta() const { return meta_; }
  // The read grid: chunks (inner chunks when sharded) along each axis.
  const std::vector<int64_t>& gridShape() const { return grid_; }
  // Element strides, per chunk axis, into a decoded chunk (which is in stored order).
  const std::vector<int64_t>& strides() const { return strides_; }

  // The decoded chunk at grid coordinates, as float32; an empty vector where the chunk (or its
  // shard) is not stored, which reads as the fill value. Throws IoError naming the chunk's key.
  std::shared_ptr<const std::vector<float>> chunk(const std::vector<int64_t>& grid) const;

 private:
  std::shared_ptr<const std::vector<float>> readPlain(const std::vector<int64_t>& grid) const;
  std::shared_ptr<const std::vector<float>> readInner(const std::vector<int64_t>& grid) const;
  std::shared_ptr<const std::vector<uint64_t>> shardIndex(const std::string& key, int fd,
                                                          int64_t size) const;
  std::shared_ptr<const std::vector<float>> decode(std::vector<unsigned char> stored,
                                                   const std::string& where) const;

  ZarrArrayMeta meta_;
  std::vector<int64_t> grid_, strides_;
  int64_t storedCap_ = 0;  // the most bytes any encoding of one chunk can take
  mutable ZarrChunkCache<float> chunks_;
  mutable ZarrChunkCache<uint64_t> indexes_;
};

}  // namespace stacklens::io
