// Median, extremes and quartiles of repeated timings.
#include <gtest/gtest.h>

#include "compute/bench/timing_summary.h"
#include "compute/params.h"

namespace stacklens::compute::bench {
namespace {

TEST(TimingSummary, QuartilesInterpolateAsNumpyPercentile) {
  // np.percentile([4, 1, 3, 2, 10], [25, 50, 75]) == [2, 3, 4]
  const TimingSummary s = summarize({4, 1, 3, 2, 10});
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  EXPECT_EQ(s.median, 3);
  EXPECT_EQ(s.q1, 2);
  EXPECT_EQ(s.q3, 4);
  // np.percentile([1, 2, 3, 4], [25, 50, 75]) == [1.75, 2.5, 3.25]: exact in binary.
  const TimingSummary even = summarize({4, 3, 2, 1});
  EXPECT_EQ(even.q1, 1.75);
  EXPECT_EQ(even.median, 2.5);
  EXPECT_EQ(even.q3, 3.25);
}

TEST(TimingSummary, OneSampleIsEverything) {
  const TimingSummary s = summarize({0.5});
  EXPECT_EQ(s.min, 0.5);
  EXPECT_EQ(s.q1, 0.5);
  EXPECT_EQ(s.q3, 0.5);
  EXPECT_THROW(summarize({}), InvalidArgument);
}

}  // namespace
}  // namespace stacklens::compute::bench
