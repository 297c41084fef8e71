// One axis of scipy.ndimage.zoom(order=3, mode='mirror') in one pass, for compute/cuda/*.cu only:
// the B-spline prefilter's segments, the weights and the runs every pass shares, and the pass
// along x (along y or z: kernels/spline_zoom_walk.cuh). A block takes 32 rows and a run of outputs
// along them: it stages the samples those outputs need, mirror-extended by the prefilter's
// reach, in shared memory (asynchronous copies, all in flight at once, while it works out its
// outputs' weights), turns them into cubic B-spline coefficients there (a thread a segment, its
// samples and sums in registers), and gathers four coefficients per output. The array is read once
// and the result written once; a separate prefilter pass would read and write the whole array once
// more. Launch shape: tuning/resample.cuh.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/kernels/dependent_launch.cuh"
#include "compute/cuda/tuning/resample.cuh"

namespace stacklens::compute::cuda {
namespace {

using SplineZoomPolicy = tuning::SplineZoomPolicy;
constexpr int kZoomLines = 32;  // lines per block: a warp's width
// Shared row pitches (floats between a line's neighbouring positions). A warp's lanes stage
// neighbouring positions of one line, so the sample rows are padded onto different banks;
// coefficient rows are whole float4s, so that a lane reads four neighbouring lines' coefficients
// at once.
constexpr int kRowSamplePitch = kZoomLines + 1;
constexpr int kRowCoefficientPitch = kZoomLines + 4;
constexpr int kZoomThreadRows = SplineZoomPolicy::threads / kZoomLines;
static_assert(SplineZoomPolicy::threads % kZoomLines == 0);

// f.template operator()<c>() for c = 0 … C − 1.
template <int C, class F>
__device__ __forceinline__ void staticFor(F&& f) {
  [&]<int... c>(std::integer_sequence<int, c...>) { (f.template operator()<c>(), ...); }
  (std::make_integer_sequence<int, C>{});
}

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

// The four weights of one output: the same for all 32 lines, so a block works them out once per
// output (with where the output's first coefficient lies) while its samples are on their way.
struct alignas(16) SplineTap {
  float w0, w1, w2, w3;
};

// Offsets a block's table holds: its outputs rounded up to keep the samples after them aligned.
__host__ __device__ inline int splineOffsetSlots(const SplineZoomAxis& a) {
  return (a.outputsPerBlock + 3) / 4 * 4;
}

// Shared floats a block's samples take, rounded up to keep the coefficients after them aligned.
__host__ __device__ inline int splineSampleFloats(const SplineZoomAxis& a, int samplePitch) {
  return ((a.maxCoefficients + 2 * kSplineReach) * samplePitch + 3) / 4 * 4;
}

// Whether a block's coefficients can take the place of its samples: when its run needs at most one
// segment a thread, a thread holds its segment's coefficients in registers until every thread has
// read its samples, and the smaller shared arrays let more blocks share an SM.
__host__ __device__ inline bool splineCoefficientsInPlace(const SplineZoomAxis& a) {
  return a.maxCoefficients <= SplineZoomPolicy::segment * kZoomThreadRows;
}

// Where a block's coefficients take the place of its samples, the samples are staged line by line
// (samples[line][position]) with this pitch, ≡ 4 mod 32 floats: a thread reads its segment's
// positions of its line four at a time (float4s: a few wide reads rather than many narrow ones,
// which queue), and a quarter-warp's eight lines fall on distinct banks.
__host__ __device__ inline int splineLinePitch(const SplineZoomAxis& a) {
  return (a.maxCoefficients + 2 * kSplineReach + 27) / 32 * 32 + 4;
}

// Shared bytes a block needs: its outputs' taps and coefficient offsets, then samples (coefficients
// plus the reach each side) and coefficients (over the samples, or after them), 32 lines each,
// with the rows' pitches.
inline size_t splineZoomSharedBytes(const SplineZoomAxis& a, int samplePitch,
                                    int coefficientPitch) {
  const size_t samples = splineCoefficientsInPlace(a) ? size_t(kZoomLines) * splineLinePitch(a)
                                                      : size_t(splineSampleFloats(a, samplePitch));
  const size_t coefficients = size_t(a.maxCoefficients) * coefficientPitch;
  const size_t floats =
      splineCoefficientsInPlace(a) ? std::max(samples, coefficients) : samples + coefficients;
  return floats * sizeof(float) + size_t(a.outputsPerBlock) * sizeof(SplineTap) +
         size_t(splineOffsetSlots(a)) * sizeof(int);
}

// One segment of a line's coefficients c[q] = √3·(L[q] + R[q]), L[q] = Σ_{k≥0} z^k x[q−k] and
// R[q] = Σ_{k≥1} z^k x[q+k]: both sums start from their first 16 terms at the segment's ends, then
// the recursions L[q] = x[q] + z·L[q−1] and R[q] = z·(x[q+1] + R[q+1]) run across it, a few
// operations per value where the whole 33-tap sum costs 33. The segment's samples and sums stay in
// registers (its N is a constant), so that each sample is read once. `x(m)` gives the sample at
// the segment's m-th position (m from −16 to N + 15); `c` receives the N coefficients. The way
// down uses x(N − 1) … x(1) again: kept in registers, or from `again(q)` where registers are
// scarcer than reads (the same values, so the same coefficients).
//
// Every operation is rounded as the compiled loops of plain sums (x[q] + z·L, z·(x[q+1] + R))
// that made these coefficients first rounded it, so that the coefficients stay bit for bit the
// same: there the compiler fused each z·sum into the sum that uses it, except going down, where it
// unrolled the loop by four after its first (N − 1) mod 4 steps; z·(x[q+1] + R[q+1]) was then
// rounded on its own (it is used twice) at those first steps and at the last of each four, and
// fused into both of its uses at the other three.
//
// The left sum's first value, L[0] from x(−16) … x(0), is splineLeftStart's, so that a thread that
// walks along a line can make it from samples it already holds (splineSegmentFrom).
template <class Sample>
__device__ __forceinline__ float splineLeftStart(const Sample& x) {
  float left = x(-kSplineReach);
#pragma unroll
  for (int k = kSplineReach - 1; k >= 0; --k) left = __fmaf_rn(kSplinePole, left, x(-k));
  return left;
}
template <int N, class Sample, class Again>
__device__ __forceinline__ void splineSegmentFrom(float left, const Sample& x, const Again& again,
                                                  float (&c)[16]) {
  c[0] = left;
#pragma unroll
  for (int q = 1; q < N; ++q) {
    left = __fmaf_rn(kSplinePole, left, x(q));
    c[q] = left;
  }
  float sum = x(N - 1 + kSplineReach);  // x(q + 1) + R[q + 1] as q goes down
#pragma unroll
  for (int k = kSplineReach - 1; k >= 1; --k) sum = __fmaf_rn(kSplinePole, sum, x(N - 1 + k));
  c[N - 1] = __fmul_rn(kSplineGain, __fadd_rn(c[N - 1], __fmul_rn(sum, kSplinePole)));
  constexpr int kFirst = (N - 1) % 4;
#pragma unroll
  for (int i = 0; i < N - 1; ++i) {
    const int q = N - 2 - i, step = i < kFirst ? -1 : (i - kFirst) % 4;  // −1: a first step
    const float next = again(q + 1);
    sum = step <= 0 ? __fadd_rn(__fmul_rn(sum, kSplinePole), next)
                    : __fmaf_rn(sum, kSplinePole, next);
    const bool rounded = step == -1 || step == 3;
    c[q] = __fmul_rn(kSplineGain, rounded ? __fadd_rn(c[q], __fmul_rn(sum, kSplinePole))
                                          : __fmaf_rn(sum, kSplinePole, c[q]));
  }
}
// The same, with the samples x(1) … x(N − 1) kept in registers for the way down.
template <int N, class Sample>
__device__ __forceinline__ void splineSegmentFrom(float left, const Sample& x, float (&c)[16]) {
  float kept[N];
  const auto keeping = [&](int m) {
    const float v = x(m);
    if (m >= 1 && m < N) kept[m] = v;
    return v;
  };
  const auto keptAt = [&](int q) { return kept[q]; };
  splineSegmentFrom<N>(left, keeping, keptAt, c);
}
template <int N, class Sample>
__device__ __forceinline__ void splineSegment(const Sample& x, float (&c)[16]) {
  splineSegmentFrom<N>(splineLeftStart(x), x, c);
}

// Calls body.template operator()<N>() with N = n (1 … 16; shorter segments end a line's run).
template <int N = 16, class Body>
__device__ __forceinline__ void withSegmentLength(int n, Body&& body) {
  if constexpr (N == 1)
    body.template operator()<1>();
  else if (n >= N)
    body.template operator()<N>();
  else
    withSegmentLength<N - 1>(n, body);
}

// Turns a line's staged samples into its coefficients, one segment of SplineZoomPolicy::segment
// per thread. `x` points at the line's first coefficient position, `c` at its first coefficient.
template <int kXPitch, int kCPitch>
__device__ inline void splineCoefficients(const float* x, float* c, int count) {
  constexpr int kSegment = SplineZoomPolicy::segment;
  static_assert(kSegment == 16, "splineSegment holds 16 coefficients");
  const int segments = (count + kSegment - 1) / kSegment;
  for (int s = threadIdx.y; s < segments; s += kZoomThreadRows) {
    const int qa = s * kSegment;
    const float* xs = x + qa * kXPitch;
    float* cs = c + qa * kCPitch;
    withSegmentLength(min(kSegment, count - qa), [&]<int N>() {
      float v[16];
      splineSegment<N>([&](int m) { return xs[m * kXPitch]; }, v);
#pragma unroll
      for (int q = 0; q < N; ++q) cs[q * kCPitch] = v[q];
    });
  }
}

// Turns a line's staged samples into its coefficients where they take the samples' place
// (splineCoefficientsInPlace): each thread makes its one segment in registers, and writes it once
// the block has read them all. The samples are staged line by line (splineLinePitch): `x` points
// at the thread's line's first position (its run's first coefficient's less the reach), and a
// thread reads four at a time. `c` points at the line's first coefficient.
template <int kCPitch>
__device__ inline void splineCoefficientsOverLines(const float* x, float* c, int count) {
  const int qa = threadIdx.y * SplineZoomPolicy::segment;
  // Position m of the segment is component (m + 16) mod 4 of float4 (m + 16) / 4 from here.
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(x + qa));
  float v[16];
  if (qa < count)
    withSegmentLength(min(16, count - qa), [&]<int N>() {
      // The recursions read the positions in order, up from −16 to N − 1, down from N + 15 to N,
      // then down from N − 1 to 1 again: each float4 is read (a few wide reads rather than many
      // narrow ones, which queue) as the first of its positions is wanted, and only then, so
      // that few registers hold samples. (Written out: the compiler splits a float4 read whose
      // parts are used apart into four.)
      float4 up, down;
      const auto read = [&](float4& q, int m) {
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                     : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w)
                     : "r"(at + (m + kSplineReach) / 4 * 16));
      };
      const auto part = [](const float4& q, int m) {
        const int k = (m + kSplineReach) % 4;
        return k == 0 ? q.x : k == 1 ? q.y : k == 2 ? q.z : q.w;
      };
      const auto sample = [&](int m) {
        if (m < N) {
          if ((m + kSplineReach) % 4 == 0) read(up, m);
          return part(up, m);
        }
        if (m == N - 1 + kSplineReach || (m + kSplineReach) % 4 == 3) read(down, m);
        return part(down, m);
      };
      const auto again = [&](int m) {
        if (m == N - 1 || (m + kSplineReach) % 4 == 3) read(down, m);
        return part(down, m);
      };
      splineSegmentFrom<N>(splineLeftStart(sample), sample, again, v);
    });
  __syncthreads();
  if (qa < count) {
    float* cs = c + qa * kCPitch;
    withSegmentLength(min(16, count - qa), [&]<int N>() {
#pragma unroll
      for (int q = 0; q < N; ++q) cs[q * kCPitch] = v[q];
    });
  }
}

// The cubic B-spline's weights at input position o·step, and in `offset` where its first
// coefficient lies from c[0] at position q0 (in shared floats).
template <int kPitch>
__device__ inline SplineTap splineTap(int o, double step, int q0, int& offset) {
  const double pos = double(o) * step;
  const double fl = floor(pos);
  const float t = static_cast<float>(pos - fl), u = 1.f - t;
  SplineTap w;
  w.w0 = u * u * u / 6.f;
  w.w1 = (3.f * t * t * t - 6.f * t * t + 4.f) / 6.f;
  w.w3 = t * t * t / 6.f;
  w.w2 = 1.f - w.w0 - w.w1 - w.w3;
  offset = (static_cast<int>(fl) - 1 - q0) * kPitch;
  return w;
}

// The cubic B-spline from four coefficients; for four neighbouring lines from the float4s at p,
// `pitch4` float4s apart.
__device__ inline float splineOf(float c0, float c1, float c2, float c3, const SplineTap& w) {
  return w.w0 * c0 + w.w1 * c1 + w.w2 * c2 + w.w3 * c3;
}
__device__ inline float4 splineAt(const float4* p, const SplineTap& w, int pitch4) {
  const float4 c0 = p[0], c1 = p[pitch4], c2 = p[2 * pitch4], c3 = p[3 * pitch4];
  return {splineOf(c0.x, c1.x, c2.x, c3.x, w), splineOf(c0.y, c1.y, c2.y, c3.y, w),
          splineOf(c0.z, c1.z, c2.z, c3.z, w), splineOf(c0.w, c1.w, c2.w, c3.w, w)};
}

// The block's tap table for outputs [o0, oEnd), one output per thread.
template <int kPitch>
__device__ inline void splineTaps(const SplineZoomAxis& a, int o0, int oEnd, int q0,
                                  SplineTap* taps, int* offsets) {
  const int thread = threadIdx.y * kZoomLines + threadIdx.x;
  for (int o = o0 + thread; o < oEnd; o += SplineZoomPolicy::threads)
    taps[o - o0] = splineTap<kPitch>(o, a.step, q0, offsets[o - o0]);
}

// mirrorIndex for positions mostly inside the line: the inside ones without its division.
__device__ inline int mirrored(int i, int n) {
  return static_cast<unsigned>(i) < static_cast<unsigned>(n) ? i : int(mirrorIndex(i, n));
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

// Warp-sized chunks of a line's staged positions where a block's run needs at most one segment a
// thread (splineCoefficientsInPlace): its coefficients and the reach on both sides.
constexpr int kInPlaceSpanChunks =
    (SplineZoomPolicy::segment * kZoomThreadRows + 2 * kSplineReach + kZoomLines - 1) / kZoomLines;

// Stages positions start … start + span − 1 of the rows firstRow … firstRow + 31 (mirrored
// where `interior` is false; zeros past the last row), a warp four lines, a lane positions 32
// apart: into samples[position][line] (rows kRowSamplePitch apart) in general, and with
// kChunks > 0 (span ≤ 32·kChunks, splineCoefficientsInPlace) into samples[line][position] (lines
// splineLinePitch apart). There the positions are unrolled and everything but the line is worked
// out once (which chunks a lane copies, the mirrored positions), so that each copy is a pointer
// that steps from line to line plus a constant: the general loop spends most of its
// instructions on addresses and loop control.
template <int kChunks>
__device__ __forceinline__ void stageRowSamples(const float* __restrict__ in, float* samples,
                                                const SplineZoomAxis& a, int64_t firstRow,
                                                int start, int span, bool interior) {
  constexpr int kPitch = kRowSamplePitch;
  constexpr int kLinesPerWarp = kZoomLines / kZoomThreadRows;
  if constexpr (kChunks == 0) {
    for (int l = threadIdx.y; l < kZoomLines; l += kZoomThreadRows) {
      const int64_t row = firstRow + l;
      const float* src = in + row * a.n;
      if (row >= a.lines) {
        for (int p = threadIdx.x; p < span; p += kZoomLines) samples[p * kPitch + l] = 0.f;
      } else if (interior) {
        for (int p = threadIdx.x; p < span; p += kZoomLines)
          copyAsync4(samples + p * kPitch + l, src + start + p);
      } else {
        for (int p = threadIdx.x; p < span; p += kZoomLines)
          copyAsync4(samples + p * kPitch + l, src + mirrored(start + p, a.n));
      }
    }
  } else {
    const int lane = threadIdx.x;
    // Whether the span holds chunk i's position of this lane: where the span reaches into the
    // last chunk (every run but a short axis's), the chunks before it need no test.
    const bool full = span > kZoomLines * (kChunks - 1);
    bool inSpan[kChunks];
#pragma unroll
    for (int i = 0; i < kChunks; ++i)
      inSpan[i] = (full && i < kChunks - 1) || lane + kZoomLines * i < span;
    int64_t row = firstRow + threadIdx.y;
    const float* src = in + row * a.n;
    const int64_t lineStep = int64_t(kZoomThreadRows) * a.n;
    const int lineStride = kZoomThreadRows * splineLinePitch(a);  // a warp's next line, in floats
    float* s = samples + threadIdx.y * splineLinePitch(a) + lane;
    unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(s));
    // Each line in turn: zeros past the last row, else chunk i's sample at `from(p, i)`, p = the
    // line's first sample plus `skip` (so that an interior chunk's address is p plus a constant).
    const auto lines = [&](int skip, const auto& from) {
      const float* p = src + skip;
#pragma unroll
      for (int li = 0; li < kLinesPerWarp; ++li) {
        if (row >= a.lines) {
#pragma unroll
          for (int i = 0; i < kChunks; ++i)
            if (inSpan[i]) s[i * kZoomLines] = 0.f;
        } else {
          // (Opaque to the compiler, which would otherwise rebuild each address from the row.)
          const float* q;
          asm("mov.b64 %0, %1;" : "=l"(q) : "l"(p));
#pragma unroll
          for (int i = 0; i < kChunks; ++i)
            if (inSpan[i]) copyAsync4(at + i * kZoomLines * sizeof(float), from(q, i));
        }
        row += kZoomThreadRows;
        p += lineStep;
        s += lineStride;
        at += lineStride * sizeof(float);
      }
    };
    if (interior) {
      lines(start + lane, [](const float* p, int i) { return p + kZoomLines * i; });
    } else {
      int mirroredAt[kChunks];  // the same positions for every line
#pragma unroll
      for (int i = 0; i < kChunks; ++i)
        mirroredAt[i] = mirrored(start + lane + kZoomLines * i, a.n);
      lines(0, [&](const float* p, int i) { return p + mirroredAt[i]; });
    }
  }
}

// *at = v where i < left, as a predicated store rather than a branch around one.
template <int i>
__device__ __forceinline__ void storeBelow(int left, float* at, float v) {
  asm volatile(
      "{\n .reg .pred p;\n setp.gt.s32 p, %0, %1;\n @p st.global.f32 [%2], %3;\n}\n" ::"r"(left),
      "n"(i), "l"(at), "f"(v));
}

// Along x: block (blockIdx.x, blockIdx.y) makes outputs [o0, o0 + outputsPerBlock) of rows
// row0 + 32·blockIdx.y …; a warp loads a row's samples, and writes outputs along the rows, a
// thread one output of eight neighbouring rows. kInPlace: splineCoefficientsInPlace(a).
template <bool kInPlace>
__global__ void __launch_bounds__(SplineZoomPolicy::threads,
                                  kInPlace ? SplineZoomPolicy::blocksPerSmInPlace
                                           : SplineZoomPolicy::blocksPerSm)
    splineZoomRows(const float* __restrict__ in, float* __restrict__ out, SplineZoomAxis a,
                   int64_t row0) {
  constexpr int kPitch = kRowSamplePitch, kCPitch = kRowCoefficientPitch;
  extern __shared__ float4 shared[];
  const int o0 = blockIdx.x * a.outputsPerBlock;
  const int oEnd = min(o0 + a.outputsPerBlock, a.nOut);
  const CoefficientRange r = coefficientsFor(a, o0, oEnd);
  SplineTap* taps = reinterpret_cast<SplineTap*>(shared);
  int* offsets = reinterpret_cast<int*>(taps + a.outputsPerBlock);
  float* samples = reinterpret_cast<float*>(offsets + splineOffsetSlots(a));  // stageRowSamples
  float* coefficients = kInPlace ? samples : samples + splineSampleFloats(a, kPitch);
  const int64_t firstRow = row0 + int64_t(blockIdx.y) * kZoomLines;
  const int span = r.count + 2 * kSplineReach;
  const int start = r.first - kSplineReach;
  const bool interior = start >= 0 && start + span <= a.n;
  letNextStart();
  waitForPrevious();
  if constexpr (kInPlace)
    stageRowSamples<kInPlaceSpanChunks>(in, samples, a, firstRow, start, span, interior);
  else
    stageRowSamples<0>(in, samples, a, firstRow, start, span, interior);
  splineTaps<kCPitch>(a, o0, oEnd, r.first, taps, offsets);
  waitForAsyncCopies();
  __syncthreads();
  if constexpr (kInPlace)
    splineCoefficientsOverLines<kCPitch>(samples + threadIdx.x * splineLinePitch(a),
                                         coefficients + threadIdx.x, r.count);
  else
    splineCoefficients<kPitch, kCPitch>(samples + kSplineReach * kPitch + threadIdx.x,
                                        coefficients + threadIdx.x, r.count);
  __syncthreads();
  // A thread makes one output of eight neighbouring rows (two float4s of coefficients per tap),
  // so that each output's weights and offset are read once for eight rows: warp w takes rows
  // 8·(w mod 4) … and every other 32 outputs from 32·(w / 4).
  static_assert(kZoomThreadRows == 8, "four groups of eight rows, two warps each");
  const int rows = static_cast<int>(min(int64_t(kZoomLines), a.lines - firstRow));
  const int group = threadIdx.y % 4;
  const int l0 = 8 * group;
  if (l0 >= rows) return;
  float* dst = out + (firstRow + l0) * a.nOut;
  // Lane i takes output 23·i mod 32 of each 32: a float4 read is served a quarter-warp at a time,
  // and neighbouring outputs' coefficient rows (about `step` apart) would put rows 8 apart, on
  // the same banks, into one quarter; spread over the 32 they collide less, while each quarter's
  // taps stay on 8 distinct banks (23 is odd) and a warp's stores the same 32 outputs.
  for (int ob = o0 + kZoomLines * int(threadIdx.y / 4); ob < oEnd; ob += 2 * kZoomLines) {
    const int o = ob + (23 * threadIdx.x) % kZoomLines;
    if (o >= oEnd) continue;
    const float4* p = reinterpret_cast<const float4*>(coefficients + offsets[o - o0]) + 2 * group;
    const SplineTap w = taps[o - o0];
    const float4 v = splineAt(p, w, kCPitch / 4), u = splineAt(p + 1, w, kCPitch / 4);
    const float made[8] = {v.x, v.y, v.z, v.w, u.x, u.y, u.z, u.w};
    staticFor<8>([&]<int i>() { storeBelow<i>(rows - l0, dst + i * a.nOut + o, made[i]); });
  }
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
