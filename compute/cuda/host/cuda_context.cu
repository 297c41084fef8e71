// The CUDA device context: streams, the stream-ordered memory pool, pinned staging and cuFFT plans.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/host/host_copy.cuh"
#include "compute/cuda/tuning/host_wait.cuh"
#include "compute/driver_release.h"
#include "compute/log.h"

namespace stacklens::compute::cuda {

void throwCuda(cudaError_t err, const char* what, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so the context stays usable
  std::ostringstream msg;
  msg << "CUDA error in " << what << " (" << file << ":" << line
      << "): " << cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) throw DeviceOutOfMemory(msg.str());
  throw CudaError(msg.str());
}

void throwCufft(cufftResult err, const char* what, const char* file, int line) {
  std::ostringstream msg;
  msg << "cuFFT error " << static_cast<int>(err) << " in " << what << " (" << file << ":" << line
      << ")";
  if (err == CUFFT_ALLOC_FAILED) throw DeviceOutOfMemory(msg.str());
  throw CudaError(msg.str());
}

namespace {

// The driver's release, or the CUDA version it supports where the release cannot be read.
std::string driverText() {
  std::string release = driverRelease();
  if (!release.empty()) return release;
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0)
    return "CUDA " + std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  return "unknown";
}

}  // namespace

Context::Context() {
  // Read first: a bad value is refused before anything is allocated.
  if (const char* mb = std::getenv("STACKLENS_CUDA_SIMULATED_CAPACITY_MB")) {
    char* end = nullptr;
    const double v = std::strtod(mb, &end);
    if (end == mb || *end != '\0' || !(v > 0) || !(v < 1e9))
      throw InvalidArgument(
          std::string("STACKLENS_CUDA_SIMULATED_CAPACITY_MB must be a positive number of MiB "
                      "(got '") +
          mb + "')");
    simulatedCapacity_ = static_cast<size_t>(v * double(1 << 20));
    logMessage(LogLevel::Info, "simulating a GPU of " + std::to_string(v) +
                                   " MiB (STACKLENS_CUDA_SIMULATED_CAPACITY_MB) to test the "
                                   "out-of-memory handling");
  }
  SL_CUDA(cudaGetDevice(&device_));
  cudaDeviceProp prop{};
  SL_CUDA(cudaGetDeviceProperties(&prop, device_));
  smCount_ = prop.multiProcessorCount;
  name_ = std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
          std::to_string(prop.minor) + ", driver " + driverText() + ")";
  // With several devices visible, which one (as CUDA_VISIBLE_DEVICES numbers them).
  int visible = 1;
  if (cudaGetDeviceCount(&visible) == cudaSuccess && visible > 1)
    name_ = "GPU " + std::to_string(device_) + ": " + name_;
  SL_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  SL_CUDA(cudaStreamCreateWithFlags(&copyStream_, cudaStreamNonBlocking));
  SL_CUDA(cudaStreamCreateWithFlags(&downloadStream_, cudaStreamNonBlocking));
  SL_CUDA(cudaDeviceGetDefaultMemPool(&pool_, device_));
  // Keep freed blocks in the pool: operations reallocate the same sizes on every slider step.
  uint64_t keep = UINT64_MAX;
  SL_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  size_t freeBytes = 0, totalBytes = 0;
  SL_CUDA(cudaMemGetInfo(&freeBytes, &totalBytes));
  budget_ = freeBytes / 10 * 8;
  // A smaller budget on request (to leave room for other programs, and to test the splitting).
  if (const char* mb = std::getenv("STACKLENS_CUDA_BUDGET_MB")) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(mb, &end, 10);
    if (end && *end == '\0' && v > 0) budget_ = std::min<size_t>(budget_, size_t(v) << 20);
  }
  defaultBudget_ = budget_;
  for (int i = 0; i < 2; ++i) {
    staging_[i] = PageLockedBuffer(kStagingBytes, device_);
    SL_CUDA(cudaEventCreateWithFlags(&stagingFree_[i], cudaEventDisableTiming));
  }
  for (cudaEvent_t& e : uploadSlotFree_)
    SL_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  kept_.reserve(kKeptBlocks);
}

Context::~Context() {
  const ScopedDevice on(device_);
  cudaStreamSynchronize(stream_);
  cudaStreamSynchronize(copyStream_);
  cudaStreamSynchronize(downloadStream_);
  extensions_.clear();
  for (auto& [shape, p] : plans_) {
    cufftDestroy(p.forward);
    cufftDestroy(p.inverse);
  }
  for (auto& [shape, area] : workAreas_) release(area);
  for (auto& [values, p] : constants_) release(p);
  freeKept();
  cudaStreamSynchronize(stream_);
  for (int i = 0; i < 2; ++i) cudaEventDestroy(stagingFree_[i]);
  for (cudaEvent_t e : uploadSlotFree_) cudaEventDestroy(e);
  cudaStreamDestroy(downloadStream_);
  cudaStreamDestroy(copyStream_);
  cudaStreamDestroy(stream_);
  // Give the pooled memory back to the driver for other processes.
  cudaMemPoolTrimTo(pool_, 0);
}

size_t Context::setBudget(size_t bytes) {
  budget_ = bytes == 0 ? defaultBudget_ : bytes;
  return budget_;
}

float* Context::pinnedStaging(int slot, size_t bytes) {
  if (slot < 0 || slot >= 4) throw InvalidArgument("pinnedStaging: slot out of range");
  if (pinned_[slot].bytes() < bytes) {
    // The old buffer may still be the source or target of a copy on either copy stream.
    SL_CUDA(cudaStreamSynchronize(copyStream_));
    SL_CUDA(cudaStreamSynchronize(downloadStream_));
    pinned_[slot].reserve(bytes, device_);
  }
  return static_cast<float*>(pinned_[slot].data());
}

cudaError_t Context::poolAllocate(void** p, size_t bytes) {
  if (simulatedCapacity_ == 0) return cudaMallocAsync(p, bytes, pool_, stream_);
  std::lock_guard<std::mutex> lock(liveMutex_);
  if (bytes > simulatedCapacity_ - liveBytes_) return cudaErrorMemoryAllocation;
  const cudaError_t err = cudaMallocAsync(p, bytes, pool_, stream_);
  if (err == cudaSuccess) {
    liveSizes_[*p] = bytes;
    liveBytes_ += bytes;
  }
  return err;
}

size_t Context::peakBytes() const {
  uint64_t high = 0;
  if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &high) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<size_t>(high);
}

void* Context::allocate(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(keptMutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->second == bytes) {
        void* p = it->first;
        kept_.erase(it);
        return p;
      }
  }
  freeKept();
  void* p = nullptr;
  cudaError_t err = poolAllocate(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    // Cached FFT work areas and plans may be what fills the device: drop them and try once more.
    dropFftPlans();
    SL_CUDA(cudaStreamSynchronize(stream_));
    cudaMemPoolTrimTo(pool_, 0);
    err = poolAllocate(&p, bytes);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    std::ostringstream msg;
    msg << "cannot allocate " << std::fixed << std::setprecision(1) << double(bytes) / (1 << 20)
        << " MiB on " << name_ << ": " << cudaGetErrorString(err);
    if (simulatedCapacity_ != 0)
      msg << " (simulated capacity of " << (simulatedCapacity_ >> 10) << " KiB)";
    if (err == cudaErrorMemoryAllocation) throw DeviceOutOfMemory(msg.str());
    throw CudaError(msg.str());
  }
  return p;
}

void Context::release(void* p, size_t bytes) {
  if (!p) return;
  if (bytes <= kKeptMaxBytes) {
    std::lock_guard<std::mutex> lock(keptMutex_);
    if (kept_.size() < kKeptBlocks) {
      kept_.emplace_back(p, bytes);
      return;
    }
  }
  release(p);
}

void Context::freeKept() {
  std::vector<std::pair<void*, size_t>> blocks;
  {
    std::lock_guard<std::mutex> lock(keptMutex_);
    if (kept_.empty()) return;
    blocks.swap(kept_);
    kept_.reserve(kKeptBlocks);
  }
  for (const auto& [p, bytes] : blocks) release(p);
}

void Context::release(void* p) {
  if (!p) return;
  if (simulatedCapacity_ != 0) {
    std::lock_guard<std::mutex> lock(liveMutex_);
    auto it = liveSizes_.find(p);
    if (it != liveSizes_.end()) {
      liveBytes_ -= it->second;
      liveSizes_.erase(it);
    }
  }
  cudaFreeAsync(p, stream_);  // no throw: called from deleters
}

Context::FftPlans& Context::fftPlans(int64_t nz, int64_t ny, int64_t nx) {
  auto key = std::make_tuple(nz, ny, nx);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  if (ny > INT32_MAX || nx > INT32_MAX || nz > INT32_MAX)
    throw InvalidArgument("FFT size too large for cuFFT");
  FftPlans p;
  size_t work = 0;
  auto make = [&](cufftHandle* h, cufftType type) {
    SL_CUFFT(cufftCreate(h));
    SL_CUFFT(cufftSetAutoAllocation(*h, 0));
    long long dims[3] = {nz, ny, nx};
    int rank = nz > 1 ? 3 : 2;
    long long* n = nz > 1 ? dims : dims + 1;
    size_t w = 0;
    cufftResult r = cufftMakePlanMany64(*h, rank, n, nullptr, 1, 0, nullptr, 1, 0, type, 1, &w);
    if (r != CUFFT_SUCCESS) {
      cufftDestroy(*h);
      *h = 0;
      SL_CUFFT(r);
    }
    SL_CUFFT(cufftSetStream(*h, stream_));
    work = std::max(work, w);
  };
  make(&p.forward, CUFFT_R2C);
  try {
    make(&p.inverse, CUFFT_C2R);
  } catch (...) {
    cufftDestroy(p.forward);
    throw;
  }
  // One work area for both directions; it lives as long as the plans (until dropFftPlans).
  void* area = nullptr;
  try {
    area = allocate(std::max<size_t>(work, 256));
  } catch (...) {
    cufftDestroy(p.forward);
    cufftDestroy(p.inverse);
    throw;
  }
  cufftSetWorkArea(p.forward, area);
  cufftSetWorkArea(p.inverse, area);
  workAreas_[key] = area;
  return plans_[key] = p;
}

void Context::dropFftPlans() {
  cudaStreamSynchronize(stream_);
  for (auto& [key, p] : plans_) {
    cufftDestroy(p.forward);
    cufftDestroy(p.inverse);
  }
  plans_.clear();
  for (auto& [key, area] : workAreas_) release(area);
  workAreas_.clear();
}

const float* Context::constants(const std::vector<float>& values) {
  auto it = constants_.find(values);
  if (it != constants_.end()) return static_cast<const float*>(it->second);
  if (constants_.size() >= 64) {
    for (auto& [v, p] : constants_) release(p);
    constants_.clear();
  }
  void* p = allocate(std::max<size_t>(values.size(), 1) * sizeof(float));
  // From pageable memory the copy is staged before the call returns.
  SL_CUDA(cudaMemcpyAsync(p, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice,
                          stream_));
  constants_[values] = p;
  return static_cast<const float*>(p);
}

namespace {

// Polls query() until it reports the work done (true) or the polling time is up (false).
template <class Query>
bool pollUntilDone(Query query) {
  using Clock = std::chrono::steady_clock;
  const auto until =
      Clock::now() + std::chrono::microseconds(tuning::HostWaitPolicy::pollMicroseconds);
  do {
    const cudaError_t err = query();
    if (err == cudaSuccess) return true;
    if (err != cudaErrorNotReady) SL_CUDA(err);
  } while (Clock::now() < until);
  return false;
}

}  // namespace

bool pollMappedFlag(const volatile int* flag) {
  const bool set = pollUntilDone([&] { return *flag ? cudaSuccess : cudaErrorNotReady; });
  std::atomic_thread_fence(std::memory_order_acquire);
  return set;
}

void Context::waitFor(cudaEvent_t event) const {
  if (pollUntilDone([&] { return cudaEventQuery(event); })) return;
  SL_CUDA(cudaEventSynchronize(event));
}

void Context::waitFor(cudaStream_t stream) const {
  if (pollUntilDone([&] { return cudaStreamQuery(stream); })) return;
  // An event made to block its waiter: the thread sleeps until the device's interrupt.
  const ScopedDevice on(device_);
  cudaEvent_t done = nullptr;
  SL_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming | cudaEventBlockingSync));
  cudaError_t err = cudaEventRecord(done, stream);
  if (err == cudaSuccess) err = cudaEventSynchronize(done);
  cudaEventDestroy(done);
  SL_CUDA(err);
}

bool pageLocked(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // plain pageable memory on old drivers reports an error: clear it
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

void Context::upload(void* dst, const void* src, size_t bytes) { upload(dst, src, bytes, {}); }

void Context::upload(void* dst, const void* src, size_t bytes,
                     const std::function<void(size_t bytes)>& landed) {
  // The compute stream may still be using dst's previous contents: order the copies after it.
  cudaEvent_t ready;
  SL_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  SL_CUDA(cudaEventRecord(ready, stream_));
  SL_CUDA(cudaStreamWaitEvent(copyStream_, ready));
  cudaEventDestroy(ready);
  const char* from = static_cast<const char*>(src);
  char* to = static_cast<char*>(dst);
  const bool direct = pageLocked(src);
  if (direct) {
    // The caller may reuse src once this returns, as it may after the staged copies below.
    SL_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, copyStream_));
    waitFor(copyStream_);
  }
  if (!direct) {
    // The two sizes' slots share the events but not the memory. Every DMA is queued on
    // copyStream_, in order, so an event recorded after a slot's last DMA, by an upload of either
    // size, also says that it has finished.
    const bool large = bytes > tuning::TransferPolicy::largeUploadBytes;
    const size_t piece = large ? kLargePiece : kUploadPiece;
    const size_t firstByte = large ? kUploadPiece * kUploadSlots : 0;
    DmaPieces pieces;
    pieces.pieceBytes = piece;
    pieces.slots = large ? kLargeSlots : kUploadSlots;
    pieces.firstSlot = nextUploadSlot_ % pieces.slots;
    nextUploadSlot_ = int((pieces.firstSlot + (bytes + piece - 1) / piece) % size_t(pieces.slots));
    pieces.staging = [&](int64_t slot) {
      const size_t at = firstByte + size_t(slot) * piece;
      return static_cast<char*>(staging_[at / kStagingBytes].data()) + at % kStagingBytes;
    };
    pieces.waitUntilRead = [&](int64_t slot) {
      SL_CUDA(cudaEventSynchronize(uploadSlotFree_[slot]));
    };
    pieces.send = [&](int64_t k, int64_t slot, const char* staged, size_t n) {
      const ScopedDevice on(device_);  // sent from a copy thread
      SL_CUDA(
          cudaMemcpyAsync(to + size_t(k) * piece, staged, n, cudaMemcpyHostToDevice, copyStream_));
      SL_CUDA(cudaEventRecord(uploadSlotFree_[slot], copyStream_));
    };
    if (landed) {
      pieces.afterSent = [&](int64_t sent) {
        // The last sent piece's slot event, or, if a later piece has been sent from that slot
        // since, that piece's: every DMA is queued in order on one stream, so either says that
        // the first `sent` pieces have arrived.
        SL_CUDA(cudaStreamWaitEvent(stream_,
                                    uploadSlotFree_[(pieces.firstSlot + sent - 1) % pieces.slots]));
        landed(std::min(bytes, size_t(sent) * piece));
      };
    }
    copyForDmaInPieces(from, bytes, pieces);
    // The last call of landed followed the last piece: the compute stream waits for it already.
    if (landed) return;
  }
  // Work queued later on the compute stream sees the uploaded data.
  cudaEvent_t done;
  SL_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  SL_CUDA(cudaEventRecord(done, copyStream_));
  SL_CUDA(cudaStreamWaitEvent(stream_, done));
  cudaEventDestroy(done);
  if (landed) landed(bytes);  // page-locked src: one DMA, all landed
}

void Context::download(void* dst, const void* src, size_t bytes) {
  if (pageLocked(dst)) {
    SL_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    waitFor(stream_);
    return;
  }
  const char* from = static_cast<const char*>(src);
  char* to = static_cast<char*>(dst);
  size_t pending[2] = {0, 0};
  size_t pendingAt[2] = {0, 0};
  auto drain = [&](int b) {
    if (pending[b] == 0) return;
    SL_CUDA(cudaEventSynchronize(stagingFree_[b]));
    copyParallel(to + pendingAt[b], staging_[b].data(), pending[b]);
    pending[b] = 0;
  };
  for (size_t done = 0, chunk = 0; done < bytes; done += kStagingBytes, ++chunk) {
    size_t n = std::min(kStagingBytes, bytes - done);
    int b = static_cast<int>(chunk % 2);
    drain(b);
    SL_CUDA(cudaMemcpyAsync(staging_[b].data(), from + done, n, cudaMemcpyDeviceToHost, stream_));
    SL_CUDA(cudaEventRecord(stagingFree_[b], stream_));
    pending[b] = n;
    pendingAt[b] = done;
    // The DMA of this chunk overlaps the host copy of the previous one (drained next round).
  }
  for (size_t k = 0; k < 2; ++k) {
    // Drain in order: the older chunk first.
    int first = pendingAt[0] <= pendingAt[1] ? 0 : 1;
    drain(k == 0 ? first : 1 - first);
  }
}

Image onDevice(const ContextPtr& ctx, const Image& in) {
  if (!in.onHost()) return in;
  Image out = deviceBuffer<float>(ctx, in.shape());
  out.spacing = in.spacing;
  if (in.bytes()) ctx->upload(out.data(), in.data(), in.bytes());
  return out;
}

}  // namespace stacklens::compute::cuda
