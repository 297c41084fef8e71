// The real FFT as slab and column passes (compute/cpu/slab_column_fft.h) filters as FFTW's plans
// of the whole frame do: 2D and 3D, even and odd sides, a last block of columns narrower than
// the others.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/slab_column_fft.h"
#include "compute/cpu/thread_pool.h"
#include "compute/image.h"

namespace {

using namespace stacklens::compute;
using namespace stacklens::compute::cpu;

TEST(SlabColumnFft, FiltersAsTheWholeFramePlans) {
  ThreadPool pool(2);
  // 2D columns x/2 + 1 = 33, 4, 1, 61; 3D y · (x/2 + 1) = 27, 35: blocks of 16 leave a narrower
  // last block.
  const std::vector<Shape> shapes = {{1, 48, 64},  {1, 9, 7}, {1, 1, 1},
                                     {1, 35, 120}, {6, 9, 4}, {5, 7, 9}};
  for (const Shape& f : shapes) {
    SCOPED_TRACE(std::to_string(f.z) + "x" + std::to_string(f.y) + "x" + std::to_string(f.x));
    const FftPlans& plans = fftPlans(f.z, f.y, f.x, pool.size());
    const size_t n = plans.realCount(), nc = plans.complexCount();
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    FftwFloats image = allocFloats(n), expected = allocFloats(n), actual = allocFloats(n);
    for (size_t i = 0; i < n; ++i) image[i] = u(rng);
    // A multiplier as Richardson–Lucy's OTF: the transform of a real kernel.
    FftwFloats kernel = allocFloats(n);
    for (size_t i = 0; i < n; ++i) kernel[i] = u(rng);
    FftwComplex h = allocComplex(nc), spectrum = allocComplex(nc);
    plans.r2c(kernel.get(), h.get());
    SlabColumnFft passes(f.z, f.y, f.x, pool);
    const int64_t S = passes.slabValues();
    ASSERT_EQ(passes.slabCount() * S, int64_t(n));
    FftwComplex blocked = allocComplex(passes.blockedCount());
    passes.toColumnBlocks(h.get(), blocked.get());

    for (bool conjugate : {false, true}) {
      // The whole frame's plans: c2r(r2c(image) · h), h conjugated for a correlation.
      plans.r2c(image.get(), spectrum.get());
      for (size_t i = 0; i < nc; ++i) {
        std::complex<float> s(spectrum[i][0], spectrum[i][1]), m(h[i][0], h[i][1]);
        s *= conjugate ? std::conj(m) : m;
        spectrum[i][0] = s.real();
        spectrum[i][1] = s.imag();
      }
      plans.c2r(spectrum.get(), expected.get());

      passes.slabs(spectrum.get(), false, true, [&](int64_t s, float* v) {
        std::memcpy(v, image.get() + s * S, size_t(S) * sizeof(float));
      });
      passes.filterColumns(spectrum.get(), blocked.get(), conjugate);
      passes.slabs(spectrum.get(), true, false, [&](int64_t s, float* v) {
        std::memcpy(actual.get() + s * S, v, size_t(S) * sizeof(float));
      });
      // Both are sums of n · n products of values up to 1 in float: compare against the largest.
      double peak = 0, worst = 0;
      for (size_t i = 0; i < n; ++i) {
        peak = std::max(peak, std::abs(double(expected[i])));
        worst = std::max(worst, std::abs(double(expected[i]) - double(actual[i])));
      }
      EXPECT_LE(worst, 1e-5 * peak) << "conjugate " << conjugate;
      EXPECT_GT(peak, 0);
    }
  }
}

}  // namespace
