// Richardson–Lucy's fused FFT passes (compute/cuda/cuda_rl_fused.cu, see cuda_rl_fused.cuh): the
// row passes (a real FFT of each row, with the ratio or the update fused around its inverse), the
// column passes (forward, the OTF product and inverse along y or z in one kernel), and
// Boundary::ReflectExact's convolution along the last axis; all built on the block FFTs of
// kernels/block_fft.cuh, one instantiation per supported length. The shapes they are launched
// with are derived here from tuning/rl_fused.cuh, since the kernels' launch bounds need them too.
// (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/block_fft.cuh"
#include "compute/cuda/reflect_exact.cuh"
#include "compute/cuda/tuning/rl_fused.cuh"

namespace stacklens::compute::cuda {
namespace {

using blockfft::kValuesPerThread;
using blockfft::stagePosition;
using Policy = tuning::RlFusedPolicy;

enum class RowMode { Forward, Ratio, Update };
// ConvolveReal: forward, ·OTF, inverse with a real OTF (a point-symmetric PSF, where
// convolution and correlation are the same); ForwardScaledReal makes that OTF.
enum class ColumnMode {
  Convolve,
  Correlate,
  ConvolveReal,
  ForwardScaled,
  ForwardScaledReal,
  Forward,
  Inverse
};

struct RowArgs {
  float2* spectrum;
  int64_t pitch;
  const float2* roots;  // width-point roots
  const float* source;  // Forward: the real frame
  const float* observed;
  float epsilon;  // Ratio
  float* estimate;
  const float* divergence;
  float lambda;
  float* change;
  bool forwardAfter;  // Update
};

struct ColumnArgs {
  const float2* in;
  float2* out;
  const float2* otf;
  float* realOtf;       // blocked: column group, position along the column, column in the group
  int64_t pitch;        // values from one element of a column to the next
  int64_t columns;      // columns per plane
  int64_t planeStride;  // values from one plane (blockIdx.y) to the next
  const float2* roots;  // L-point roots
  float scale;          // ForwardScaled
};

// Complex values per thread in a row pass: wide for long rows, so that a transform needs one
// shared-memory exchange fewer (Policy::rowWideFromLength).
template <int L>
constexpr int rowValues() {
  return blockfft::valuesFor < L,
         L >= Policy::rowWideFromLength ? Policy::wideValues : Policy::narrowValues > ();
}
// Rows of real length 2L per block: a row is L/V threads, a block Policy::rowBlockThreads; mixed
// lengths take the most rows, a power of two, within that many threads, so that the row count of
// every supported frame (a multiple of 16) is a multiple of it.
template <int L>
constexpr int rowsPerBlock() {
  constexpr int T = L / rowValues<L>(), threads = Policy::rowBlockThreads;
  if constexpr (blockfft::isPowerOfTwo(L)) {
    return T >= threads ? 1 : threads / T;
  } else {
    int lines = 1;
    while (lines < 16 && 2 * lines * T <= threads) lines *= 2;
    return lines;
  }
}
// Whether a row's threads are whole warps or a part of one, so that they can wait for each other
// alone; otherwise (mixed lengths, 24 · 2^k threads) the block waits together.
template <int L>
constexpr bool rowsOwnTheirWarps() {
  constexpr int T = L / rowValues<L>();
  return T % 32 == 0 || 32 % T == 0;
}
// Columns per block (Policy::columnsPerBlock): adjacent columns make the global accesses of a row
// segment contiguous.
template <int L>
constexpr int columnsPerBlock() {
  return Policy::columnsPerBlock(L, blockfft::isPowerOfTwo(L));
}

// Complex values per thread in a column pass: wide for long columns (Policy::columnWideFromLength).
template <int L>
constexpr int columnValues() {
  return blockfft::valuesFor < L,
         L >= Policy::columnWideFromLength ? Policy::wideValues : Policy::narrowValues > ();
}

// Blocks of `threads` per SM the register allocation must allow for `residentThreads` resident
// threads (Policy::*ResidentThreads*), since the passes wait on memory between their compute
// phases and more resident warps hide that.
constexpr int minBlocks(int threads, int residentThreads) {
  return threads >= residentThreads ? 1 : residentThreads / threads;
}

template <int V = kValuesPerThread>
__device__ __forceinline__ blockfft::Line<V> lineAt(float2* shared, int index, int length) {
  return blockfft::Line<V>{shared + index * blockfft::lineValues<V>(length), 0, 0};
}

// One row y of the frame (real length 2L, spectrum L + 1 values). Forward: the real row → its
// half spectrum. Ratio/Update: the half spectrum → the real row (inverse real FFT), the
// element-wise step, and (Ratio always, Update when asked) the forward transform of the result.
// A real FFT of length 2L is a complex FFT of length L of z[n] = u[2n] + i·u[2n+1] with a
// pre/post step pairing the values k and L − k.
template <int L, RowMode Mode>
__global__ void __launch_bounds__(rowsPerBlock<L>() * (L / rowValues<L>()),
                                  minBlocks(rowsPerBlock<L>() * (L / rowValues<L>()),
                                            rowValues<L>() >= 24
                                                ? Policy::rowResidentThreadsWide
                                                : Policy::rowResidentThreadsNarrow))
    rowPass(RowArgs a) {
  extern __shared__ float2 shared[];
  constexpr int V = rowValues<L>(), T = L / V;
  const int t = threadIdx.x % T;
  const int64_t y = int64_t(blockIdx.x) * rowsPerBlock<L>() + threadIdx.x / T;
  // A row's threads are contiguous: they wait for each other only (their warp, or named
  // barrier 1 + row; 15 is the highest), when they own their warps.
  static_assert(!rowsOwnTheirWarps<L>() || T <= 32 || rowsPerBlock<L>() <= 15);
  blockfft::Line<V> line = lineAt<V>(shared, threadIdx.x / T, L);
  if constexpr (rowsOwnTheirWarps<L>()) {
    line.barrier = 1 + threadIdx.x / T;
    line.threads = T;
  }
  float2* row = a.spectrum + y * a.pitch;
  float2 v[V];
  if constexpr (Mode == RowMode::Forward) {
    const float2* src = reinterpret_cast<const float2*>(a.source + y * 2 * L);
#pragma unroll
    for (int r = 0; r < V; ++r) v[r] = src[stagePosition<L, V, V>(t, 0, r)];
  } else {
    // Z[n] = E + i·O, E = X[n] + conj(X[L−n]), O = (X[n] − conj(X[L−n]))·e^(+2πi n / 2L).
    // The row is parked in shared memory and X[L−n] read from there (the transform's first
    // stage waits for every thread before it overwrites the line): as fast as a second read from
    // global memory, with fewer registers.
    constexpr int R0 = blockfft::lastForwardRadix<L, V>();
#pragma unroll 4
    for (int m = 0; m < V; ++m) line.store(t + m * T, row[t + m * T]);
    if (t == 0) line.store(L, row[L]);
    line.sync();
#pragma unroll
    for (int b = 0; b < V / R0; ++b)
#pragma unroll
      for (int r = 0; r < R0; ++r) {
        const int n = stagePosition<L, R0, V>(t, b, r);
        const float2 xk = line.load(n), xm = line.load(L - n);
        const float2 e = make_float2(xk.x + xm.x, xk.y - xm.y);
        const float2 o =
            blockfft::cmulConj(make_float2(xk.x - xm.x, xk.y + xm.y), __ldg(&a.roots[n]));
        v[b * R0 + r] = make_float2(e.x - o.y, e.y + o.x);
      }
    blockfft::transform<L, true>(v, t, line, a.roots, 2);
    // v[r] = (u[2n], u[2n+1]) at n = stagePosition<L, V, V>(t, 0, r) = t + r·T: pairs of floats
    // at constant offsets from this thread's first one (fewer address registers).
    const int64_t first = y * L + t;
    const float2* observed = reinterpret_cast<const float2*>(a.observed) + first;
    float2* estimate = reinterpret_cast<float2*>(a.estimate) + first;
    const float2* divergence = reinterpret_cast<const float2*>(a.divergence) + first;
    float2* change = reinterpret_cast<float2*>(a.change) + first;
#pragma unroll
    for (int r = 0; r < V; ++r) {
      if constexpr (Mode == RowMode::Ratio) {
        const float2 o = observed[r * T];
        v[r] = make_float2(__fdividef(o.x, fmaxf(v[r].x, a.epsilon)),
                           __fdividef(o.y, fmaxf(v[r].y, a.epsilon)));
      } else {
        const float2 old = estimate[r * T];
        float2 next = make_float2(old.x * v[r].x, old.y * v[r].y);
        if (a.divergence) {
          const float2 d = divergence[r * T];
          next.x = __fdividef(next.x, fmaxf(1.f - a.lambda * d.x, 1e-3f));
          next.y = __fdividef(next.y, fmaxf(1.f - a.lambda * d.y, 1e-3f));
        }
        next = make_float2(fmaxf(next.x, 0.f), fmaxf(next.y, 0.f));
        if (a.change) change[r * T] = make_float2(next.x - old.x, next.y - old.y);
        estimate[r * T] = next;
        v[r] = next;
      }
    }
    if constexpr (Mode == RowMode::Update) {
      if (!a.forwardAfter) return;  // the same for the whole grid
    }
  }
  blockfft::transform<L, false>(v, t, line, a.roots, 2);
  // X[k] = A + e^(−2πi k / 2L)·B, A = (Z[k] + conj(Z[L−k])) / 2, B = (Z[k] − conj(Z[L−k])) / 2i.
  constexpr int RL = blockfft::lastForwardRadix<L, V>();
  line.sync();
#pragma unroll
  for (int b = 0; b < V / RL; ++b)
#pragma unroll
    for (int r = 0; r < RL; ++r) line.store(stagePosition<L, RL, V>(t, b, r), v[b * RL + r]);
  line.sync();
#pragma unroll 1
  for (int m = 0; m < V; ++m) {
    const int k = t + m * T;
    const float2 zk = line.load(k), zm = line.load(k == 0 ? 0 : L - k);
    const float2 sum = make_float2(0.5f * (zk.x + zm.x), 0.5f * (zk.y - zm.y));
    const float2 half = make_float2(0.5f * (zk.y + zm.y), -0.5f * (zk.x - zm.x));
    const float2 w = __ldg(&a.roots[k]);
    row[k] = blockfft::operator+(sum, blockfft::cmul(w, half));
  }
  if (t == 0) {
    const float2 z0 = line.load(0);
    row[L] = make_float2(z0.x - z0.y, 0.f);
  }
}

// Columns blockIdx.x·C … of plane blockIdx.y of the spectrum, transformed along their length L
// (y, or z in 3D): Forward; Inverse; forward, ·OTF or ·conj(OTF), inverse (Convolve, Correlate);
// forward and ·scale into `out` (ForwardScaled: making the OTF).
template <int L, ColumnMode Mode>
__global__ void __launch_bounds__(columnsPerBlock<L>() * (L / columnValues<L>()),
                                  minBlocks(columnsPerBlock<L>() * (L / columnValues<L>()),
                                            columnValues<L>() >= 24
                                                ? Policy::columnResidentThreadsWide
                                                : Policy::columnResidentThreadsNarrow))
    columnPass(ColumnArgs a) {
  extern __shared__ float2 shared[];
  constexpr int C = columnsPerBlock<L>(), V = columnValues<L>();
  constexpr int RL = blockfft::lastForwardRadix<L, V>();
  const int c = threadIdx.x % C, t = threadIdx.x / C;
  const int64_t k = int64_t(blockIdx.x) * C + c;
  const bool valid = k < a.columns;
  const int64_t base = blockIdx.y * a.planeStride + k;
  const blockfft::Line<V> line = lineAt<V>(shared, c, L);
  float2 v[V];
  const float2 zero = make_float2(0.f, 0.f);
  if constexpr (Mode == ColumnMode::Inverse) {
#pragma unroll
    for (int b = 0; b < V / RL; ++b)
#pragma unroll
      for (int r = 0; r < RL; ++r)
        v[b * RL + r] = valid ? a.in[base + stagePosition<L, RL, V>(t, b, r) * a.pitch] : zero;
  } else {
#pragma unroll
    for (int r = 0; r < V; ++r)
      v[r] = valid ? a.in[base + stagePosition<L, V, V>(t, 0, r) * a.pitch] : zero;
    blockfft::transform<L, false>(v, t, line, a.roots, 1);
    // The blocked real OTF: a warp's values of one (b, r) are consecutive positions of adjacent
    // columns, so contiguous.
    float* realOtf = a.realOtf + (int64_t(blockIdx.x) * L + t) * C + c;
#pragma unroll
    for (int b = 0; b < V / RL; ++b)
#pragma unroll
      for (int r = 0; r < RL; ++r) {
        const int64_t at = base + stagePosition<L, RL, V>(t, b, r) * a.pitch;
        float2& x = v[b * RL + r];
        const int realAt = stagePosition<L, RL, V>(0, b, r) * C;  // a constant from `realOtf`
        if constexpr (Mode == ColumnMode::ForwardScaled) {
          if (valid) a.out[at] = make_float2(x.x * a.scale, x.y * a.scale);
        } else if constexpr (Mode == ColumnMode::ForwardScaledReal) {
          realOtf[realAt] = valid ? x.x * a.scale : 0.f;
        } else if constexpr (Mode == ColumnMode::ConvolveReal) {
          const float o = realOtf[realAt];
          x = make_float2(x.x * o, x.y * o);
        } else if constexpr (Mode == ColumnMode::Forward) {
          if (valid) a.out[at] = x;
        } else {
          const float2 o = valid ? a.otf[at] : zero;
          x = Mode == ColumnMode::Correlate ? blockfft::cmulConj(x, o) : blockfft::cmul(x, o);
        }
      }
  }
  if constexpr (Mode == ColumnMode::Convolve || Mode == ColumnMode::Correlate ||
                Mode == ColumnMode::ConvolveReal || Mode == ColumnMode::Inverse) {
    blockfft::transform<L, true>(v, t, line, a.roots, 1);
#pragma unroll
    for (int r = 0; r < V; ++r)
      if (valid) a.out[base + stagePosition<L, V, V>(t, 0, r) * a.pitch] = v[r];
  }
}

// Boundary::ReflectExact's convolution along the last axis (reflect_exact.cuh): forward, the
// groups of mirrored frequencies mixed, ·H and unmixed in shared memory, inverse. In 2D a column
// kx holds its groups {ky, height − ky}. In 3D a group also needs the column at height − ky: a
// block takes C/2 adjacent columns of row ky and the same columns of row height − ky (twice the
// same row when ky is 0 or height/2, harmlessly), and the pair's threads share its groups.
struct ReflectExactArgs {
  float2* spectrum;
  const float2* pairs;  // the transfer pairs, in the spectrum's layout
  int64_t pitch, height, width;
  const float2* roots;  // L-point roots
  // reflect_exact::twiddle of each x, of each y (3D) and along the column.
  const float2 *xTwiddles, *yTwiddles, *twiddles;
};

template <int L, bool ThreeD>
__global__ void __launch_bounds__(columnsPerBlock<L>() * (L / columnValues<L>()),
                                  minBlocks(columnsPerBlock<L>() * (L / columnValues<L>()),
                                            columnValues<L>() >= 24
                                                ? Policy::columnResidentThreadsWide
                                                : Policy::columnResidentThreadsNarrow))
    reflectExactPass(ReflectExactArgs a) {
  extern __shared__ float2 shared[];
  constexpr int C = columnsPerBlock<L>(), V = columnValues<L>(), T = L / V, half = C / 2;
  constexpr int RL = blockfft::lastForwardRadix<L, V>();
  static_assert(!ThreeD || C >= 2);
  const int c = threadIdx.x % C, t = threadIdx.x / C;
  int64_t ky = 0, row = 0, kx;
  if constexpr (ThreeD) {
    const int64_t groupsPerRow = (a.width / 2 + half) / half;
    ky = blockIdx.x / groupsPerRow;
    row = c < half ? ky : (a.height - ky) % a.height;
    kx = (blockIdx.x % groupsPerRow) * half + c % half;
  } else {
    kx = int64_t(blockIdx.x) * C + c;
  }
  const bool valid = kx <= a.width / 2;
  // In 2D the column runs along y (pitch apart); in 3D along z (a plane apart).
  const int64_t step = ThreeD ? a.height * a.pitch : a.pitch, base = row * a.pitch + kx;
  const blockfft::Line<V> line = lineAt<V>(shared, c, L);
  float2 v[V];
  const float2 zero = make_float2(0.f, 0.f);
#pragma unroll
  for (int r = 0; r < V; ++r)
    v[r] = valid ? a.spectrum[base + stagePosition<L, V, V>(t, 0, r) * step] : zero;
  blockfft::transform<L, false>(v, t, line, a.roots, 1);
  __syncthreads();
#pragma unroll
  for (int b = 0; b < V / RL; ++b)
#pragma unroll
    for (int r = 0; r < RL; ++r) line.store(stagePosition<L, RL, V>(t, b, r), v[b * RL + r]);
  __syncthreads();
  // The groups: in 2D each column's threads take its own. In 3D the pairs of columns' groups are
  // shared by all the block's threads, a warp taking P adjacent pairs at 32 / P consecutive
  // positions, so that its shared-memory accesses fall in distinct banks and its reads of the
  // transfer pairs are whole 32-byte sectors (in 2D that mapping measured slower).
  constexpr int P = half < 4 ? half : 4, G = L / 2 + 1;
  for (int w = ThreeD ? threadIdx.x : t; w < (ThreeD ? half * G : G); w += ThreeD ? C * T : T) {
    const int q = ThreeD ? w % P + (w / P) / G * P : c, k1 = ThreeD ? (w / P) % G : w;
    const int k2 = (L - k1) % L;
    const int64_t x = ThreeD ? (blockIdx.x % ((a.width / 2 + half) / half)) * half + q
                             : int64_t(blockIdx.x) * C + q;
    if (x > a.width / 2) continue;
    const blockfft::Line<V> lineA = lineAt<V>(shared, q, L);
    const float2 wx = __ldg(&a.xTwiddles[x]), wk = __ldg(&a.twiddles[k1]);
    if constexpr (ThreeD) {
      const blockfft::Line<V> lineB = lineAt<V>(shared, q + half, L);
      const int64_t atA = ky * a.pitch + x, atB = (a.height - ky) % a.height * a.pitch + x;
      float2 s[2][2] = {{lineA.load(k1), lineA.load(k2)}, {lineB.load(k1), lineB.load(k2)}};
      const float2 h[2][2] = {{a.pairs[atA + k1 * step], a.pairs[atA + k2 * step]},
                              {a.pairs[atB + k1 * step], a.pairs[atB + k2 * step]}};
      reflect_exact::convolveGroup(s, h, wx, __ldg(&a.yTwiddles[ky]), wk);
      lineA.store(k1, s[0][0]);
      lineA.store(k2, s[0][1]);
      lineB.store(k1, s[1][0]);
      lineB.store(k2, s[1][1]);
    } else {
      float2 s[2] = {lineA.load(k1), lineA.load(k2)};
      const float2 h[2] = {a.pairs[k1 * step + x], a.pairs[k2 * step + x]};
      reflect_exact::convolveGroup(s, h, wx, wk);
      lineA.store(k1, s[0]);
      lineA.store(k2, s[1]);
    }
  }
  __syncthreads();
#pragma unroll
  for (int b = 0; b < V / RL; ++b)
#pragma unroll
    for (int r = 0; r < RL; ++r) v[b * RL + r] = line.load(stagePosition<L, RL, V>(t, b, r));
  blockfft::transform<L, true>(v, t, line, a.roots, 1);
  if (valid)
#pragma unroll
    for (int r = 0; r < V; ++r) a.spectrum[base + stagePosition<L, V, V>(t, 0, r) * step] = v[r];
}

}  // namespace
}  // namespace stacklens::compute::cuda
