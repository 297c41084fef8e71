// The 2D real FFT as row and column passes (compute/cpu/row_column_fft.h) filters as FFTW's 2D
// plans do, for even and odd sides and a last block of columns narrower than the others.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/row_column_fft.h"
#include "compute/cpu/thread_pool.h"

namespace {

using namespace stacklens::compute::cpu;

TEST(RowColumnFft, FiltersAsTheTwoDimensionalPlans) {
  ThreadPool pool(2);
  // x/2 + 1 = 33, 4, 1 and 61 columns: blocks of 16 leave 1 (and so on) for the last block.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{48, 64}, {9, 7}, {1, 1}, {35, 120}};
  for (const auto& [Y, X] : shapes) {
    SCOPED_TRACE(std::to_string(Y) + "x" + std::to_string(X));
    const FftPlans& plans = fftPlans(1, Y, X, pool.size());
    const size_t n = size_t(Y * X), nc = plans.complexCount();
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    FftwFloats image = allocFloats(n), expected = allocFloats(n), actual = allocFloats(n);
    for (size_t i = 0; i < n; ++i) image[i] = u(rng);
    // A multiplier as Richardson–Lucy's OTF: the transform of a real kernel.
    FftwFloats kernel = allocFloats(n);
    for (size_t i = 0; i < n; ++i) kernel[i] = u(rng);
    FftwComplex h = allocComplex(nc), spectrum = allocComplex(nc);
    plans.r2c(kernel.get(), h.get());
    RowColumnFft passes(Y, X, pool);
    FftwComplex blocked = allocComplex(passes.blockedCount());
    passes.toColumnBlocks(h.get(), blocked.get());

    for (bool conjugate : {false, true}) {
      // The 2D plans: c2r(r2c(image) · h), h conjugated for a correlation.
      plans.r2c(image.get(), spectrum.get());
      for (size_t i = 0; i < nc; ++i) {
        std::complex<float> s(spectrum[i][0], spectrum[i][1]), m(h[i][0], h[i][1]);
        s *= conjugate ? std::conj(m) : m;
        spectrum[i][0] = s.real();
        spectrum[i][1] = s.imag();
      }
      plans.c2r(spectrum.get(), expected.get());

      passes.rows(spectrum.get(), false, true, [&](int64_t i, float* row) {
        std::memcpy(row, image.get() + i * X, size_t(X) * sizeof(float));
      });
      passes.filterColumns(spectrum.get(), blocked.get(), conjugate);
      passes.rows(spectrum.get(), true, false, [&](int64_t i, float* row) {
        std::memcpy(actual.get() + i * X, row, size_t(X) * sizeof(float));
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
