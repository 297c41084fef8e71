// The viewer's read-ahead while scrubbing: which slices the store is asked to read ahead after
// a step, against the rule in ui/stack/slice_fetcher.h.
#include <gtest/gtest.h>

#include <QThreadPool>
#include <algorithm>
#include <chrono>
#include <thread>

#include "tests/ui/memory_stack.h"
#include "ui/stack/slice_fetcher.h"

namespace {

using stacklens::testing::MemoryStack;
using stacklens::ui::SliceFetcher;

constexpr int64_t kDepth = 30, kSide = 4;
constexpr size_t kSliceBytes = kSide * kSide * sizeof(float);

// Waits (bounded, so that a failure cannot hang the suite) until every expected slice is kept.
void waitForReadAhead(const SliceFetcher& source, const std::vector<int>& expected) {
  for (int i = 0; i < 60000; ++i) {
    bool all = true;
    for (int z : expected) all = all && source.store()->contains(z);
    if (all) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::vector<int> kept(const SliceFetcher& source) {
  std::vector<int> zs;
  for (int z = 0; z < kDepth; ++z)
    if (source.store()->contains(z)) zs.push_back(z);
  return zs;
}

struct Scrub {
  std::shared_ptr<MemoryStack> stack = std::make_shared<MemoryStack>(kDepth, kSide, kSide);
  QThreadPool pool;
  SliceFetcher source{&pool};
  explicit Scrub(size_t budget) { source.setStack(stack, budget, 0, nullptr); }
};

}  // namespace

TEST(SliceReadAhead, AStepForwardReadsTheNextEightAndTheOneBehind) {
  Scrub s(1000 * kSliceBytes);
  EXPECT_EQ(s.source.readAheadDepth(), 8);
  s.source.prefetchAround(10);  // a jump from nowhere: one on each side
  waitForReadAhead(s.source, {9, 11});
  EXPECT_EQ(kept(s.source), (std::vector<int>{9, 11}));
  s.source.prefetchAround(11);  // one step on: the way the slider moves
  waitForReadAhead(s.source, {12, 13, 14, 15, 16, 17, 18, 19, 10});
  EXPECT_EQ(kept(s.source), (std::vector<int>{9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_EQ(s.stack->reads.load(), 11);  // each once
}

TEST(SliceReadAhead, AStepBackReadsTheEightBelow) {
  Scrub s(1000 * kSliceBytes);
  s.source.prefetchAround(20);
  s.source.prefetchAround(19);
  waitForReadAhead(s.source, {18, 17, 16, 15, 14, 13, 12, 11, 20});
  for (int z : {11, 12, 13, 14, 15, 16, 17, 18, 20}) EXPECT_TRUE(s.source.store()->contains(z));
  EXPECT_FALSE(s.source.store()->contains(10));  // nine below is beyond the depth
}

TEST(SliceReadAhead, DepthIsAQuarterOfTheBudgetAtMost) {
  Scrub s(12 * kSliceBytes);
  EXPECT_EQ(s.source.readAheadDepth(), 3);
  s.source.prefetchAround(4);
  s.source.prefetchAround(5);
  waitForReadAhead(s.source, {6, 7, 8, 4});
  const std::vector<int> got = kept(s.source);
  EXPECT_TRUE(std::find(got.begin(), got.end(), 9) == got.end());
  Scrub tiny(2 * kSliceBytes);
  EXPECT_EQ(tiny.source.readAheadDepth(), 1);  // never none
}

TEST(SliceReadAhead, AJumpReadsOneOnEachSide) {
  Scrub s(1000 * kSliceBytes);
  s.source.prefetchAround(3);
  s.source.prefetchAround(4);
  waitForReadAhead(s.source, {5, 6, 7, 8, 9, 10, 11, 12, 3});
  const int before = s.stack->reads.load();
  s.source.prefetchAround(25);  // five or more slices away: no direction
  waitForReadAhead(s.source, {24, 26});
  EXPECT_EQ(s.stack->reads.load(), before + 2);
  EXPECT_FALSE(s.source.store()->contains(27));
}
