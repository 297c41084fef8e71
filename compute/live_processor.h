// Live processing for a scrubbing viewer: raw slices read once and kept where the backend
// computes, neighbours read ahead, the pipeline's result left on the backend (device for CUDA).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compute/pipeline.h"

namespace stacklens::compute {

// Where the raw slices come from (e.g. an io::StackReader): z slices of y × x float32 values.
struct SliceSource {
  Shape shape;
  Spacing spacing;
  // Writes slice z (y·x values) to out; throws on failure. Called from two threads at once (the
  // caller's and the read-ahead thread), so it must be thread-safe as io::StackReader is.
  std::function<void(int64_t z, float* out)> read;
};

// Host buffers of one shape in the backend's transfer-friendly memory (Backend::pinnedHost),
// recycled: an image handed out goes back to the free list when its last copy is released, and
// acquire() frees what exceeds maxFree (so no thread that merely drops an image frees one).
class HostBufferPool : public std::enable_shared_from_this<HostBufferPool> {
 public:
  HostBufferPool(std::shared_ptr<Backend> backend, Shape shape, size_t maxFree = 4);
  Image acquire();
  int allocations() const { return allocations_; }
  size_t freeBuffers() const;

 private:
  void giveBack(Image owner);
  std::shared_ptr<Backend> backend_;
  Shape shape_;
  size_t maxFree_;
  mutable std::mutex mutex_;
  std::vector<Image> free_;
  int allocations_ = 0;
};

class LiveProcessor {
 public:
  // rawBudgetBytes bounds the raw slices kept: their host copies plus, for a backend that
  // computes off the host, their uploads. The backend must be used by one thread at a time:
  // the one calling process() and download().
  // readerStart runs first on the read-ahead thread (e.g. to lower its priority).
  LiveProcessor(std::shared_ptr<Backend> backend, SliceSource source,
                size_t rawBudgetBytes = size_t(256) << 20, std::function<void()> readerStart = {});
  ~LiveProcessor();  // stops the read-ahead thread
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

  // Reads these slices (those not kept yet) into host memory on the read-ahead thread, in this
  // order, replacing earlier read-ahead requests. The backend is not touched: the upload, one
  // DMA from page-locked memory for CUDA, happens in process().
  void readAhead(const std::vector<int64_t>& zs);

  // A host copy of image (one DMA into a recycled page-locked buffer for CUDA; the image itself
  // when it is on the host already).
  Image download(const Image& image);

  Backend& backend() const { return *backend_; }
  const std::shared_ptr<Backend>& backendPtr() const { return backend_; }
  const SliceSource& source() const { return source_; }
  size_t rawBytes() const;        // host + device bytes of the kept raw slices
  size_t rawDeviceBytes() const;  // of those, on the device
  int rawSlices() const;
  bool kept(int64_t z) const;       // read (and possibly uploaded) already
  bool onBackend(int64_t z) const;  // uploaded to where the backend computes
  int fileReads() const;            // slices read from the source so far (either thread)

 private:
  struct Entry {
    enum class State { Reading, Ready, Failed } state = State::Reading;
    Image host, device;
    std::string error;
  };
  // Slice z on the host, reading it now or waiting for the read-ahead; the lock is held on return.
  Entry& hostSlice(std::unique_lock<std::mutex>& lock, int64_t z);
  void readerLoop();
  void trim(int64_t keepFrom, int64_t keepTo);  // mutex held
  size_t entryBytes(const Entry& e) const;

  std::shared_ptr<Backend> backend_;
  SliceSource source_;
  size_t budget_;
  std::shared_ptr<HostBufferPool> rawPool_, resultPool_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int64_t, Entry> entries_;
  std::list<int64_t> lru_;  // most recently used first
  std::deque<int64_t> queue_;
  size_t bytes_ = 0, deviceBytes_ = 0;
  int fileReads_ = 0;
  bool stop_ = false;
  std::thread reader_;
};

}  // namespace stacklens::compute
