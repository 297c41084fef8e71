// The bookkeeping of a backend that computes on a device, apart from its operations: the device's
// own timings, chunk counts and peak memory, the memory budget, page-locked host buffers,
// transfers that overlap computing, and the thread binding. Only the live path, the whole-stack
// runs and the timing panel need it; Backend::device() gives it. A backend that computes on the
// host gets the defaults, which do nothing or plain memory copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "compute/block_transfers.h"
#include "compute/image.h"

namespace stacklens::compute {

class DeviceControl {
 public:
  virtual ~DeviceControl() = default;

  // Device time of the last operation in ms as the device measured it (e.g. CUDA events), or a
  // negative value when there is no device clock or timeOperations(true) was not asked for.
  virtual double lastDeviceMs() const { return -1.0; }
  // Whether the operations from now on are timed for lastDeviceMs() (off at the start). The
  // clock's marks sit on each launch's path, so callers that do not read them (the command-line
  // tool, Python) do not pay for them; the timing panel, the lab and the benchmarks turn it on.
  virtual void timeOperations(bool on) { (void)on; }
  // Device memory the operations plan to use at most, in bytes (0 restores the default: 80 % of
  // the memory free when the backend started, or STACKLENS_CUDA_BUDGET_MB MiB when smaller);
  // returns the budget now in force (0 without a device).
  virtual size_t setMemoryBudget(size_t bytes) {
    (void)bytes;
    return 0;
  }
  // Chunks of slices the last per-slice operation on a host stack went through the device in (1:
  // one piece, or not chunked); for a device stack that did not fit whole, the groups of slices
  // it was split into.
  virtual int lastChunkCount() const { return 1; }
  // The most device memory the operations have held at once, in bytes (CUDA: the high-water mark
  // of its memory pool; cuFFT's own plan memory is not in it); 0 without a device.
  virtual size_t devicePeakBytes() const { return 0; }
  // Whether an operation that does not fit on the device even in pieces runs on the CPU instead
  // (the default, said through compute/log.h) or throws OutOfDeviceMemory (whole-stack runs plan
  // smaller blocks first).
  virtual void setCpuFallback(bool allowed) { (void)allowed; }

  // Live slices (compute/slice_store.h, compute/pixel_pool.h): transfers without a staging copy.
  // Page-locks an existing host buffer (CUDA: cudaHostRegister) so that transfers to and from it
  // are one DMA, until unpinHostMemory(p); false when there is no such memory or it failed
  // (transfers then stage). Slow: for buffers that are kept and reused.
  virtual bool pinHostMemory(void* p, size_t bytes) {
    (void)p;
    (void)bytes;
    return false;
  }
  virtual void unpinHostMemory(void* p) { (void)p; }
  // Queues the copy of a host image to the device and returns at once; later operations and
  // synchronize() see the data. The source must stay unchanged until then (the result keeps it
  // alive). Without a page-locked source it waits, as Backend::upload().
  virtual Image uploadAsync(const Image& image) { return image; }
  // The slices (each 1 × y × x, of one shape, where this backend computes or on the host) stacked
  // in order into one image where this backend computes: the live path's 3D slab, made from the
  // slices it has uploaded already (CUDA: copies on the device, queued; no host round trip).
  virtual Image stackSlices(const std::vector<Image>& slices);
  // Copies image (any location) into host, a host buffer of the same shape (e.g. a PixelPool
  // vector page-locked for this backend), and waits for the copy.
  virtual void downloadInto(const Image& image, Image& host);
  // Rows 0, step, 2·step, ... of image's slice z as a host image: a cheap sample of a device
  // result (display limits) without downloading all of it.
  virtual Image downloadRows(const Image& image, int64_t z, int64_t step);

  // Whole-stack runs (compute/blocked/): copies that overlap computing.
  virtual std::unique_ptr<BlockTransfers> blockTransfers() {
    return std::make_unique<HostBlockTransfers>();
  }
  // Makes the calling thread's work go to this device (CUDA: cudaSetDevice); call it first on a
  // thread other than the one that made the backend.
  virtual void bindToThisThread() {}
};

// The shape of slices stacked by stackSlices (InvalidArgument when none, or their shapes differ).
Shape stackedShape(const std::vector<Image>& slices);

// The defaults, for a backend that computes on the host (stateless, shared).
DeviceControl& hostDeviceControl();

// A host image page-locked for one device while this lives (DeviceControl::pinHostMemory), as the
// viewer's slices are: the benches and the speedup lab time "with transfers" on the same path.
class PinnedWhileAlive {
 public:
  PinnedWhileAlive(DeviceControl& device, const Image& host)
      : device_(device),
        data_(host.onHost() && !host.empty() ? const_cast<float*>(host.data()) : nullptr),
        pinned_(data_ && device.pinHostMemory(data_, host.bytes())) {}
  ~PinnedWhileAlive() {
    if (pinned_) device_.unpinHostMemory(data_);
  }
  PinnedWhileAlive(const PinnedWhileAlive&) = delete;
  PinnedWhileAlive& operator=(const PinnedWhileAlive&) = delete;
  bool pinned() const { return pinned_; }

 private:
  DeviceControl& device_;
  float* data_;
  bool pinned_;
};

}  // namespace stacklens::compute
