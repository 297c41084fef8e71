// hostResultMemory: a bounded cache of large host buffers, keyed by their rounded size.
#include "compute/cuda/host/host_result_memory.cuh"

#include <unistd.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <list>
#include <mutex>
#include <new>
#include <vector>

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

// The buffers last given back are kept, the oldest freed first: the next result is most often the
// size of a recent one (the same operation again as a slider moves, or the same bench workload).
class Cache {
 public:
  LargeBuffer take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->bytes == bytes) {
        LargeBuffer b = it->buffer;
        free_.erase(it);
        cached_ -= bytes;
        return b;
      }
    return {};
  }
  void give(const LargeBuffer& b, size_t bytes) {
    std::vector<LargeBuffer> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (bytes <= cap_) {
        while (cached_ + bytes > cap_) {
          evicted.push_back(free_.back().buffer);
          cached_ -= free_.back().bytes;
          free_.pop_back();
        }
        free_.push_front({bytes, b});
        cached_ += bytes;
      } else {
        evicted.push_back(b);
      }
    }
    for (const LargeBuffer& e : evicted) freeLarge(e);  // unregistering takes a while: unlocked
  }
  size_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  struct Kept {
    size_t bytes;
    LargeBuffer buffer;
  };
  std::mutex mutex_;
  std::list<Kept> free_;  // the most recently given back first
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
