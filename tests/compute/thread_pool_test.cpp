// ThreadPool covers every index exactly once and passes exceptions back to the caller.
#include "compute/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

using stacklens::compute::cpu::ThreadPool;

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallelFor(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPool, RethrowsTheBodysException) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallelFor(1000,
                                [](int64_t b, int64_t) {
                                  if (b > 100) throw std::runtime_error("boom");
                                }),
               std::runtime_error);
  // And stays usable afterwards.
  std::atomic<int64_t> sum = 0;
  pool.parallelFor(100, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 100);
}
