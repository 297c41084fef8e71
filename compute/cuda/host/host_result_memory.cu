// hostResultMemory: a bounded cache of large host buffers, keyed by their rounded size.
#include "compute/cuda/host/host_result_memory.cuh"

#include <unistd.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace stacklens::compute::cuda {

namespace {

constexpr size_t kHugePage = size_t(2) << 20;

// A buffer of 2 MiB or more, page-locked when the driver allows: results are then copied from the
// device straight into it, with no staging buffer and no host copy after the DMA. Registration
// costs about as much as one copy, and the buffer keeps it while it waits in the cache.
struct LargeBuffer {
  void* data = nullptr;
  bool registered = false;
};

LargeBuffer allocateLarge(size_t bytes) {
  LargeBuffer b;
  b.data = std::aligned_alloc(kHugePage, bytes);
  if (!b.data) throw std::bad_alloc();
#if defined(__linux__)
  madvise(b.data, bytes, MADV_HUGEPAGE);  // advice only: failure just means small pages
#endif
  b.registered = cudaHostRegister(b.data, bytes, cudaHostRegisterPortable) == cudaSuccess;
  if (!b.registered) cudaGetLastError();  // no device, or pinned memory exhausted: pageable
  return b;
}

void freeLarge(const LargeBuffer& b) {
  if (b.registered && cudaHostUnregister(b.data) != cudaSuccess) cudaGetLastError();
  std::free(b.data);
}

size_t cacheCap() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  const size_t ram = pages > 0 && pageSize > 0 ? size_t(pages) * size_t(pageSize) : 0;
  return std::min(size_t(2) << 30, ram / 16);
}

class Cache {
 public:
  LargeBuffer take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(bytes);
    if (it == free_.end()) return {};
    LargeBuffer b = it->second;
    free_.erase(it);
    cached_ -= bytes;
    return b;
  }
  // Keeps p unless that would pass the cap (then p is freed: which size comes back next is
  // unknown, so the buffers already kept are as good a guess as p).
  void give(const LargeBuffer& b, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + bytes <= cap_) {
        free_.emplace(bytes, b);
        cached_ += bytes;
        return;
      }
    }
    freeLarge(b);
  }
  size_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, LargeBuffer> free_;
  size_t cached_ = 0;
  const size_t cap_ = cacheCap();
};

// Never destroyed: buffers may come back from other static objects' destructors at exit.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

}  // namespace

std::shared_ptr<void> hostResultMemory(size_t bytes) {
  if (bytes < kHugePage) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  }
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  LargeBuffer b = cache().take(rounded);
  if (!b.data) b = allocateLarge(rounded);
  return std::shared_ptr<void>(b.data, [b, rounded](void*) { cache().give(b, rounded); });
}

size_t hostResultMemoryCached() { return cache().cached(); }

}  // namespace stacklens::compute::cuda
