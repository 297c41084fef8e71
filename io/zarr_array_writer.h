// One Zarr array of a StackLens OME-Zarr image, written chunk by chunk as boxes of it arrive.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/ome_zarr_metadata_writer.h"

namespace stacklens::io {

// Boxes come in any order, from several threads at once, and must not overlap. A chunk is
// encoded (io/zarr_chunk_encoder.h) and written as soon as all of its samples have arrived;
// in a sharded array "chunk" here means the stored object, the shard (io/zarr_shard_encoder.h),
// which waits whole in the same way and is written without the inner chunks all of fill (and
// not at all when every one is);
// until then its samples wait in a buffer of one whole chunk (the samples not yet arrived hold
// the fill value). So a box that covers whole chunks never waits, and a chunk straddling boxes
// waits for the last of them: for slabs of whole slices, the chunks of the slab's last, partly
// written, chunk layer (chunk depth × y × x samples).
//
// Memory is bounded: once the waiting buffers hold more than pendingCap bytes, a chunk a box has
// just added to (and is still incomplete) goes to a file in scratch and is read back when its next
// box arrives. finish() writes the chunks still incomplete (boxes left samples out: those read as
// the fill value); chunks no box touched are not written and read as the fill value too.
// Throws IoError naming target.
class ZarrArrayWriter {
 public:
  ZarrArrayWriter(const std::string& folder, const std::string& scratch, const std::string& target,
                  const OmeZarrLayout& layout, size_t level, int64_t pendingCap);
  ~ZarrArrayWriter();
  ZarrArrayWriter(const ZarrArrayWriter&) = delete;
  ZarrArrayWriter& operator=(const ZarrArrayWriter&) = delete;

  const std::array<int64_t, 3>& shape() const { return shape_; }
  // The stored objects' shape: the shards of a sharded array, else the chunks.
  const std::array<int64_t, 3>& chunks() const { return chunks_; }
  // Box [z0, z1) × [y0, y1) × [x0, x1) of 4-byte samples (float32 or int32 as the layout says),
  // C order, x fastest.
  void writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                const void* data);
  void finish();
  // Each chunk file on a network file system is flushed once written: for a writer in another
  // process, whose chunks the committing process's flush does not reach from another host.
  void syncEachChunk() { sync_ = true; }
  // How many chunks went to scratch files at least once (for the tests of the bound).
  int64_t spills() const { return spills_.load(); }

 private:
  struct Pending;
  std::shared_ptr<Pending> pendingFor(int64_t index);
  void complete(int64_t index, Pending& p);
  void spill(int64_t index, Pending& p);
  void reload(int64_t index, Pending& p);
  void store(int64_t index, const std::vector<uint32_t>& values);
  std::array<int64_t, 3> gridOf(int64_t index) const;
  int64_t samplesInside(const std::array<int64_t, 3>& grid) const;

  std::string folder_, scratch_, target_;
  ZarrArrayMeta keys_;
  size_t level_;
  std::array<int64_t, 3> shape_, chunks_, grid_;
  std::array<int64_t, 3> inner_{};  // a sharded array's chunks inside each shard; else 0
  int64_t chunkSamples_ = 0, pendingCap_ = 0;
  uint32_t fill_ = 0;
  bool nanFill_ = false;  // float32: any NaN is the fill value (a shard's inner chunks all NaN)
  std::mutex lock_;       // pending_ and done_
  std::unordered_map<int64_t, std::shared_ptr<Pending>> pending_;
  std::vector<uint8_t> done_;  // per chunk: written
  std::atomic<int64_t> held_{0}, spills_{0};
  bool finished_ = false;
  bool sync_ = false;
};

// The most partial-chunk bytes a writer holds in memory by default: a quarter of the allocation
// cap (io/file_checks.h), at most 2 GiB.
int64_t defaultZarrPendingBytes();

}  // namespace stacklens::io
