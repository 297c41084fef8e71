// The levels of a multiscale OME-Zarr image after the first, made from the level before.
#pragma once

#include "io/stack.h"
#include "io/zarr_array_writer.h"

namespace stacklens::io {

// Writes into `to` the level after the one `from` reads: each sample the mean of the (up to)
// 2 × 2 samples in y and x it covers, NaN samples left out (all four NaN: NaN), z kept; an odd
// last row or column averages the samples it has. Read and written in bands of `to`'s chunk
// rows, several slices at once. Throws IoError naming target; stops between bands once the
// writers are stopped (io/write_stop.h).
void writeHalvedLevel(const StackReader& from, ZarrArrayWriter& to, const std::string& target);

}  // namespace stacklens::io
