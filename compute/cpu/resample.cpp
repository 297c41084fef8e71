// Zoom by linear or cubic B-spline interpolation on the CPU, matching
// scipy.ndimage.zoom(order=1|3, mode='mirror', grid_mode=False).
//
// Semantics (the CUDA backend follows the same definition, to float rounding):
// - Output length per axis: nOut = round-half-to-even(n · zoom) in double, as Python's round().
// - Output index o samples input coordinate c = o · (n − 1) / (nOut − 1); c = 0 when nOut == 1.
// - order 3: the input is first turned into cubic B-spline coefficients by the exact recursive
//   prefilter (pole √3 − 2, gain 6) with SciPy's mirror initial conditions (c = 0 when n == 1),
//   in double; the value at c is Σ_{j=0..3} β³(c − i_j)·coef[mirror(i_j)], i_j = ⌊c⌋ − 1 + j.
//   order 1: no prefilter; (1 − t)·v[mirror(⌊c⌋)] + t·v[mirror(⌊c⌋ + 1)], t = c − ⌊c⌋.
// - mirror(i): whole-sample symmetric (d c b | a b c d | c b a), repeated; 0 when n == 1.
// - The interpolation is separable, so it runs one axis at a time (shrinking axes first, float32
//   between passes); this equals SciPy's tensor-product sum up to rounding (~1e-7 relative).
// - An axis whose output length equals its input length samples the integer coordinates, where
//   the spline reproduces the data exactly, so it is left untouched.
// - Invalid: zoom not finite or ≤ 0, an output length of 0, order other than 1 or 3.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {
namespace {

int64_t mirrorIndex(int64_t i, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * n - 2;
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

const double kPole = std::sqrt(3.0) - 2.0;  // the cubic B-spline's pole

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

// Cubic prefilter of one contiguous line in place.
void prefilterLine(double* c, int64_t n) {
  if (n < 2) return;
  const double gain = (1.0 - kPole) * (1.0 - 1.0 / kPole);
  for (int64_t i = 0; i < n; ++i) c[i] *= gain;
  c[0] = causalStart([c](int64_t i) { return c[i]; }, n);
  for (int64_t i = 1; i < n; ++i) c[i] += kPole * c[i - 1];
  c[n - 1] = (kPole * c[n - 2] + c[n - 1]) * kPole / (kPole * kPole - 1.0);
  for (int64_t i = n - 2; i >= 0; --i) c[i] = kPole * (c[i + 1] - c[i]);
}

// Cubic prefilter along the first index of block[i * width + b], vectorised over b.
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

// Where output sample o reads the input and with what weights (taps = order + 1 ≤ 4).
struct Taps {
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
};

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

// The array as (outer, n, inner): the axis has length n and stride inner.
struct AxisView {
  int64_t outer, n, inner;
};

constexpr int64_t kColumns = 64;  // columns filtered together when the axis is not x

Image resampleAxis(const Image& in, int axis, int64_t nOut, int order, const Job& job,
                   ThreadPool& pool) {
  const Shape s = in.shape();
  const AxisView v = axis == 0   ? AxisView{1, s.z, s.y * s.x}
                     : axis == 1 ? AxisView{s.z, s.y, s.x}
                                 : AxisView{s.z * s.y, s.x, 1};
  Shape outShape = s;
  (axis == 0 ? outShape.z : axis == 1 ? outShape.y : outShape.x) = nOut;
  Image out = Image::hostUninitialized(outShape);
  const std::vector<Taps> taps = makeTaps(v.n, nOut, order);
  const int ntaps = order + 1;
  const float* src = in.data();
  float* dst = out.data();

  if (v.inner == 1) {
    pool.parallelFor(v.outer, [&](int64_t begin, int64_t end) {
      std::vector<double> line(static_cast<size_t>(v.n));
      for (int64_t l = begin; l < end; ++l) {
        job.checkCancelled();
        std::copy_n(src + l * v.n, v.n, line.data());
        if (order == 3) prefilterLine(line.data(), v.n);
        float* o = dst + l * nOut;
        for (int64_t k = 0; k < nOut; ++k) {
          double sum = 0;
          for (int j = 0; j < ntaps; ++j) sum += taps[k].weight[j] * line[taps[k].index[j]];
          o[k] = static_cast<float>(sum);
        }
      }
    });
    return out;
  }

  const int64_t blocksPerOuter = (v.inner + kColumns - 1) / kColumns;
  pool.parallelFor(v.outer * blocksPerOuter, [&](int64_t begin, int64_t end) {
    std::vector<double> block(static_cast<size_t>(v.n * kColumns));
    std::vector<double> sum(static_cast<size_t>(kColumns));
    for (int64_t task = begin; task < end; ++task) {
      job.checkCancelled();
      const int64_t outerIndex = task / blocksPerOuter;
      const int64_t b0 = (task % blocksPerOuter) * kColumns;
      const int64_t width = std::min(kColumns, v.inner - b0);
      const float* base = src + outerIndex * v.n * v.inner + b0;
      for (int64_t i = 0; i < v.n; ++i)
        std::copy_n(base + i * v.inner, width, block.data() + i * width);
      if (order == 3) prefilterBlock(block.data(), v.n, width);
      float* obase = dst + outerIndex * nOut * v.inner + b0;
      for (int64_t k = 0; k < nOut; ++k) {
        std::fill_n(sum.data(), width, 0.0);
        for (int j = 0; j < ntaps; ++j) {
          const double w = taps[k].weight[j];
          const double* row = block.data() + taps[k].index[j] * width;
          for (int64_t b = 0; b < width; ++b) sum[b] += w * row[b];
        }
        float* o = obase + k * v.inner;
        for (int64_t b = 0; b < width; ++b) o[b] = static_cast<float>(sum[b]);
      }
    }
  });
  return out;
}

}  // namespace

Image resample(const Image& in, const ResampleParams& p, const Job& job, ThreadPool& pool) {
  if (in.empty()) throw InvalidArgument("resample: the image is empty");
  if (p.order != 1 && p.order != 3)
    throw InvalidArgument("resample: order must be 1 (linear) or 3 (cubic), got " +
                          std::to_string(p.order));
  const std::array<double, 3> zoom{p.zoomZ, p.zoomY, p.zoomX};
  const std::array<int64_t, 3> nIn{in.shape().z, in.shape().y, in.shape().x};
  const char* axisName[3] = {"z", "y", "x"};
  std::array<int64_t, 3> nOut{};
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(zoom[a]) || zoom[a] <= 0)
      throw InvalidArgument(std::string("resample: zoom on ") + axisName[a] +
                            " must be finite and > 0 (got " + std::to_string(zoom[a]) + ")");
    const double length = std::nearbyint(double(nIn[a]) * zoom[a]);  // ties to even
    if (length < 1)
      throw InvalidArgument(std::string("resample: zoom ") + std::to_string(zoom[a]) + " on " +
                            axisName[a] + " gives an output length of 0 (input " +
                            std::to_string(nIn[a]) + ")");
    if (length > 1.0e9)
      throw InvalidArgument(std::string("resample: zoom ") + std::to_string(zoom[a]) + " on " +
                            axisName[a] + " gives an output length over 10^9");
    nOut[a] = static_cast<int64_t>(length);
  }
  if (double(nOut[0]) * double(nOut[1]) * double(nOut[2]) > 4.0e9)
    throw InvalidArgument("resample: the output would have more than 4·10^9 voxels");

  // Shrinking axes first keeps the intermediate images small.
  std::array<int, 3> order{0, 1, 2};
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return double(nOut[a]) / double(nIn[a]) < double(nOut[b]) / double(nIn[b]);
  });
  Image current = in;
  int done = 0;
  for (int axis : order) {
    if (nOut[axis] != nIn[axis])
      current = resampleAxis(current, axis, nOut[axis], p.order, job, pool);
    job.report(double(++done) / 3.0);
  }
  if (current.data() == in.data()) current = cloneHost(in);
  current.spacing = in.spacing;
  current.spacing.z *= double(nIn[0]) / double(nOut[0]);
  current.spacing.y *= double(nIn[1]) / double(nOut[1]);
  current.spacing.x *= double(nIn[2]) / double(nOut[2]);
  return current;
}

}  // namespace stacklens::compute::cpu
