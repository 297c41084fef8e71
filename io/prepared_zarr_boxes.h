// Boxes from other processes (Dask workers) into the level-0 chunks of an OME-Zarr output that a
// StackBlockWriter prepared (io/prepared_block_file.h, BlockSamples::ZarrFloat32).
#pragma once

#include <cstdint>

#include "io/block_boxes.h"
#include "io/prepared_block_file.h"

namespace stacklens::io {

// Encodes box b (rows and slices rowStride and sliceStride floats apart; 0: C order) into the
// whole chunks (or shards, for a sharded output) it covers and writes each as a file of the
// prepared folder (flushed before it returns on a network file system). Throws IoError naming the
// output: a box off the chunk (shard) grid, naming the chunk (shard) it cuts, or
// a folder that is gone (the run was stopped, or this process does not see the output's folder).
void writeBoxIntoPreparedZarr(const PreparedBlockFile& f, const Box& b, const float* data,
                              int64_t rowStride, int64_t sliceStride);

}  // namespace stacklens::io
