// Resampling in slabs of output slices gives the whole-stack resample: bit for bit when z keeps
// its length (each slice zoomed alone), to float rounding when z is interpolated from a window of
// slices (the spline prefilter's window starts far enough out to have forgotten its edges).
#include "compute/blocked/streamed_resample.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/compute/image_checks.h"

using namespace stacklens::compute;

namespace {

Image signedRandomStack(Shape s, unsigned seed) {
  return stacklens::testing::randomImage(s, seed, -1.f, 1.f);
}

struct Streamed {
  Image out;
  std::vector<int64_t> firstSlices;  // of each written slab, in order
  StreamedResampleReport report;
};

Streamed streamed(Backend& backend, const Image& in, const ResampleParams& p, int64_t slab) {
  Streamed s;
  const Shape shape = in.shape();
  s.out = Image::host(resampledShape(shape, p));
  const int64_t plane = s.out.shape().sliceCount();
  s.report = streamResample(
      backend,
      [&](const Box& b, float* data) {
        EXPECT_EQ(b.y1 - b.y0, shape.y);
        for (int64_t z = b.z0; z < b.z1; ++z)
          std::copy_n(in.slice(z), shape.sliceCount(), data + (z - b.z0) * shape.sliceCount());
      },
      [&](const Box& b, const float* data) {
        s.firstSlices.push_back(b.z0);
        std::copy_n(data, (b.z1 - b.z0) * plane, s.out.slice(b.z0));
      },
      shape, p, slab);
  return s;
}

}  // namespace

TEST(StreamedResample, EqualsTheWholeStackRunForEveryOrderZoomAndSlab) {
  auto cpu = makeCpuBackend(2);
  const Image in = signedRandomStack({90, 13, 11}, 3);
  for (int order : {1, 3})
    for (const ResampleParams zoom :
         {ResampleParams{2.0, 1.5, 0.7, order}, ResampleParams{0.37, 1.0, 1.3, order},
          ResampleParams{1.61, 0.5, 1.0, order}})
      for (int64_t slab : {1, 4, 17, 1000}) {
        const Image whole = cpu->resample(in, zoom);
        const Streamed s = streamed(*cpu, in, zoom, slab);
        ASSERT_EQ(s.out.shape(), whole.shape());
        double diff = 0, norm = 0, maxAbs = 0;
        for (int64_t i = 0; i < whole.shape().count(); ++i) {
          const double d = double(s.out.data()[i]) - whole.data()[i];
          diff += d * d;
          norm += double(whole.data()[i]) * whole.data()[i];
          maxAbs = std::max(maxAbs, std::fabs(d));
        }
        EXPECT_LT(std::sqrt(diff / norm), 1e-6)
            << "order " << order << " zoom z " << zoom.zoomZ << " slab " << slab;
        EXPECT_LT(maxAbs, 1e-5) << "order " << order << " zoom z " << zoom.zoomZ << " slab "
                                << slab;
        const int64_t slabs = (whole.shape().z + slab - 1) / slab;
        EXPECT_EQ(s.report.slabs, slabs);
        for (size_t k = 0; k < s.firstSlices.size(); ++k)
          EXPECT_EQ(s.firstSlices[k], int64_t(k) * slab);
      }
}

// A window far shorter than the axis still gives the whole-axis prefilter: a step function's
// spline over 300 slices, read 2 output slices at a time.
TEST(StreamedResample, ALongAxisMatchesTheWholeAxisPrefilter) {
  auto cpu = makeCpuBackend(1);
  Image in = Image::host({300, 2, 3});
  for (int64_t z = 0; z < 300; ++z)
    for (int64_t i = 0; i < 6; ++i) in.slice(z)[i] = (z / 37) % 2 ? 100.f : -50.f + float(i);
  const ResampleParams p{1.33, 1.0, 1.0, 3};
  const Image whole = cpu->resample(in, p);
  const Streamed s = streamed(*cpu, in, p, 2);
  for (int64_t i = 0; i < whole.shape().count(); ++i)
    ASSERT_NEAR(s.out.data()[i], whole.data()[i], 2e-4) << i;
}

TEST(StreamedResample, KeepingZIsBitIdentical) {
  auto cpu = makeCpuBackend(2);
  const Image in = signedRandomStack({7, 19, 23}, 5);
  const ResampleParams p{1.0, 2.1, 0.6, 3};
  const Image whole = cpu->resample(in, p);
  const Streamed s = streamed(*cpu, in, p, 3);
  for (int64_t i = 0; i < whole.shape().count(); ++i) ASSERT_EQ(s.out.data()[i], whole.data()[i]);
}

TEST(StreamedResample, SlabsFitTheBudgetAndTooSmallABudgetIsAnError) {
  const Shape in{400, 256, 256};
  const ResampleParams p{2.0, 1.0, 1.0, 3};
  const size_t slice = 256 * 256 * 4;
  const int64_t slab = resampleSlabSlicesFor(in, p, 200 * slice);
  EXPECT_GE(slab, 1);
  EXPECT_LT(slab, 200);
  EXPECT_GT(resampleSlabSlicesFor(in, p, 2000 * slice), slab);
  EXPECT_THROW(resampleSlabSlicesFor(in, p, 10 * slice), InvalidArgument);
  EXPECT_THROW(resampledShape(in, {0.0, 1.0, 1.0, 3}), InvalidArgument);
  // Each device zooms its own slices (a raw slice and its copies each): with the least budget
  // that holds a slab for one device, four get a smaller slab; with the least that holds one
  // output slice for one device, eight cannot run.
  auto slabOrNone = [&](size_t budget, int devices) -> int64_t {
    try {
      return resampleSlabSlicesFor(in, p, budget, devices);
    } catch (const InvalidArgument&) {
      return 0;
    }
  };
  size_t least = slice;
  while (slabOrNone(least, 1) < slab) least += slice / 4;
  EXPECT_LT(slabOrNone(least, 4), slab);
  least = slice;
  while (slabOrNone(least, 1) < 1) least += slice / 4;
  EXPECT_EQ(slabOrNone(least, 8), 0);
}
