// Chunk key encodings of Zarr v2 and v3.
#include "io/zarr_chunk_key.h"

namespace stacklens::io {

std::string zarrChunkKey(const ZarrArrayMeta& meta, const std::vector<int64_t>& grid) {
  std::string key = meta.keyPrefixC ? "c" : "";
  for (size_t i = 0; i < grid.size(); ++i) {
    if (i > 0 || meta.keyPrefixC) key += meta.keySeparator;
    key += std::to_string(grid[i]);
  }
  return key;
}

}  // namespace stacklens::io
