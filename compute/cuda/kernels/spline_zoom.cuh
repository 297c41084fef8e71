// One axis of scipy.ndimage.zoom(order=3, mode='mirror') in one pass, for compute/cuda/*.cu only.
// A block takes 32 lines (rows along x, or neighbouring columns along y or z) and a run of outputs
// along the axis: it stages the samples those outputs need, mirror-extended by the prefilter's
// reach, in shared memory, turns them into cubic B-spline coefficients there, and gathers four
// coefficients per output. The array is read once and the result written once; a separate
// prefilter pass would read and write the whole array once more. Launch shape:
// tuning/resample.cuh.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/tuning/resample.cuh"

namespace stacklens::compute::cuda {
namespace {

using SplineZoomPolicy = tuning::SplineZoomPolicy;
constexpr int kZoomLines = 32;              // lines per block: a warp's width
constexpr int kZoomPitch = kZoomLines + 1;  // shared row pitch: lanes on different banks
constexpr int kZoomThreadRows = SplineZoomPolicy::threads / kZoomLines;
static_assert(SplineZoomPolicy::threads % kZoomLines == 0);

// The prefilter's impulse response is √3·z^|k| with z = √3 − 2, the inverse of the cubic
// B-spline's (z + 4 + z⁻¹)/6. Its sums are cut after 16 terms each way, where |z|^17 < 2e-10:
// on the mirror-extended line this equals SciPy's exact recursive filter to float rounding.
constexpr int kSplineReach = 16;
constexpr float kSplinePole = -0.26794919243112270f;  // √3 − 2
constexpr float kSplineGain = 1.7320508075688772f;    // √3

// Where one axis's outputs come from: the input and output lengths, the input position of each
// output step, and how a block splits the outputs (SplineZoomPolicy).
struct SplineZoomAxis {
  int n, nOut;
  double step;          // (n − 1) / (nOut − 1): output o samples input position o·step
  int outputsPerBlock;  // outputs along the axis per block
  int maxCoefficients;  // the most coefficients a block's outputs can need
  int64_t lines;        // along x: the rows; along y or z: the columns (values between steps)
};

// Shared floats a block needs: samples (coefficients plus the reach each side) and coefficients,
// 32 lines each.
inline size_t splineZoomSharedBytes(const SplineZoomAxis& a) {
  return size_t(2 * a.maxCoefficients + 2 * kSplineReach) * kZoomPitch * sizeof(float);
}

// Turns a line's staged samples into its coefficients c[q] = √3·(L[q] + R[q]), L[q] =
// Σ_{k≥0} z^k x[q−k] and R[q] = Σ_{k≥1} z^k x[q+k], one segment per thread: each segment starts
// both sums from their first 16 terms, then runs the recursions L[q] = x[q] + z·L[q−1] and
// R[q] = z·(x[q+1] + R[q+1]) across it, a few operations per value where the whole 33-tap sum
// costs 33. `x` points at the line's first coefficient position, `c` at its first coefficient.
__device__ inline void splineCoefficients(const float* x, float* c, int count) {
  constexpr int kSegment = SplineZoomPolicy::segment;
  const int segments = (count + kSegment - 1) / kSegment;
  for (int s = threadIdx.y; s < segments; s += kZoomThreadRows) {
    const int qa = s * kSegment, qb = min(qa + kSegment, count);
    float left = x[(qa - kSplineReach) * kZoomPitch];
#pragma unroll
    for (int k = kSplineReach - 1; k >= 0; --k)
      left = x[(qa - k) * kZoomPitch] + kSplinePole * left;
    c[qa * kZoomPitch] = left;
    for (int q = qa + 1; q < qb; ++q) {
      left = x[q * kZoomPitch] + kSplinePole * left;
      c[q * kZoomPitch] = left;
    }
    float right = x[(qb - 1 + kSplineReach) * kZoomPitch];
#pragma unroll
    for (int k = kSplineReach - 1; k >= 1; --k)
      right = x[(qb - 1 + k) * kZoomPitch] + kSplinePole * right;
    right *= kSplinePole;
    c[(qb - 1) * kZoomPitch] = kSplineGain * (c[(qb - 1) * kZoomPitch] + right);
    for (int q = qb - 2; q >= qa; --q) {
      right = kSplinePole * (x[(q + 1) * kZoomPitch] + right);
      c[q * kZoomPitch] = kSplineGain * (c[q * kZoomPitch] + right);
    }
  }
}

// The cubic B-spline at input position o·step from the coefficients `c` (c[0] at position q0).
__device__ inline float splineAt(const float* c, int q0, int o, double step) {
  const double pos = double(o) * step;
  const double fl = floor(pos);
  const float t = static_cast<float>(pos - fl), u = 1.f - t;
  const float w0 = u * u * u / 6.f;
  const float w1 = (3.f * t * t * t - 6.f * t * t + 4.f) / 6.f;
  const float w3 = t * t * t / 6.f;
  const float w2 = 1.f - w0 - w1 - w3;
  const float* p = c + (static_cast<int>(fl) - 1 - q0) * kZoomPitch;
  return w0 * p[0] + w1 * p[kZoomPitch] + w2 * p[2 * kZoomPitch] + w3 * p[3 * kZoomPitch];
}

// Where a staged sample goes in shared memory, and its value.
struct StagedSample {
  int at;
  float v;
};

// samples[load(i).at] = load(i).v for i = first, first + step, … < count, with
// SplineZoomPolicy::loadsInFlight loads issued before their stores: the block waits for memory
// once per batch, not once per sample.
template <class Load>
__device__ inline void stageSamples(int count, int first, int step, float* samples, Load load) {
  constexpr int kBatch = SplineZoomPolicy::loadsInFlight;
  for (int i0 = first; i0 < count; i0 += kBatch * step) {
    StagedSample v[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int i = i0 + k * step;
      v[k] = i < count ? load(i) : StagedSample{0, 0.f};
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if (i0 + k * step < count) samples[v[k].at] = v[k].v;
  }
}

// The first and last coefficient positions the outputs [o0, oEnd) read.
struct CoefficientRange {
  int first, count;
};
__device__ inline CoefficientRange coefficientsFor(const SplineZoomAxis& a, int o0, int oEnd) {
  const int first = static_cast<int>(floor(double(o0) * a.step)) - 1;
  const int last = static_cast<int>(floor(double(oEnd - 1) * a.step)) + 2;
  return {first, last - first + 1};
}

// Along x: block (blockIdx.x, blockIdx.y) makes outputs [o0, o0 + outputsPerBlock) of rows
// row0 + 32·blockIdx.y …; a warp loads a row's samples, and writes a row's outputs.
__global__ void __launch_bounds__(SplineZoomPolicy::threads)
    splineZoomRows(const float* __restrict__ in, float* __restrict__ out, SplineZoomAxis a,
                   int64_t row0) {
  extern __shared__ float shared[];
  const int o0 = blockIdx.x * a.outputsPerBlock;
  const int oEnd = min(o0 + a.outputsPerBlock, a.nOut);
  const CoefficientRange r = coefficientsFor(a, o0, oEnd);
  float* samples = shared;  // [position][line], from r.first − reach
  float* coefficients = shared + (a.maxCoefficients + 2 * kSplineReach) * kZoomPitch;
  const int64_t firstRow = row0 + int64_t(blockIdx.y) * kZoomLines;
  const int span = r.count + 2 * kSplineReach;
  for (int l = threadIdx.y; l < kZoomLines; l += kZoomThreadRows) {
    const int64_t row = firstRow + l;
    const float* src = in + row * a.n;
    stageSamples(span, threadIdx.x, kZoomLines, samples, [&](int p) {
      const float v =
          row < a.lines ? __ldg(src + mirrorIndex(r.first - kSplineReach + p, a.n)) : 0.f;
      return StagedSample{p * kZoomPitch + l, v};
    });
  }
  __syncthreads();
  splineCoefficients(samples + kSplineReach * kZoomPitch + threadIdx.x, coefficients + threadIdx.x,
                     r.count);
  __syncthreads();
  for (int l = threadIdx.y; l < kZoomLines; l += kZoomThreadRows) {
    const int64_t row = firstRow + l;
    if (row >= a.lines) break;
    for (int o = o0 + threadIdx.x; o < oEnd; o += kZoomLines)
      out[row * a.nOut + o] = splineAt(coefficients + l, r.first, o, a.step);
  }
}

// Along y or z, the array seen as (outer, n, inner) with `inner` = a.lines values between
// neighbours on the axis: block (blockIdx.x, blockIdx.y, blockIdx.z) makes 32 neighbouring
// columns × outputs [o0, o0 + outputsPerBlock) of slab outer0 + blockIdx.z; every load and store
// is a warp's 32 neighbouring values.
__global__ void __launch_bounds__(SplineZoomPolicy::threads)
    splineZoomColumns(const float* __restrict__ in, float* __restrict__ out, SplineZoomAxis a,
                      int oBlock0, int64_t outer0) {
  extern __shared__ float shared[];
  const int o0 = (oBlock0 + int(blockIdx.y)) * a.outputsPerBlock;
  const int oEnd = min(o0 + a.outputsPerBlock, a.nOut);
  const CoefficientRange r = coefficientsFor(a, o0, oEnd);
  float* samples = shared;
  float* coefficients = shared + (a.maxCoefficients + 2 * kSplineReach) * kZoomPitch;
  const int64_t column = int64_t(blockIdx.x) * kZoomLines + threadIdx.x;
  const bool inside = column < a.lines;
  const int64_t outer = outer0 + blockIdx.z;
  const float* src = in + outer * a.n * a.lines + column;
  const int span = r.count + 2 * kSplineReach;
  stageSamples(span, threadIdx.y, kZoomThreadRows, samples, [&](int p) {
    const float v =
        inside ? __ldg(src + mirrorIndex(r.first - kSplineReach + p, a.n) * a.lines) : 0.f;
    return StagedSample{p * kZoomPitch + int(threadIdx.x), v};
  });
  __syncthreads();
  splineCoefficients(samples + kSplineReach * kZoomPitch + threadIdx.x, coefficients + threadIdx.x,
                     r.count);
  __syncthreads();
  if (!inside) return;
  float* dst = out + outer * a.nOut * a.lines + column;
  for (int o = o0 + threadIdx.y; o < oEnd; o += kZoomThreadRows)
    dst[int64_t(o) * a.lines] = splineAt(coefficients + threadIdx.x, r.first, o, a.step);
}

// How one axis's outputs are split: runs whose coefficients fill about
// SplineZoomPolicy::coefficientsPerBlock, so that the reach staged twice (by the blocks on either
// side) stays a small share of a block's samples.
inline SplineZoomAxis splineZoomAxis(int64_t n, int64_t nOut, int64_t lines) {
  SplineZoomAxis a{};
  a.n = static_cast<int>(n);
  a.nOut = static_cast<int>(nOut);
  a.step = nOut > 1 ? double(n - 1) / double(nOut - 1) : 0.0;
  a.lines = lines;
  const int target = SplineZoomPolicy::coefficientsPerBlock;
  const double perBlock = a.step > 0 ? std::floor((target - 5) / a.step) + 1 : double(nOut);
  const double most = std::min<double>(SplineZoomPolicy::maxOutputsPerBlock, double(nOut));
  a.outputsPerBlock = static_cast<int>(std::max(1.0, std::min(perBlock, most)));
  // floor(b) − floor(a) ≤ ceil(b − a): a run of k outputs reads at most ceil((k−1)·step) + 4
  // coefficients; one more absorbs the rounding of the products.
  a.maxCoefficients = static_cast<int>(std::ceil((a.outputsPerBlock - 1) * a.step)) + 5;
  return a;
}

}  // namespace
}  // namespace stacklens::compute::cuda
