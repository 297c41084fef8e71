// hostResultMemory: a bounded cache of large host buffers, keyed by their rounded size.
#include "compute/cuda/host_result_memory.cuh"

#include <unistd.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace stacklens::compute::cuda {

namespace {

constexpr size_t kHugePage = size_t(2) << 20;

size_t cacheCap() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  const size_t ram = pages > 0 && pageSize > 0 ? size_t(pages) * size_t(pageSize) : 0;
  return std::min(size_t(2) << 30, ram / 16);
}

class Cache {
 public:
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(bytes);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    cached_ -= bytes;
    return p;
  }
  // Keeps p unless that would pass the cap (then p is freed: which size comes back next is
  // unknown, so the buffers already kept are as good a guess as p).
  void give(void* p, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + bytes <= cap_) {
        free_.emplace(bytes, p);
        cached_ += bytes;
        return;
      }
    }
    std::free(p);
  }
  size_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
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
  void* p = cache().take(rounded);
  if (!p) {
    p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
#if defined(__linux__)
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure just means small pages
#endif
  }
  return std::shared_ptr<void>(p, [rounded](void* q) { cache().give(q, rounded); });
}

size_t hostResultMemoryCached() { return cache().cached(); }

}  // namespace stacklens::compute::cuda
