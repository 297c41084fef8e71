// The padded frame rule both backends share (compute/rl_frame.h), and the CPU backend deconvolving
// in the frame it gives: against Richardson–Lucy written out in double on that frame.
#include "compute/rl_frame.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/rl_reference.h"

using namespace stacklens::compute;
using stacklens::testing::randomImage;
using stacklens::testing::rlPeriodicReference;

TEST(RlFrame, FastLengthsAndSmoothLengths) {
  for (int64_t n : {128, 256, 288, 576, 1024, 1152, 2304, 3456, 4096})
    EXPECT_TRUE(isFastFrameLength(n)) << n;
  for (int64_t n : {64, 96, 144, 384, 768, 1728, 2100, 8192})
    EXPECT_FALSE(isFastFrameLength(n)) << n;
  EXPECT_EQ(nextFastFrameLength(2078), 2304);
  EXPECT_EQ(nextFastFrameLength(1025), 1152);
  EXPECT_EQ(nextFastFrameLength(4097), 0);
  EXPECT_EQ(nextSmoothLength(2078), 2100);
  EXPECT_EQ(nextSmoothLength(1), 1);
  EXPECT_EQ(nextSmoothLength(11), 12);
}

TEST(RlFrame, TheWholeFrameDecides) {
  // 2048² reflect-padded by a 31² PSF: 2304² (1.20 × the smooth 2100²).
  EXPECT_EQ(rlFrame({1, 2078, 2078}, {false, true, true}), (Shape{1, 2304, 2304}));
  // The seed's blocks: 1088 → 1152 on every axis (1.00 × the smooth 1152).
  EXPECT_EQ(rlFrame({1088, 1088, 1088}, {true, true, true}), (Shape{1152, 1152, 1152}));
  // Too much larger: 2400 (smooth) against 3456.
  EXPECT_EQ(rlFrame({1, 2400, 2400}, {false, true, true}), (Shape{1, 2400, 2400}));
  // Small axes keep their smooth lengths (the fused passes start at 128).
  EXPECT_EQ(rlFrame({1, 20, 27}, {false, true, true}), (Shape{1, 20, 27}));
  // An axis that is not padded must be a fast length itself.
  EXPECT_EQ(rlFrame({1, 1000, 1030}, {false, false, true}), (Shape{1, 1000, 1050}));
  EXPECT_EQ(rlFrame({1, 1024, 1030}, {false, false, true}), (Shape{1, 1024, 1152}));
  // Periodic: nothing padded, the frame is the data.
  EXPECT_EQ(rlFrame({5, 700, 333}, {false, false, false}), (Shape{5, 700, 333}));
}

// A reflect frame the rule makes fast (120 × 250 + 8 → 128 × 288, not the smooth 128 × 270): the
// CPU deconvolves exactly there, continuing the mirror into the extra columns.
TEST(RlFrame, TheCpuDeconvolvesInTheFrameOfTheRule) {
  const Shape s{1, 120, 250}, ps{1, 9, 9};
  const Shape f = rlFrame({1, s.y + 8, s.x + 8}, {false, true, true});
  ASSERT_EQ(f, (Shape{1, 128, 288}));
  const Image in = randomImage(s, 31, 0.2f, 1.f);
  Image psf = randomImage(ps, 32, 0.05f, 1.f);
  std::vector<double> p(size_t(ps.count()));
  double sum = 0;
  for (int64_t i = 0; i < ps.count(); ++i) sum += psf.data()[i];
  for (int64_t i = 0; i < ps.count(); ++i) p[size_t(i)] = psf.data()[i] / sum;
  // numpy.pad(image, (4, rest), "symmetric") on a frame of fx columns, then RL, then the crop.
  auto reference = [&](int64_t fy, int64_t fx) {
    auto reflect = [](int64_t q, int64_t n) {
      const int64_t period = 2 * n;
      int64_t m = ((q % period) + period) % period;
      return m < n ? m : period - 1 - m;
    };
    std::vector<double> obs(size_t(fy * fx));
    for (int64_t y = 0; y < fy; ++y)
      for (int64_t x = 0; x < fx; ++x)
        obs[size_t(y * fx + x)] = in.at(0, reflect(y - 4, s.y), reflect(x - 4, s.x));
    const std::vector<double> est = rlPeriodicReference(obs, {1, fy, fx}, p, ps, 4, 1e-12);
    Image out = Image::host(s);
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) out.at(0, y, x) = float(est[size_t((y + 4) * fx + x + 4)]);
    return out;
  };
  const Image want = reference(f.y, f.x), smoothFrame = reference(128, 270);
  DeconvolveParams dp;
  dp.iterations = 4;
  auto cpu = makeCpuBackend(2);
  const Image got = cpu->richardsonLucy(in, psf, dp);
  EXPECT_LT(stacklens::testing::relativeL2(got, want), 1e-6);
  // The frame's length shows in the result (else this test could not tell the rules apart).
  EXPECT_GT(stacklens::testing::relativeL2(smoothFrame, want), 1e-5);
}
