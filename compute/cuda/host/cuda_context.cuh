// The CUDA backend's shared machinery (for compute/cuda/*.cu only): errors, the device context
// with its streams, memory pool and cuFFT plan cache, device buffers, and the operation entry
// points.
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "compute/backend.h"
#include "compute/cuda/host/page_locked_buffer.cuh"
#include "compute/cuda/tuning/transfers.cuh"
#include "compute/image.h"
#include "compute/job.h"
#include "compute/params.h"

namespace stacklens::compute::cuda {

// A CUDA runtime or cuFFT failure other than running out of memory.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device (or the memory budget) cannot hold what an operation needs; the backend splits the
// work into smaller pieces or falls back to the CPU when it sees this.
class DeviceOutOfMemory : public OutOfDeviceMemory {
 public:
  using OutOfDeviceMemory::OutOfDeviceMemory;
};

void throwCuda(cudaError_t err, const char* what, const char* file, int line);
void throwCufft(cufftResult err, const char* what, const char* file, int line);

#define SL_CUDA(call)                                                            \
  do {                                                                           \
    cudaError_t sl_err_ = (call);                                                \
    if (sl_err_ != cudaSuccess)                                                  \
      ::stacklens::compute::cuda::throwCuda(sl_err_, #call, __FILE__, __LINE__); \
  } while (0)
#define SL_CUFFT(call)                                                            \
  do {                                                                            \
    cufftResult sl_err_ = (call);                                                 \
    if (sl_err_ != CUFFT_SUCCESS)                                                 \
      ::stacklens::compute::cuda::throwCufft(sl_err_, #call, __FILE__, __LINE__); \
  } while (0)
// After a kernel launch: reports bad launch configurations at once (no synchronisation).
#define SL_LAUNCHED() SL_CUDA(cudaGetLastError())

// `device` is current for the scope, and then the one the thread was on again: a thread that lets
// go of another device's objects keeps working on its own (on hosts of several GPUs, the
// thread's next call would otherwise go to the wrong device).
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) noexcept {
    cudaGetDevice(&previous_);
    cudaSetDevice(device);
  }
  ~ScopedDevice() { cudaSetDevice(previous_); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

inline unsigned blocksFor(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

// One device, one compute stream per backend (one job at a time), a copy stream for staging,
// a stream-ordered memory pool and the cuFFT plans made so far. Shared (shared_ptr) by every
// device buffer it allocated, so buffers may outlive the backend object.
class Context {
 public:
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  const std::string& name() const { return name_; }
  // Bytes the backend plans to use at most: 80 % of the memory free when it started, or
  // STACKLENS_CUDA_BUDGET_MB (MiB) when smaller, or what setBudget() last set.
  size_t budget() const { return budget_; }
  // The memory pool's high-water mark of memory in use, in bytes.
  size_t peakBytes() const;
  // bytes == 0 restores the default (above); returns the budget now in force.
  size_t setBudget(size_t bytes);
  // Streams for host ↔ device copies that overlap the compute stream (the stack pipeline).
  cudaStream_t uploadStream() const { return copyStream_; }
  cudaStream_t downloadStream() const { return downloadStream_; }
  // Page-locked host memory for staging slot `slot` (0–3) of at least `bytes`, kept and grown as
  // needed for the context's life (allocating page-locked memory is slow). Not thread-safe.
  float* pinnedStaging(int slot, size_t bytes);
  int smCount() const { return smCount_; }

  // Raw stream-ordered allocation; throws DeviceOutOfMemory when the pool cannot grow.
  void* allocate(size_t bytes);
  void release(void* p);
  // Releases a block of `bytes` from allocate(), or keeps it for the next allocate() of that size
  // (see kept_).
  void release(void* p, size_t bytes);

  // A real-to-complex and a complex-to-real plan for one shape (2D when nz == 1), made once
  // and reused (the plan's work area comes from the pool and is shared by both directions).
  struct FftPlans {
    cufftHandle forward = 0, inverse = 0;
  };
  FftPlans& fftPlans(int64_t nz, int64_t ny, int64_t nx);
  void dropFftPlans();

  // State an operation keeps for the context's life under its own key (cuFFT plans with
  // callbacks, say); destroyed first in ~Context, while the streams still exist.
  struct Extension {
    virtual ~Extension() = default;
  };
  std::unique_ptr<Extension>& extension(const std::string& key) { return extensions_[key]; }

  // A device copy of small constant data (filter taps), made once per distinct content and kept
  // for the context's life, so repeated calls (slider steps) upload nothing.
  const float* constants(const std::vector<float>& values);

  // Returns once the work queued so far on `stream` (one of this device's) has finished, as
  // cudaStreamSynchronize does: polls for a short while (tuning::HostWaitPolicy), then sleeps
  // until the device signals, so that a long job does not keep a core busy.
  void waitFor(cudaStream_t stream) const;
  // The same for an event: polls, then waits with cudaEventSynchronize, which sleeps where the
  // event was made with cudaEventBlockingSync.
  void waitFor(cudaEvent_t event) const;

  // Host ↔ device copies through pinned staging (overlapping the host-side copy of one piece
  // with the DMA of the previous); ordered on stream().
  void upload(void* dst, const void* src, size_t bytes);
  // The same, calling landed(n) on the calling thread each time stream() has been made to wait
  // for the first n bytes to arrive (as pieces' DMAs are queued, or once for page-locked src),
  // so that work queued there from landed starts on the input's first part while the rest goes
  // up. An exception from landed ends the upload and is rethrown.
  void upload(void* dst, const void* src, size_t bytes,
              const std::function<void(size_t bytes)>& landed);
  void download(void* dst, const void* src, size_t bytes);

 private:
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaStream_t copyStream_ = nullptr;
  cudaStream_t downloadStream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  size_t budget_ = 0;
  size_t defaultBudget_ = 0;
  PageLockedBuffer pinned_[4];
  int smCount_ = 1;
  std::string name_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, FftPlans> plans_;
  std::map<std::string, std::unique_ptr<Extension>> extensions_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, void*> workAreas_;
  std::map<std::vector<float>, void*> constants_;
  static constexpr size_t kStagingBytes = tuning::TransferPolicy::stagingBytes;
  PageLockedBuffer staging_[2];
  cudaEvent_t stagingFree_[2] = {nullptr, nullptr};
  // upload()'s pieces: kUploadSlots slots at the start of the staging, then kLargeSlots larger
  // ones for large uploads; slot i of either size is free once the DMA recorded last on
  // uploadSlotFree_[i] has finished.
  static constexpr size_t kUploadPiece = tuning::TransferPolicy::pageableUploadPieceBytes;
  static constexpr int kUploadSlots = tuning::TransferPolicy::pageableUploadSlots;
  static constexpr size_t kLargePiece = tuning::TransferPolicy::uploadPieceBytes;
  static constexpr int kLargeSlots = tuning::TransferPolicy::largeUploadSlots;
  static_assert(kLargeSlots <= kUploadSlots && kStagingBytes % kLargePiece == 0 &&
                    kUploadPiece * kUploadSlots % kLargePiece == 0 &&
                    kUploadPiece * kUploadSlots + kLargePiece * kLargeSlots <= 2 * kStagingBytes,
                "the slots fit the staging buffers, none across two");
  cudaEvent_t uploadSlotFree_[kUploadSlots] = {};
  // cudaMallocAsync, or its refusal when the simulated capacity would be exceeded.
  cudaError_t poolAllocate(void** p, size_t bytes);
  // Fault injection for testing the out-of-memory paths (no real device runs out on demand):
  // STACKLENS_CUDA_SIMULATED_CAPACITY_MB=N (MiB, fractions allowed), read when a context is made,
  // makes allocate() fail exactly as a full device does once the bytes this context holds would
  // exceed N MiB. The budget is not derived from it, so plans made from the budget meet the
  // shortage as they would when another program takes the memory. 0 (unset): off, at no cost.
  // Its bookkeeping is untouched when it is off; release() may run on any thread, from the
  // deleters of buffers.
  size_t simulatedCapacity_ = 0;
  size_t liveBytes_ = 0;
  std::map<void*, size_t> liveSizes_;
  std::mutex liveMutex_;
  int nextUploadSlot_ = 0;  // where upload()'s next first piece goes
  // Blocks that buffers gave back, kept for the next allocate() of the same size: an operation
  // repeated on like inputs (slider steps, a bench) then reuses its output and scratch without the
  // pool's allocation and free on the host's path to the launch. An allocate() of any other size
  // frees them all first, so that the pool has as much memory in use at each of this context's
  // allocations as without them (its peak and the out-of-memory paths are unchanged). Reuse is
  // ordered on stream(), as the pool's own reuse of a block freed on stream() is.
  static constexpr size_t kKeptBlocks = 4;
  static constexpr size_t kKeptMaxBytes = size_t(256) << 20;
  std::mutex keptMutex_;
  std::vector<std::pair<void*, size_t>> kept_;
  void freeKept();
};

using ContextPtr = std::shared_ptr<Context>;

// A device buffer of shape `shape`, freed on the context's stream when its last copy goes.
template <class T>
Buffer<T> deviceBuffer(const ContextPtr& ctx, Shape shape) {
  if (shape.z < 0 || shape.y < 0 || shape.x < 0) throw InvalidArgument("negative shape");
  const size_t bytes = std::max(static_cast<size_t>(shape.count()) * sizeof(T), sizeof(T));
  T* p = static_cast<T*>(ctx->allocate(bytes));
  std::shared_ptr<T> storage(p, [ctx, bytes](T* q) { ctx->release(q, bytes); });
  return Buffer<T>(shape, Location::Cuda, std::move(storage));
}

// Scratch device memory for the length of one operation.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const ContextPtr& ctx, size_t count) : ctx_(ctx), count_(count) {
    p_ = static_cast<T*>(ctx->allocate(bytes()));
  }
  ~DeviceArray() {
    if (p_) ctx_->release(p_, bytes());
  }
  DeviceArray(DeviceArray&& o) noexcept : ctx_(std::move(o.ctx_)), p_(o.p_), count_(o.count_) {
    o.p_ = nullptr;
  }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(ctx_, o.ctx_);
    std::swap(p_, o.p_);
    std::swap(count_, o.count_);
    return *this;
  }
  T* get() const { return p_; }
  size_t size() const { return count_; }
  // The block's size: at least one element, so that an empty array still has an address.
  size_t bytes() const { return (count_ == 0 ? 1 : count_) * sizeof(T); }

 private:
  ContextPtr ctx_;
  T* p_ = nullptr;
  size_t count_ = 0;
};

// The input on the device: itself when already there, else an uploaded copy.
Image onDevice(const ContextPtr& ctx, const Image& in);

// Whether host memory is page-locked (cudaHostRegister or cudaMallocHost): a DMA then reads or
// writes it directly, with no staging copy.
bool pageLocked(const void* p);

// Polls `flag`, in mapped page-locked memory that a kernel sets last (after
// __threadfence_system()), for as long as Context::waitFor polls: true once it is non-zero, with
// what the kernel wrote before it visible here. A result read this way does not wait for the
// kernel's end and the stream's report of it; false (the time is up) leaves the caller to wait
// for the stream, which also reports a kernel that failed.
bool pollMappedFlag(const volatile int* flag);

// Reads n values from the device into host memory (synchronises the stream).
template <class T>
void readBack(const ContextPtr& ctx, T* host, const T* device, size_t n) {
  SL_CUDA(cudaMemcpyAsync(host, device, n * sizeof(T), cudaMemcpyDeviceToHost, ctx->stream()));
  ctx->waitFor(ctx->stream());
}

// The operations (inputs may be on the host or the device; results are on the device).
Image gaussianBlur(const ContextPtr& ctx, const Image& in, const BlurParams& p, const Job& job);
Image richardsonLucy(const ContextPtr& ctx, const Image& in, const Image& psf,
                     const DeconvolveParams& p, const Job& job);
// Richardson–Lucy frames that stay on the device and exchange halos there
// (compute/resident_frames.h; cuda_resident_frames.cu), or null where the frame has no fused
// passes or p asks for acceleration or TV. psf: as rlPsf gives it, on the host.
std::unique_ptr<ResidentRlFrames> residentFrames(const ContextPtr& ctx,
                                                 const ResidentLayout& layout, const Image& psf,
                                                 const DeconvolveParams& p);
// Device bytes Richardson–Lucy needs for one slice of `slice` deconvolved in 2D (its padded FFT
// frame times the solver's arrays), for planning how many slices fit the memory budget.
size_t richardsonLucySliceBytes(Shape slice, Shape psf, const DeconvolveParams& p);
ClipStats sigmaClip(const ContextPtr& ctx, const Image& in, const ClipParams& p, const Job& job);
// Sigma-clipped statistics of n device values (non-finite values ignored).
ClipStats sigmaClipValues(const ContextPtr& ctx, const float* values, int64_t n,
                          const ClipParams& p, const Job& job);
Segmentation segment(const ContextPtr& ctx, const Image& in, const SegmentParams& p,
                     const Job& job);
Image medianFilter(const ContextPtr& ctx, const Image& in, int size, const Job& job);
Image removeOutliers(const ContextPtr& ctx, const Image& in, const OutlierParams& p,
                     const Job& job);
Image resample(const ContextPtr& ctx, const Image& in, const ResampleParams& p, const Job& job);
Image project(const ContextPtr& ctx, const Image& in, const ProjectParams& p, const Job& job);
Image moment(const ContextPtr& ctx, const Image& in, const MomentParams& p, const Job& job);
Image renderVolume(const ContextPtr& ctx, const Image& volume, const VolumeRenderParams& p,
                   const Job& job);

// Shared parameter checks (same messages as the CPU backend's intent).
void checkMedianSize(int size);

}  // namespace stacklens::compute::cuda
