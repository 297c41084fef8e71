// Writing a stack as an OME-Zarr image (a folder OUT.zarr or OUT.ome.zarr): NGFF 0.5 in Zarr v3 or
// 0.4 in Zarr v2 (WriteOptions::zarr), axes z, y, x with the voxel spacing and units, HISTORY in
// the "stacklens" attribute, float32 (or int32 labels), chunked and blosc/zstd compressed,
// optionally with a pyramid of levels each half the last in y and x, and optionally (0.5 only)
// sharded: ZarrWriteOptions::shards groups the chunks into one file per shard (the v3
// sharding_indexed codec, io/zarr_shard_encoder.h), every level with the same shards clipped to
// its whole chunks.
//
// Not sharded by default: readers without sharding (zarr-python 2, Debian's python3-zarr, tools
// built on them) could not open the output, and the streaming writers hold a shard whole until its
// last sample arrives, so large shards cost memory (or scratch files) that chunks do not. Shards
// are for the outputs where file counts hurt: millions of chunk files on a cluster file system or
// an object store.
//
// Everything but the compression (libblosc, io/zarr_chunk_encoder.h) is written here by hand:
// Debian packages no C or C++ Zarr library, and this one layout (a group, a few 3D arrays, regular
// chunks) needs only JSON metadata and chunk files named by io/zarr_chunk_key.h.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "io/atomic_folder.h"
#include "io/ome_zarr_metadata_writer.h"
#include "io/stack_writer.h"

namespace stacklens::io {

class ZarrArrayWriter;

// The default chunks of a z × y × x stack: 1 × 512 × 512 for a single image; 16 × 256 × 256 for
// a stack (clipped to its shape). Not NGFF's usual 64 in z: the viewer reads slice by slice and
// the streaming writers deliver slabs of slices, so a thin chunk layer keeps both a slice's read
// and the partial chunks waiting for a slab's next slices (io/zarr_array_writer.h) small, while
// 4 MiB chunks still compress well.
std::array<int64_t, 3> defaultZarrChunks(int64_t z, int64_t y, int64_t x);

// Level 0 is written as boxes arrive (writeBox, from several threads at once, boxes disjoint);
// commit() writes the chunks still partial, makes each further level from the one before read
// back (io/zarr_pyramid.h) and renames the folder into place (io/atomic_folder.h). Until then
// everything is in a temporary folder beside the output, removed when the writer goes
// uncommitted. The metadata is written first, so that the levels can be read back. Throws
// IoError naming path: a version other than 0.4 and 0.5, chunks too large to read back, levels
// beyond the point where a level is one pixel, or levels of labels.
class ZarrStackWriter {
 public:
  ZarrStackWriter(const std::string& path, int64_t z, int64_t y, int64_t x, bool int32,
                  const WriteOptions& options);
  ~ZarrStackWriter();
  ZarrStackWriter(const ZarrStackWriter&) = delete;
  ZarrStackWriter& operator=(const ZarrStackWriter&) = delete;

  const OmeZarrLayout& layout() const { return layout_; }
  // Where the image is built until commit() (io/atomic_folder.h): for writers in other processes.
  const std::string& tempFolder() const { return folder_.tempPath(); }
  // 4-byte samples (float32, or int32 for labels), C order.
  void writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                const void* data);
  void commit();
  // Partial chunks set aside in files so far (io/zarr_array_writer.h).
  int64_t spills() const;

 private:
  std::string path_;
  OmeZarrLayout layout_;
  int64_t pendingBytes_ = 0;
  AtomicFolder folder_;
  std::unique_ptr<ZarrArrayWriter> level0_;
  bool committed_ = false;
};

// The whole stack in one call (writeStack, writeLabelStack): chunk layers written on a few threads.
void writeZarrStack(const std::string& path, const void* data, bool int32, int64_t z, int64_t y,
                    int64_t x, const WriteOptions& options);

}  // namespace stacklens::io
