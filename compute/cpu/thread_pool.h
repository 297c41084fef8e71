// A small persistent thread pool with a blocking parallel-for, shared by the CPU operations.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace stacklens::compute::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads = 0);  // 0: std::thread::hardware_concurrency()
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls body(begin, end) on disjoint chunks covering [0, n), on all threads, and waits.
  // The calling thread works too. Exceptions from body are rethrown (the first one).
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body,
                   int64_t minChunk = 1);

 private:
  void workerLoop(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t n_ = 0, chunk_ = 0, next_ = 0;
  int busy_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace stacklens::compute::cpu
