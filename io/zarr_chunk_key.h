// Zarr chunk keys: where the chunk at given grid coordinates is stored inside the array's folder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/zarr_metadata.h"

namespace stacklens::io {

// v2: "1.0.3" or "1/0/3"; v3 default encoding: "c/1/0/3" (or "c.1.0.3"); v3 "v2" encoding as v2.
std::string zarrChunkKey(const ZarrArrayMeta& meta, const std::vector<int64_t>& grid);

}  // namespace stacklens::io
