// CUDA sigma clipping on device views, 16-byte aligned or not: the on-chip loop loads an aligned
// block share with vector loads and any other value by value (skipped without a GPU). The
// streaming passes for larger inputs, which compact an unaligned view first, are checked on a
// large sky in sigma_clip_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <utility>

#include "compute/backend.h"
#include "tests/compute/clip_reference.h"
#include "tests/compute/gpu_test_backends.h"

namespace {

using namespace stacklens::compute;
using stacklens::testing::clipReference;
using stacklens::testing::expectStatsNear;

class CudaAlignedViews : public stacklens::testing::GpuTest {};

// The passes skip NaN and infinities themselves; both ways must match the reference.
TEST_F(CudaAlignedViews, SigmaClipOfAlignedAndUnalignedViewsMatchesTheReference) {
  // Prepare
  std::mt19937 rng(23);
  std::normal_distribution<float> noise(50.f, 4.f);
  const int64_t n = 97 * 131;
  Image in = Image::host({1, 97, 131});
  for (int64_t i = 0; i < n; ++i) in.data()[i] = noise(rng);
  for (int64_t i = 0; i < n; i += 53) in.data()[i] += 70.f;
  for (int64_t i = 2; i < n; i += 89) in.data()[i] = NAN;
  in.data()[4] = -INFINITY;
  in.data()[6] = INFINITY;
  Image tail = Image::host({1, 1, n - 1});  // the values from the second on
  std::copy(in.data() + 1, in.data() + n, tail.data());
  Image device = gpu->upload(in);
  ASSERT_EQ(device.location(), Location::Cuda);
  Image unaligned({1, 1, n - 1}, Location::Cuda,
                  std::shared_ptr<float>(device.data() + 1, [device](float*) {}));
  ClipParams p;
  p.kappaLower = 2.5;
  p.kappaUpper = 2.5;

  // Run
  const ClipStats aligned = gpu->sigmaClip(device, p), compacted = gpu->sigmaClip(unaligned, p);

  // Verify
  for (const auto& [got, want] :
       {std::pair{aligned, clipReference(in, p)}, std::pair{compacted, clipReference(tail, p)}}) {
    EXPECT_EQ(got.iterations, want.iterations);
    expectStatsNear(got.all, want.all, 1e-5, "all");
    expectStatsNear(got.clipped, want.clipped, 1e-5, "clipped");
  }
}

}  // namespace
