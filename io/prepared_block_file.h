// Boxes written into a block file that another process prepared (Dask workers writing their own
// chunks of the output, with nothing passing through the client).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace stacklens::io {

// How a block file stores its samples.
enum class BlockSamples : int { FitsFloat32, TiffFloat32, TiffUInt16, ZarrFloat32 };

// Where a prepared block file lies and where its samples go: what a writer in another process
// needs (StackBlockWriter::prepared(), io/block_writer.h). Plain values, so that it can travel.
// An OME-Zarr output (ZarrFloat32) is a temporary folder with its metadata written; each box is
// encoded into the level-0 chunks it covers, which must be whole: a box starts on the chunk grid
// and ends on it or at the stack's end (a chunk shared by two boxes would need both, and they may
// come from two processes). A sharded output's boxes cover whole shards in the same way: one
// process writes each shard file.
struct PreparedBlockFile {
  std::string path;    // the temporary file (or Zarr folder), absolute (the workers' may differ)
  std::string target;  // the output it becomes, for the errors
  int64_t z = 0, y = 0, x = 0;
  int64_t dataStart = 0;  // the first sample's offset
  int64_t fileBytes = 0;  // the file's length as prepared: a file of another length is not it
  BlockSamples samples = BlockSamples::FitsFloat32;
  std::string zarrVersion;              // ZarrFloat32: "0.4" or "0.5"
  std::array<int64_t, 3> zarrChunks{};  // ZarrFloat32: level 0's chunks (z, y, x)
  std::array<int64_t, 3> zarrShards{};  // ZarrFloat32: level 0's shards; 0: not sharded
};

// Box [z0, z1) × [y0, y1) × [x0, x1) (x fastest; rowStride and sliceStride floats apart, 0: C
// order, e.g. the interior of a larger block written without a copy) into the prepared file, from
// any process that sees its path, at the same time as other boxes from other processes (boxes must
// not overlap). Opens the file (never creates it: once the preparing process removed it, a late
// box fails instead of leaving a file behind), writes the box into it mapped in memory where the
// file system can reserve the box's blocks (else by pwrite, one write per row of the box, so that
// boxes sharing rows need no lock), and closes it; on a network file system the box is flushed
// before it returns (the preparing process's flush does not reach another host's cache). Throws
// IoError naming the output.
void writeBoxIntoPreparedFile(const PreparedBlockFile& file, int64_t z0, int64_t z1, int64_t y0,
                              int64_t y1, int64_t x0, int64_t x1, const float* data,
                              int64_t rowStride = 0, int64_t sliceStride = 0);

}  // namespace stacklens::io
