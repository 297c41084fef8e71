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
#include "compute/cpu/spline_axis.h"

namespace stacklens::compute::cpu {
namespace {

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
  validate(p);
  if (in.empty()) throw InvalidArgument("resample: the image is empty");
  const std::array<int64_t, 3> nIn{in.shape().z, in.shape().y, in.shape().x};
  const Shape outShape = resampledShape(in.shape(), p);
  const std::array<int64_t, 3> nOut{outShape.z, outShape.y, outShape.x};
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
