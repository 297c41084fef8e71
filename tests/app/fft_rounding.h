// Comparing float32 FFT results of two processes: FFTW measures its plans in each process, so
// the same run may round differently in another one (never compare those bit for bit).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace stacklens::testing {

// The errors are absolute (relative to the image's scale, not to each voxel), so the bound is a
// fraction of the largest value. Against a float64 reference, float32 3D Richardson–Lucy of up to
// 32 × 200 × 200 voxels and 50 iterations errs by at most 6.3e-7 of the largest value, so two
// plans differ by at most about 1.3e-6 of it; 1e-5 leaves a margin of eight, far below what a
// wrong halo, block or boundary gives (1e-3 and more). tests/python/references.py says the same.
constexpr double kFftRounding = 1e-5;

inline void expectWithinFftRounding(const std::vector<float>& got, const std::vector<float>& want,
                                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (float w : want)
    if (std::isfinite(w)) scale = std::max(scale, double(std::abs(w)));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::isnan(got[i]), std::isnan(want[i])) << what << " at " << i;
    if (std::isnan(want[i])) continue;
    ASSERT_LE(std::abs(double(got[i]) - want[i]), kFftRounding * scale)
        << what << " at " << i << ": " << got[i] << " vs " << want[i];
  }
}

}  // namespace stacklens::testing
