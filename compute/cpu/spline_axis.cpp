// The one-axis spline machinery of compute/cpu/spline_axis.h.
#include "compute/cpu/spline_axis.h"

namespace stacklens::compute::cpu {
namespace {

// SciPy's mirror initial value for the causal pass (ni_splines.c, _init_causal_mirror),
// summing only the terms that can still change a double.
template <class Get>
double causalStart(Get c, int64_t n) {
  const double zn1 = std::pow(kPole, double(n - 1));
  double sum = c(0) + zn1 * c(n - 1);
  double zi = kPole;
  for (int64_t i = 1; i < n - 1; ++i) {
    sum += zi * (c(i) + zn1 * c(n - 1 - i));
    zi *= kPole;
    if (std::fabs(zi) < 1e-20 && std::fabs(zn1) < 1e-20) break;
  }
  return sum / (1.0 - zn1 * zn1);
}

}  // namespace

int64_t mirrorIndex(int64_t i, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * n - 2;
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

void prefilterLine(double* c, int64_t n) {
  if (n < 2) return;
  const double gain = (1.0 - kPole) * (1.0 - 1.0 / kPole);
  for (int64_t i = 0; i < n; ++i) c[i] *= gain;
  c[0] = causalStart([c](int64_t i) { return c[i]; }, n);
  for (int64_t i = 1; i < n; ++i) c[i] += kPole * c[i - 1];
  c[n - 1] = (kPole * c[n - 2] + c[n - 1]) * kPole / (kPole * kPole - 1.0);
  for (int64_t i = n - 2; i >= 0; --i) c[i] = kPole * (c[i + 1] - c[i]);
}

void prefilterBlock(double* block, int64_t n, int64_t width) {
  if (n < 2) return;
  const double gain = (1.0 - kPole) * (1.0 - 1.0 / kPole);
  for (int64_t i = 0; i < n * width; ++i) block[i] *= gain;
  for (int64_t b = 0; b < width; ++b)
    block[b] = causalStart([&](int64_t i) { return block[i * width + b]; }, n);
  for (int64_t i = 1; i < n; ++i) {
    double* cur = block + i * width;
    const double* prev = cur - width;
    for (int64_t b = 0; b < width; ++b) cur[b] += kPole * prev[b];
  }
  double* last = block + (n - 1) * width;
  for (int64_t b = 0; b < width; ++b)
    last[b] = (kPole * last[b - width] + last[b]) * kPole / (kPole * kPole - 1.0);
  for (int64_t i = n - 2; i >= 0; --i) {
    double* cur = block + i * width;
    const double* next = cur + width;
    for (int64_t b = 0; b < width; ++b) cur[b] = kPole * (next[b] - cur[b]);
  }
}

std::vector<Taps> makeTaps(int64_t nIn, int64_t nOut, int order) {
  const double scale = nOut > 1 ? double(nIn - 1) / double(nOut - 1) : 1.0;
  std::vector<Taps> taps(static_cast<size_t>(nOut));
  for (int64_t o = 0; o < nOut; ++o) {
    double c = double(o) * scale;
    if (c > double(nIn - 1)) c = 2.0 * double(nIn - 1) - c;  // rounding overshoot: mirror back
    const double f = std::floor(c);
    const double t = c - f;
    Taps& tp = taps[o];
    if (order == 1) {
      tp.index = {mirrorIndex(int64_t(f), nIn), mirrorIndex(int64_t(f) + 1, nIn), 0, 0};
      tp.weight = {1.0 - t, t, 0.0, 0.0};
    } else {
      for (int j = 0; j < 4; ++j) tp.index[j] = mirrorIndex(int64_t(f) - 1 + j, nIn);
      const double u = 1.0 - t;
      tp.weight = {u * u * u / 6.0, (4.0 - 6.0 * t * t + 3.0 * t * t * t) / 6.0,
                   (1.0 + 3.0 * t + 3.0 * t * t - 3.0 * t * t * t) / 6.0, t * t * t / 6.0};
    }
  }
  return taps;
}

}  // namespace stacklens::compute::cpu
