// One axis of spline interpolation as scipy.ndimage.zoom(mode='mirror', grid_mode=False) does it:
// mirror indices, the cubic B-spline prefilter and each output sample's taps. Shared by the CPU
// backend's resample and the streamed resample of stacks larger than memory.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace stacklens::compute::cpu {

inline const double kPole = std::sqrt(3.0) - 2.0;  // the cubic B-spline's pole

// Whole-sample symmetric index (d c b | a b c d | c b a), repeated; 0 when n == 1.
int64_t mirrorIndex(int64_t i, int64_t n);

// Cubic prefilter of one contiguous line in place (SciPy's mirror initial conditions).
void prefilterLine(double* c, int64_t n);
// Cubic prefilter along the first index of block[i * width + b], vectorised over b.
void prefilterBlock(double* block, int64_t n, int64_t width);

// Where output sample o reads the input and with what weights (taps = order + 1 ≤ 4).
struct Taps {
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
};
// Output o samples input coordinate o · (nIn − 1) / (nOut − 1); indices mirrored into [0, nIn).
std::vector<Taps> makeTaps(int64_t nIn, int64_t nOut, int order);

}  // namespace stacklens::compute::cpu
