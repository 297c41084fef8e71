// writeBoxIntoPreparedZarr: whole chunks of a box, written by the process that computed it.
#include "io/prepared_zarr_boxes.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "io/io_error.h"
#include "io/zarr_array_writer.h"
#include "io/zarr_chunk_key.h"

namespace stacklens::io {
namespace {

// Whether [start, end) along an axis of length n covers whole chunks of size c.
bool onTheGrid(int64_t start, int64_t end, int64_t c, int64_t n) {
  return start % c == 0 && (end % c == 0 || end == n);
}

}  // namespace

void writeBoxIntoPreparedZarr(const PreparedBlockFile& f, const Box& b, const float* data,
                              int64_t rowStride, int64_t sliceStride) {
  const auto [cz, cy, cx] = f.zarrChunks;
  if (cz < 1 || cy < 1 || cx < 1) throw IoError(f.target, "the prepared output has no chunks");
  OmeZarrLayout layout;
  layout.omeVersion = f.zarrVersion;
  layout.shapes = {{f.z, f.y, f.x}};
  layout.chunks = f.zarrChunks;
  layout.shards = f.zarrShards;
  const auto [oz, oy, ox] = layout.levelObjects(0);
  if (!onTheGrid(b.z0, b.z1, oz, f.z) || !onTheGrid(b.y0, b.y1, oy, f.y) ||
      !onTheGrid(b.x0, b.x1, ox, f.x)) {
    // The object the box cuts: the one holding its first sample when that is off the grid, else
    // the one holding its last.
    const bool startOff = b.z0 % oz != 0 || b.y0 % oy != 0 || b.x0 % ox != 0;
    const std::vector<int64_t> cut =
        startOff ? std::vector<int64_t>{b.z0 / oz, b.y0 / oy, b.x0 / ox}
                 : std::vector<int64_t>{(b.z1 - 1) / oz, (b.y1 - 1) / oy, (b.x1 - 1) / ox};
    const std::string what = layout.sharded() ? "shard" : "chunk";
    throw IoError(f.target, "a box of another process must cover whole " + what + "s of " +
                                std::to_string(oz) + " x " + std::to_string(oy) + " x " +
                                std::to_string(ox) + " (rechunk to multiples of them); box [" +
                                std::to_string(b.z0) + ":" + std::to_string(b.z1) + ", " +
                                std::to_string(b.y0) + ":" + std::to_string(b.y1) + ", " +
                                std::to_string(b.x0) + ":" + std::to_string(b.x1) + "] cuts " +
                                what + " " + zarrChunkKey(layout.keyMeta(), cut));
  }
  // Level 0's folder is made with the metadata; once the preparing process removed the output's
  // temporary folder, a late box must fail rather than make it again.
  struct stat st {};
  const std::string level0 = f.path + "/0";
  if (::stat(level0.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw IoError(f.target, "cannot find the prepared folder " + level0 + ": " +
                                std::strerror(errno) +
                                " (the run was stopped, or this worker does not see the output's "
                                "folder)");
  // A box of whole chunks (or shards) completes each chunk it touches at once: nothing waits or
  // spills.
  ZarrArrayWriter level(f.path, f.path, f.target, layout, 0, 0);
  level.syncEachChunk();
  const int64_t bz = b.z1 - b.z0, by = b.y1 - b.y0, bx = b.x1 - b.x0;
  if ((rowStride <= 0 || rowStride == bx) && (sliceStride <= 0 || sliceStride == by * bx)) {
    level.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, data);
    return;
  }
  const int64_t rows = rowStride > 0 ? rowStride : bx;
  const int64_t slices = sliceStride > 0 ? sliceStride : by * rows;
  std::vector<float> packed(size_t(bz * by * bx));
  for (int64_t z = 0; z < bz; ++z)
    for (int64_t y = 0; y < by; ++y)
      std::memcpy(packed.data() + (z * by + y) * bx, data + z * slices + y * rows,
                  size_t(bx) * sizeof(float));
  level.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, packed.data());
}

}  // namespace stacklens::io
