// A small persistent thread pool with a blocking parallel-for.
#include "compute/cpu/thread_pool.h"

#include <algorithm>
#include <exception>
#include <utility>

namespace stacklens::compute::cpu {

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

// Chunks are claimed under the lock; each is large, so contention is negligible.
static bool claim(std::mutex& m, int64_t& next, int64_t n, int64_t chunk, int64_t& b, int64_t& e) {
  std::lock_guard lock(m);
  if (next >= n) return false;
  b = next;
  e = std::min(n, next + chunk);
  next = e;
  return true;
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body,
                             int64_t minChunk) {
  if (n <= 0) return;
  const int64_t threads = size();
  const int64_t chunk = std::max<int64_t>(minChunk, (n + threads * 4 - 1) / (threads * 4));
  if (threads == 1 || n <= chunk) {
    body(0, n);
    return;
  }
  std::unique_lock lock(mutex_);
  body_ = &body;
  n_ = n;
  chunk_ = chunk;
  next_ = 0;
  error_ = nullptr;
  busy_ = static_cast<int>(workers_.size());
  ++generation_;
  lock.unlock();
  wake_.notify_all();

  int64_t b, e;
  try {
    while (claim(mutex_, next_, n_, chunk_, b, e)) body(b, e);
  } catch (...) {
    std::lock_guard g(mutex_);
    if (!error_) error_ = std::current_exception();
    next_ = n_;
  }
  lock.lock();
  done_.wait(lock, [this] { return busy_ == 0; });
  body_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::workerLoop(int) {
  uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const auto* body = body_;
    lock.unlock();
    int64_t b, e;
    try {
      while (claim(mutex_, next_, n_, chunk_, b, e)) (*body)(b, e);
    } catch (...) {
      std::lock_guard g(mutex_);
      if (!error_) error_ = std::current_exception();
      next_ = n_;
    }
    lock.lock();
    if (--busy_ == 0) done_.notify_all();
  }
}

}  // namespace stacklens::compute::cpu
