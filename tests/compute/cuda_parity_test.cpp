// The CUDA backend against the CPU backend on fresh random and sky-like inputs: relative L2 ≤ 1e-5
// (blur, resample), ≤ 1e-4 (Richardson–Lucy, 20 iterations), exact (median, outliers, labels,
// counts), ≤ 1e-5 relative (statistics, fluxes, centroids). Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>

#include "compute/backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/rl_cases.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::randomImage;
using stacklens::testing::relativeL2;
using stacklens::testing::rlBoundaryAndOptionCases;
using stacklens::testing::skyImage;

class CudaParity : public stacklens::testing::GpuTest {
 protected:
  // The CPU result, or a skip while the CPU operation is still a placeholder.
  template <class F>
  auto cpuOr(F f) -> decltype(f()) {
    try {
      return f();
    } catch (const InvalidArgument& e) {
      if (std::string(e.what()).find("not implemented") != std::string::npos)
        throw std::runtime_error(std::string("SKIP ") + e.what());
      throw;
    }
  }
};

#define CPU_OR_SKIP(var, expr)                                                  \
  decltype(expr) var;                                                           \
  try {                                                                         \
    var = cpuOr([&] { return expr; });                                          \
  } catch (const std::runtime_error& e) {                                       \
    if (std::string(e.what()).rfind("SKIP ", 0) == 0) GTEST_SKIP() << e.what(); \
    throw;                                                                      \
  }

void expectRelative(double got, double want, double tol, const std::string& what) {
  EXPECT_NEAR(got, want, tol * std::max(std::abs(want), 1e-30)) << what;
}

TEST_F(CudaParity, Resample) {
  Image in = randomImage({7, 40, 53}, 3);
  for (int order : {1, 3}) {
    ResampleParams p;
    p.zoomZ = 2.5;
    p.zoomY = 0.7;
    p.zoomX = 1.3;
    p.order = order;
    CPU_OR_SKIP(want, cpu->resample(in, p));
    Image got = gpu->download(gpu->resample(in, p));
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_LT(relativeL2(got, want), 1e-5) << "order " << order;
  }
}

TEST_F(CudaParity, RichardsonLucy2DAnd3DForEachBoundaryAndOption) {
  Image in = randomImage({2, 96, 80}, 4, 0.1f, 1.f);
  Image psf = gaussianPsf(1.0, 2.0, 1.5);
  for (const auto& [what, p] : rlBoundaryAndOptionCases()) {
    CPU_OR_SKIP(want, cpu->richardsonLucy(in, psf, p));
    EXPECT_LT(relativeL2(gpu->download(gpu->richardsonLucy(in, psf, p)), want), 1e-4) << what;
  }
  Image vol = randomImage({12, 40, 36}, 5, 0.1f, 1.f);
  DeconvolveParams p3;
  p3.threeD = true;
  CPU_OR_SKIP(want3, cpu->richardsonLucy(vol, psf, p3));
  EXPECT_LT(relativeL2(gpu->download(gpu->richardsonLucy(vol, psf, p3)), want3), 1e-4);
}

TEST_F(CudaParity, SegmentLabelsExactlyAndMeasuresAlike) {
  Image sky = skyImage(257, 7);
  for (int conn : {4, 8}) {
    SegmentParams p;
    p.connectivity = conn;
    p.minPixels = 3;
    p.clip.maxIterations = 0;
    CPU_OR_SKIP(want, cpu->segment(sky, p));
    Segmentation got = gpu->segment(sky, p);
    expectRelative(got.threshold, want.threshold, 1e-6, "threshold");
    LabelImage gl = gpu->download(got.labels);
    ASSERT_EQ(gl.shape(), want.labels.shape());
    for (int64_t i = 0; i < gl.shape().count(); ++i)
      ASSERT_EQ(gl.data()[i], want.labels.data()[i]) << "connectivity " << conn << " index " << i;
    ASSERT_EQ(got.sources.size(), want.sources.size());
    ASSERT_GT(got.sources.size(), 10u);
    for (size_t k = 0; k < got.sources.size(); ++k) {
      const Source &g = got.sources[k], &c = want.sources[k];
      std::string what = "source " + std::to_string(k + 1);
      EXPECT_EQ(g.label, c.label) << what;
      EXPECT_EQ(g.npix, c.npix) << what;
      expectRelative(g.flux, c.flux, 1e-5, what + " flux");
      expectRelative(g.centroidX, c.centroidX, 1e-5, what + " x");
      expectRelative(g.centroidY, c.centroidY, 1e-5, what + " y");
      EXPECT_EQ(g.peak, c.peak) << what;
      EXPECT_EQ(g.peakX, c.peakX) << what;
      EXPECT_EQ(g.peakY, c.peakY) << what;
      EXPECT_EQ(g.xMin, c.xMin) << what;
      EXPECT_EQ(g.xMax, c.xMax) << what;
      EXPECT_EQ(g.yMin, c.yMin) << what;
      EXPECT_EQ(g.yMax, c.yMax) << what;
      EXPECT_EQ(g.z, c.z) << what;
    }
  }
}

}  // namespace
