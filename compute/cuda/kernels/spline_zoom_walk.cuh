// The cubic zoom along y or z (the axes whose neighbouring values are a whole row or slice apart)
// with each thread walking one column along the axis, for compute/cuda/*.cu only. A warp takes 32
// neighbouring columns and one run of outputs (splineZoomAxis's runs, kernels/spline_zoom.cuh),
// whose coefficients it makes segment by segment as the kernel it replaced did, so that its
// results are the same bit for bit: a thread loads its column's samples straight into
// registers, a segment of 16 at a time (every load a warp's 32 neighbouring values), makes the
// segment's coefficients there and writes each output whose four coefficients it holds. Nothing
// is staged in shared memory but the run's weights, and a coefficient is not read back: the
// passes that stage and gather in shared memory are held by those reads, not by DRAM.
// Enlarging, where the stores outnumber the loads, a thread walks two neighbouring columns (each
// load and store a float2): the two columns' recursions interleave, and a window's weights, tests
// and addresses serve both. The positions that neighbouring runs share are kept in L2 for their
// second read (loadKept). Launch shape: tuning/resample.cuh.
#pragma once

#include <type_traits>

#include "compute/cuda/kernels/spline_zoom.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr int kWalkWarps = SplineZoomPolicy::walkThreads / kZoomLines;
static_assert(SplineZoomPolicy::walkThreads % kZoomLines == 0);

// Most outputs that one window of four coefficients can have, as the kernel's unrolled gather
// takes them (more, rarely, through a loop after it): 1 when shrinking, ⌈1 / step⌉ up to 4.
inline int splineWalkWindowOutputs(const SplineZoomAxis& a) {
  return a.step >= 1.0 ? 1 : a.step >= 0.5 ? 2 : a.step >= 1.0 / 3 ? 3 : 4;
}
constexpr int kMostWindowOutputs = 4;

// Shared bytes a block needs: its run's weights (with room for the unrolled gather's reads past
// the last), then for each coefficient position m the number of the run's outputs whose first
// coefficient lies before m − 2 (each output's four coefficients end at or before m), up to 16
// past the last coefficient.
inline size_t splineWalkSharedBytes(const SplineZoomAxis& a) {
  return size_t(a.outputsPerBlock + kMostWindowOutputs) * sizeof(SplineTap) +
         size_t(a.maxCoefficients + 16) * sizeof(int);
}

// mirrorIndex for an int position of a line of n > 0 samples.
__device__ __forceinline__ int mirroredAt(int i, int n) {
  if (static_cast<unsigned>(i) < static_cast<unsigned>(n)) return i;
  if (n == 1) return 0;
  const int period = 2 * n - 2;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

// A read-only load that asks L2 to keep the line (evict-last). For a run's first positions: the run
// before reads them too, at its end, while its blocks run beside this one's; with the normal policy
// the lines streamed in between push them out of L2 and they come from DRAM twice.
__device__ __forceinline__ float loadKept(const float* p) {
  float v;
  asm("{\n .reg .b64 q;\n createpolicy.fractional.L2::evict_last.b64 q, 1.0;\n"
      " ld.global.nc.L2::cache_hint.f32 %0, [%1], q;\n}"
      : "=f"(v)
      : "l"(p));
  return v;
}
__device__ __forceinline__ float2 loadKept(const float2* p) {
  float2 v;
  asm("{\n .reg .b64 q;\n createpolicy.fractional.L2::evict_last.b64 q, 1.0;\n"
      " ld.global.nc.L2::cache_hint.v2.f32 {%0, %1}, [%2], q;\n}"
      : "=f"(v.x), "=f"(v.y)
      : "l"(p));
  return v;
}
template <bool kKeep, class V>
__device__ __forceinline__ V loadSample(const V* p) {
  if constexpr (kKeep)
    return loadKept(p);
  else
    return __ldg(p);
}

// A segment's 16 samples x(p0) … x(p0 + 15) of a column, or of two neighbouring columns where V is
// float2 (from `src`, positions `pitch` V apart). No output needs the positions from `end` on:
// they are read only where the whole segment lies inside the line (a test for each would cost
// more than the unused loads).
template <bool kKeep = false, class V>
__device__ __forceinline__ void loadSegment(V (&v)[16], const V* __restrict__ src, int64_t pitch,
                                            int p0, int end, int n) {
  if (p0 >= end) return;
  if (p0 >= 0 && p0 + 16 <= n) {
    const V* s = src + int64_t(p0) * pitch;
#pragma unroll
    for (int m = 0; m < 16; ++m, s += pitch) v[m] = loadSample<kKeep>(s);
  } else {
#pragma unroll
    for (int m = 0; m < 16; ++m)
      if (p0 + m < end) v[m] = loadSample<kKeep>(src + int64_t(mirroredAt(p0 + m, n)) * pitch);
  }
}

// Column c (0 or 1) of a float or float2 value, and the value made of C columns.
template <int c>
__device__ __forceinline__ float columnOf(float v) {
  return v;
}
template <int c>
__device__ __forceinline__ float columnOf(float2 v) {
  return c == 0 ? v.x : v.y;
}
template <int C>
using WalkValue = std::conditional_t<C == 1, float, float2>;

// The array seen as (outer, n, inner) with `inner` = a.lines values between neighbours on the
// axis: warp w of block (blockIdx.x, blockIdx.y, blockIdx.z) makes C·32 columns from
// C·32·(kWalkWarps·blockIdx.x + w) (C neighbouring ones a thread: splineWalkColumns) and outputs
// [o0, o0 + outputsPerBlock) of slab outer0 + blockIdx.z, or with lastSlabsFirst of slab
// outer0 + gridDim.z − 1 − blockIdx.z: the pass before wrote the last slabs last, and they may
// still be in L2. K: splineWalkWindowOutputs. Offset: int where a.lines · kMostWindowOutputs fits
// (splineWalkNarrow), so that the outputs' addresses step in 32-bit multiply–adds; int64_t
// otherwise.
template <int K, int C = 1, int kMinBlocks = SplineZoomPolicy::walkBlocksPerSm,
          class Offset = int64_t>
__global__ void __launch_bounds__(SplineZoomPolicy::walkThreads, kMinBlocks)
    splineZoomWalk(const float* __restrict__ in, float* __restrict__ out, SplineZoomAxis a,
                   int oBlock0, int64_t outer0, bool lastSlabsFirst) {
  using V = WalkValue<C>;
  extern __shared__ float4 shared[];
  const int o0 = (oBlock0 + int(blockIdx.y)) * a.outputsPerBlock;
  const int outputs = min(a.outputsPerBlock, a.nOut - o0);
  const CoefficientRange r = coefficientsFor(a, o0, o0 + outputs);
  SplineTap* taps = reinterpret_cast<SplineTap*>(shared);
  int* ends = reinterpret_cast<int*>(taps + a.outputsPerBlock + kMostWindowOutputs);
  const int endSlots = r.count + 16;
  for (int i = threadIdx.x; i < outputs; i += SplineZoomPolicy::walkThreads) {
    int k;
    taps[i] = splineTap<1>(o0 + i, a.step, r.first, k);
    // Output i is the first whose first coefficient is at or past m − 2 for m in (before + 2,
    // k + 2], `before` being output i − 1's first coefficient.
    const int before =
        i == 0 ? -3 : static_cast<int>(floor(double(o0 + i - 1) * a.step)) - 1 - r.first;
    for (int m = max(before + 3, 0); m <= k + 2; ++m) ends[m] = i;
    if (i == outputs - 1)
      for (int m = k + 3; m < endSlots; ++m) ends[m] = outputs;
  }
  __syncthreads();
  letNextStart();
  waitForPrevious();
  const int64_t columns = a.lines / C;  // in Vs
  const int64_t group = int64_t(blockIdx.x) * kWalkWarps + threadIdx.x / kZoomLines;
  if (group * kZoomLines >= columns) return;
  const int64_t column = group * kZoomLines + threadIdx.x % kZoomLines;
  const bool inside = column < columns;
  const int64_t outer = outer0 + (lastSlabsFirst ? gridDim.z - 1 - blockIdx.z : blockIdx.z);
  // Lanes past the last column load a copy of it and store nothing: no branch per sample.
  const V* src =
      reinterpret_cast<const V*>(in + outer * a.n * a.lines) + (inside ? column : columns - 1);
  const int64_t pitch = columns;
  V* d = reinterpret_cast<V*>(out + (outer * a.nOut + o0) * a.lines) + column;  // output o's
  const Offset step = static_cast<Offset>(pitch);  // from output o to o + 1
  const int start = r.first - kSplineReach, end = r.first + r.count + kSplineReach;

  V cur[16], next[16];  // samples of this segment and the next
  float left[C];        // L at the segment's first coefficient, each column's
  {
    V before[16];
    if (o0 > 0) {  // the run before reads these positions again at its end
      loadSegment<true>(before, src, pitch, start, end, a.n);
      loadSegment<true>(cur, src, pitch, r.first, end, a.n);
      loadSegment<true>(next, src, pitch, r.first + 16, end, a.n);
    } else {
      loadSegment(before, src, pitch, start, end, a.n);
      loadSegment(cur, src, pitch, r.first, end, a.n);
      loadSegment(next, src, pitch, r.first + 16, end, a.n);
    }
    staticFor<C>([&]<int c>() {
      left[c] = splineLeftStart(
          [&](int m) { return columnOf<c>(m == 0 ? cur[0] : before[kSplineReach + m]); });
    });
  }
  float held[C][3] = {};  // the previous segment's last three coefficients
  int o = 0;
  for (int qa = 0; qa < r.count; qa += 16) {
    float c[C][16];
    staticFor<C>([&]<int cc>() {
      const auto x = [&](int m) { return columnOf<cc>(m < 16 ? cur[m] : next[m - 16]); };
      withSegmentLength(min(16, r.count - qa),
                        [&]<int N>() { splineSegmentFrom<N>(left[cc], x, c[cc]); });
      left[cc] = splineLeftStart([&](int m) { return x(16 + m); });
    });
#pragma unroll
    for (int m = 0; m < 16; ++m) cur[m] = next[m];
    loadSegment(next, src, pitch, r.first + qa + 32, end, a.n);
    // Window j holds coefficients qa − 3 + j … qa + j: the outputs whose first one is qa − 3 + j.
    float w[C][19];
#pragma unroll
    for (int cc = 0; cc < C; ++cc) {
#pragma unroll
      for (int m = 0; m < 3; ++m) w[cc][m] = held[cc][m];
#pragma unroll
      for (int m = 0; m < 16; ++m) w[cc][m + 3] = c[cc][m];
    }
    // Output o of the window that starts at w[·][j].
    const auto valueAt = [&](int j, int oo) {
      const SplineTap t = taps[oo];
      if constexpr (C == 1)
        return splineOf(w[0][j], w[0][j + 1], w[0][j + 2], w[0][j + 3], t);
      else
        return float2{splineOf(w[0][j], w[0][j + 1], w[0][j + 2], w[0][j + 3], t),
                      splineOf(w[1][j], w[1][j + 1], w[1][j + 2], w[1][j + 3], t)};
    };
#pragma unroll
    for (int j4 = 0; j4 < 16; j4 += 4) {
      const int4 e = *reinterpret_cast<const int4*>(ends + qa + j4);
#pragma unroll
      for (int j = j4; j < j4 + 4; ++j) {
        const int last = j == j4 ? e.x : j == j4 + 1 ? e.y : j == j4 + 2 ? e.z : e.w;
        // The window's first K outputs unrolled (their weights read whether or not they exist),
        // any more in a loop.
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const V v = valueAt(j, o + k);
          if (inside && o + k < last) d[k * step] = v;
        }
        const int made = min(last - o, K);
        o += made;
        d += made * step;
        for (; o < last; ++o, d += step) {
          const V v = valueAt(j, o);
          if (inside) *d = v;
        }
      }
    }
#pragma unroll
    for (int cc = 0; cc < C; ++cc) {
      held[cc][0] = c[cc][13];
      held[cc][1] = c[cc][14];
      held[cc][2] = c[cc][15];
    }
  }
}

// Whether the outputs' offsets of axis `a` fit an int (splineZoomWalk's Offset).
inline bool splineWalkNarrow(const SplineZoomAxis& a) {
  return a.lines <= INT32_MAX / kMostWindowOutputs;
}

// Columns a thread walks along axis `a`: two where enlarging, if the lines pair up (each pair
// 8-byte aligned on every row), otherwise one.
inline int splineWalkColumns(const SplineZoomAxis& a) {
  return splineWalkWindowOutputs(a) >= 2 && a.lines % 2 == 0 ? 2 : 1;
}

// The instance of splineZoomWalk for axis `a`.
using SplineWalkKernel = void (*)(const float*, float*, SplineZoomAxis, int, int64_t, bool);
template <class Offset>
SplineWalkKernel splineZoomWalkWith(const SplineZoomAxis& a) {
  constexpr int kPairs = SplineZoomPolicy::walkBlocksPerSmPairs;
  constexpr int kEnlarging = SplineZoomPolicy::walkBlocksPerSmEnlarging;
  const bool pairs = splineWalkColumns(a) == 2;
  switch (splineWalkWindowOutputs(a)) {
    case 1:
      return splineZoomWalk<1, 1, SplineZoomPolicy::walkBlocksPerSm, Offset>;
    case 2:
      return pairs ? splineZoomWalk<2, 2, kPairs, Offset>
                   : splineZoomWalk<2, 1, kEnlarging, Offset>;
    case 3:
      return pairs ? splineZoomWalk<3, 2, kPairs, Offset>
                   : splineZoomWalk<3, 1, kEnlarging, Offset>;
    default:
      return pairs ? splineZoomWalk<4, 2, kPairs, Offset>
                   : splineZoomWalk<4, 1, kEnlarging, Offset>;
  }
}
inline SplineWalkKernel splineZoomWalkFor(const SplineZoomAxis& a) {
  return splineWalkNarrow(a) ? splineZoomWalkWith<int>(a) : splineZoomWalkWith<int64_t>(a);
}

}  // namespace
}  // namespace stacklens::compute::cuda
