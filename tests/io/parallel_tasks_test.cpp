// runTasks: every task once on several threads; the first failure rethrown, later tasks not run.
#include "io/parallel_tasks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using stacklens::io::runTasks;

TEST(ParallelTasks, RunsEveryTaskOnceOnSeveralThreads) {
  std::vector<std::atomic<int>> runs(1000);
  runTasks(1000, 4, [&](int64_t t) { ++runs[size_t(t)]; });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  runTasks(0, 4, [](int64_t) { FAIL() << "no task to run"; });
}

TEST(ParallelTasks, TheFirstFailureIsRethrownAndStopsTheRest) {
  // One thread: the order is the tasks', so that the stop is exact.
  int ran = 0;
  EXPECT_THROW(runTasks(100, 1,
                        [&](int64_t t) {
                          ++ran;
                          if (t == 9) throw std::runtime_error("task 9");
                        }),
               std::runtime_error);
  EXPECT_EQ(ran, 10);
  // Several threads: what is rethrown is a task's failure, and every thread has joined.
  std::atomic<int> started{0};
  try {
    runTasks(100, 4, [&](int64_t) {
      ++started;
      throw std::runtime_error("each fails");
    });
    ADD_FAILURE() << "nothing was thrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "each fails");
  }
  EXPECT_LE(started.load(), 4);  // each thread stops after its first failure
}

}  // namespace
