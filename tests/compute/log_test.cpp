// The library's log: messages reach the installed sink from any thread, setLogSink hands back the
// sink it replaces, and without a sink nothing is printed or kept.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "compute/log.h"
#include "tests/compute/log_capture.h"

using namespace stacklens;

TEST(Log, EveryThreadsMessagesReachTheSink) {
  stacklens::testing::LogCapture logged;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 100; ++i)
        compute::logMessage(compute::LogLevel::Info, "t" + std::to_string(t));
    });
  for (auto& t : threads) t.join();
  const std::string text = logged.take();
  for (int t = 0; t < 4; ++t) {
    size_t count = 0;
    const std::string line = "t" + std::to_string(t) + "\n";
    for (size_t at = text.find(line); at != std::string::npos; at = text.find(line, at + 1))
      ++count;
    EXPECT_EQ(count, 100u) << "thread " << t;
  }
}

TEST(Log, SetLogSinkReturnsTheSinkItReplaces) {
  std::vector<std::string> first;
  compute::LogSink original = compute::setLogSink(
      [&](compute::LogLevel, const std::string& text) { first.push_back(text); });
  compute::logMessage(compute::LogLevel::Warning, "one");
  compute::LogSink mine = compute::setLogSink({});
  compute::logMessage(compute::LogLevel::Warning, "dropped");
  ASSERT_TRUE(bool(mine));
  mine(compute::LogLevel::Info, "two");
  compute::setLogSink(original);
  EXPECT_EQ(first, (std::vector<std::string>{"one", "two"}));
}
