// The CPU sigma clipping's own paths: the same result with each thread count, and a cancellation
// between iterations that leaves its cached scratch usable.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compute/cpu/operations.h"
#include "tests/compute/clip_reference.h"

namespace {

using namespace stacklens::compute;
using stacklens::testing::clipReference;
using stacklens::testing::expectClipOnScale;
using stacklens::testing::expectStatsNear;

Image oneRow(const std::vector<float>& v) {
  Image im = Image::host({1, 1, int64_t(v.size())});
  std::copy(v.begin(), v.end(), im.data());
  return im;
}

TEST(CpuSigmaClip, MatchesTheReferenceWithEachThreadCount) {
  // Prepare
  const std::vector<float> v = stacklens::testing::clipSampleWithOutliersAndGaps();
  const ClipParams p{2.5, 3.0, -1};
  const ClipStats want = clipReference(v, p);

  for (int threads : {1, 2, 3}) {
    // Run
    cpu::ThreadPool pool(threads);
    const ClipStats got = cpu::sigmaClip(oneRow(v), p, {}, pool);

    // Verify
    expectStatsNear(got.all, want.all, 1e-6, "all");
    expectStatsNear(got.clipped, want.clipped, 1e-6, "clipped");
    EXPECT_EQ(got.iterations, want.iterations);
    EXPECT_GT(got.iterations, 1);
  }
}

TEST(CpuSigmaClip, CancellationBetweenIterationsLeavesTheScratchUsable) {
  // Prepare
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000) + (i % 7 ? 0.f : 1e4f);
  cpu::ThreadPool pool(2);
  std::atomic<bool> cancelled{false};
  int reports = 0;
  Job job(&cancelled, [&](double) {
    ++reports;
    cancelled = true;
  });

  // Run, Verify: cancelled from the first progress report, i.e. inside the iterations.
  EXPECT_THROW(cpu::sigmaClip(oneRow(v), {}, job, pool), Cancelled);
  EXPECT_EQ(reports, 1);

  // Run, Verify: the cached scratch is still usable after an exception.
  cancelled = false;
  const ClipStats after = cpu::sigmaClip(oneRow(v), {3.0, 3.0, -1}, {}, pool);
  expectClipOnScale(after, clipReference(v, {3.0, 3.0, -1}), 1e-9, "after cancellation");
}

}  // namespace
