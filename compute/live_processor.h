// Live processing for a scrubbing viewer: raw slices taken from the stack's SliceStore (read once,
// read ahead, uploaded once, under its one byte budget), the pipeline's result left on the backend
// (device for CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "compute/pipeline.h"
#include "compute/pixel_pool.h"
#include "compute/slice_store.h"

namespace stacklens::compute {

class LiveProcessor {
 public:
  // The raw slices come from store, which the viewer may share. The backend must be used by one
  // thread at a time: the one calling process() and download().
  LiveProcessor(std::shared_ptr<Backend> backend, std::shared_ptr<SliceStore> store);
  // A store of its own, of budgetBytes, over source; readerStart runs first on its read-ahead
  // thread (e.g. to lower its priority).
  LiveProcessor(std::shared_ptr<Backend> backend, RawSliceReader source,
                size_t budgetBytes = size_t(256) << 20, std::function<void()> readerStart = {});
  LiveProcessor(const LiveProcessor&) = delete;
  LiveProcessor& operator=(const LiveProcessor&) = delete;

  struct Frame {
    // The pipeline's result: result.image stays where the backend computes (Location::Cuda for
    // the CUDA backend, no download). result.readMs: waiting for the file (0 when read ahead);
    // uploadMs: queueing the upload of slices not yet on the backend and waiting for it.
    PipelineResult result;
    Image raw;  // the unprocessed slice z on the host (shared, not copied)
  };
  // Runs pipeline on slice z (a slab of ±pipeline.slabHalfWidth() slices for 3D stages; 2D
  // pipelines use the slice uploaded once, 3D slabs are assembled on the host and uploaded).
  // Throws Cancelled, InvalidArgument, or what the source throws (naming the file).
  Frame process(int64_t z, const Pipeline& pipeline, const Job& job = {});

  // The store reads these slices ahead (SliceStore::readAhead). The backend is not touched: the
  // upload, one DMA from page-locked memory for CUDA, happens in process().
  void readAhead(const std::vector<int64_t>& zs) { store_->readAhead(zs); }

  // A host copy of image (one DMA into a recycled page-locked vector for CUDA; the image itself
  // when it is on the host already).
  Image download(const Image& image);

  const RawSliceReader& source() const { return store_->source(); }
  const std::shared_ptr<SliceStore>& store() const { return store_; }
  size_t rawBytes() const { return store_->bytes(); }  // host + device bytes of the kept slices
  size_t rawDeviceBytes() const { return store_->deviceBytes(); }  // of those, on the device
  int rawSlices() const { return static_cast<int>(store_->count()); }
  bool kept(int64_t z) const { return store_->contains(z); }       // read (maybe uploaded) already
  bool onBackend(int64_t z) const { return store_->uploaded(z); }  // uploaded
  int fileReads() const { return store_->fileReads(); }  // slices read from the source so far

 private:
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<SliceStore> store_;
  std::shared_ptr<PixelPool> resultPool_;  // host copies of results, page-locked
};

}  // namespace stacklens::compute
