// FFTs of one line (a row or a column of a frame) done by a group of threads in registers and
// shared memory, so that the element-wise work around a transform can be fused into the same
// kernel (compute/cuda/cuda_rl_fused.cu). Stockham autosort: every stage reads its butterflies'
// inputs from the line, applies twiddles and an R-point DFT in registers and writes the outputs
// in place; no bit reversal. (For compute/cuda/*.cu only.)
//
// A line of length L is held by L/V threads with V complex values each: V = 16 or 32 for powers
// of two, V = 24 for the lengths 24^k · r (r dividing 24: 144, 288, 576, 1152, 1728, 2304, 3456),
// which reflect-padded frames need (2048 + 30 → 2304 instead of 4096). Forward stages use radix V
// and end with one smaller radix stage r when L is not a power of V; inverse stages run the same
// radices in reverse, so a forward transform's last stage leaves each thread holding exactly the
// values the inverse transform's first stage needs (no shared-memory pass between them).
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "compute/cuda/tuning/rl_fused.cuh"

namespace stacklens::compute::cuda::blockfft {

// V, unless a pass asks for 32 (fewer shared-memory exchanges, more registers).
constexpr int kValuesPerThread = tuning::BlockFftPolicy::valuesPerThread;
constexpr int kMinLength = 64, kMaxLength = 4096;

__host__ __device__ constexpr bool isPowerOfTwo(long long n) { return n > 0 && (n & (n - 1)) == 0; }

// 24^k · r with k ≥ 1 and r dividing 24 (then L ≥ 2·24 when r ≥ 2, or k ≥ 2).
__host__ __device__ constexpr bool isMixedLength(long long n) {
  if (n < 2 * 24 || n > kMaxLength || n % 3 != 0) return false;
  int k = 0;
  while (n >= 24 && n % 24 == 0) n /= 24, ++k;
  return k >= 1 && 24 % n == 0 && (k >= 2 || n >= 2);
}

__host__ __device__ constexpr bool isSupportedLength(long long n) {
  return (n >= kMinLength && n <= kMaxLength && isPowerOfTwo(n)) || isMixedLength(n);
}

// Values per thread for a length: the power-of-two rule given, or 24 for mixed lengths.
template <int L, int PowerOfTwoV>
constexpr int valuesFor() {
  return isPowerOfTwo(L) ? PowerOfTwoV : 24;
}

// The radix-V stages of a length: the largest k with V^k ≤ L.
template <int V = kValuesPerThread>
__host__ __device__ constexpr int fullStages(int length) {
  int k = 0;
  for (; length >= V; length /= V) ++k;
  return k;
}
// The last forward radix: L / V^k for the largest k with V^k ≤ L (1 when L is a power of V).
template <int V = kValuesPerThread>
__host__ __device__ constexpr int remainderRadix(int length) {
  while (length >= V) length /= V;
  return length;
}

__device__ __forceinline__ float2 operator+(float2 a, float2 b) {
  return make_float2(a.x + b.x, a.y + b.y);
}
__device__ __forceinline__ float2 operator-(float2 a, float2 b) {
  return make_float2(a.x - b.x, a.y - b.y);
}
__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ float2 cmulConj(float2 a, float2 b) {  // a · conj(b)
  return make_float2(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
}

// a · e^(∓2πi Q/32), the trivial rotations without a multiply.
template <bool Inverse, int Q>
__device__ __forceinline__ float2 rotate32(float2 a) {
  constexpr int q = Q & 31;
  if constexpr (q == 0) {
    return a;
  } else if constexpr (q == 16) {
    return make_float2(-a.x, -a.y);
  } else if constexpr (q == 8) {
    return Inverse ? make_float2(-a.y, a.x) : make_float2(a.y, -a.x);
  } else if constexpr (q == 24) {
    return Inverse ? make_float2(a.y, -a.x) : make_float2(-a.y, a.x);
  } else {
    // cos and sin of 2πq/32 from the first quadrant's values, cos(2πr/32) for r = 0 … 8.
    constexpr float c[9] = {1.f,
                            0.980785280403230449f,
                            0.923879532511286756f,
                            0.831469612302545237f,
                            0.707106781186547524f,
                            0.555570233019602225f,
                            0.382683432365089772f,
                            0.195090322016128268f,
                            0.f};
    constexpr int quadrant = q / 8, r = q % 8;
    constexpr float cs = c[r], sn = c[8 - r];
    constexpr float cosv = quadrant == 0 ? cs : quadrant == 1 ? -sn : quadrant == 2 ? -cs : sn;
    constexpr float sinv = quadrant == 0 ? sn : quadrant == 1 ? cs : quadrant == 2 ? -sn : -cs;
    constexpr float s = Inverse ? sinv : -sinv;
    return make_float2(a.x * cosv - a.y * s, a.x * s + a.y * cosv);
  }
}

// sin and cos of x ∈ [−π, π] by their series, in double at compile time.
__host__ __device__ constexpr double seriesSin(double x) {
  double term = x, sum = x;
  for (int n = 1; n < 24; ++n) {
    term *= -x * x / double((2 * n) * (2 * n + 1));
    sum += term;
  }
  return sum;
}
__host__ __device__ constexpr double seriesCos(double x) {
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < 24; ++n) {
    term *= -x * x / double((2 * n - 1) * (2 * n));
    sum += term;
  }
  return sum;
}

// a · e^(∓2πi Q/N) for any N, the trivial rotations without a multiply.
template <bool Inverse, int Q, int N>
__device__ __forceinline__ float2 rotate(float2 a) {
  constexpr int q = ((Q % N) + N) % N;
  if constexpr (q == 0) {
    return a;
  } else if constexpr (2 * q == N) {
    return make_float2(-a.x, -a.y);
  } else if constexpr (4 * q == N) {
    return Inverse ? make_float2(-a.y, a.x) : make_float2(a.y, -a.x);
  } else if constexpr (4 * q == 3 * N) {
    return Inverse ? make_float2(a.y, -a.x) : make_float2(-a.y, a.x);
  } else {
    constexpr double pi = 3.14159265358979323846;
    constexpr double angle = 2.0 * pi * double(2 * q > N ? q - N : q) / double(N);
    constexpr float cosv = static_cast<float>(seriesCos(angle));
    constexpr float sinv = static_cast<float>(seriesSin(angle));
    constexpr float s = Inverse ? sinv : -sinv;
    return make_float2(a.x * cosv - a.y * s, a.x * s + a.y * cosv);
  }
}

__host__ __device__ constexpr int bitReversed(int i, int bits) {
  int j = 0;
  for (int b = 0; b < bits; ++b) j |= ((i >> b) & 1) << (bits - 1 - b);
  return j;
}

// Butterfly I of the radix-2 layer with half-size Half in an R-point DFT.
template <int R, bool Inverse, int Half, int I>
__device__ __forceinline__ void radix2Butterfly(float2* x) {
  constexpr int m = I % Half, a = (I / Half) * 2 * Half + m;
  const float2 u = x[a], w = rotate32<Inverse, m*(32 / (2 * Half))>(x[a + Half]);
  x[a] = u + w;
  x[a + Half] = u - w;
}
template <int R, bool Inverse, int Half, int... I>
__device__ __forceinline__ void radix2Layer(float2* x, std::integer_sequence<int, I...>) {
  (radix2Butterfly<R, Inverse, Half, I>(x), ...);
}
template <int R, int... I>
__device__ __forceinline__ void bitReversePermute(float2* x, std::integer_sequence<int, I...>) {
  constexpr int bits = R == 2 ? 1 : R == 4 ? 2 : R == 8 ? 3 : R == 16 ? 4 : 5;
  const float2 y[R] = {x[bitReversed(I, bits)]...};
  ((x[I] = y[I]), ...);
}

// In-place R-point DFT (R = 2, 4, 8, 16, 32) of x[0..R), natural order in and out: radix-2
// decimation in time after a bit reversal, every index and twiddle a template argument (so that
// x stays in registers).
template <int R, bool Inverse, int Half = 1>
__device__ __forceinline__ void dftPowerOfTwo(float2* x) {
  if constexpr (Half == 1) bitReversePermute<R>(x, std::make_integer_sequence<int, R>{});
  if constexpr (Half < R) {
    radix2Layer<R, Inverse, Half>(x, std::make_integer_sequence<int, R / 2>{});
    dftPowerOfTwo<R, Inverse, Half * 2>(x);
  }
}

template <int R, bool Inverse>
__device__ __forceinline__ void dft(float2* x);

// Output column K of R = 3·M: the three M-point DFTs' values K, twiddled by e^(∓2πi jK/R), then a
// 3-point DFT whose outputs go to K, K + M, K + 2M.
template <int R, bool Inverse, int K>
__device__ __forceinline__ void radix3Column(float2* x, const float2* y0, const float2* y1,
                                             const float2* y2) {
  constexpr int M = R / 3;
  const float2 a = y0[K], b = rotate<Inverse, K, R>(y1[K]), c = rotate<Inverse, 2 * K, R>(y2[K]);
  const float2 s = make_float2(b.x + c.x, b.y + c.y), d = make_float2(b.x - c.x, b.y - c.y);
  constexpr float h = 0.866025403784438647f;  // √3 / 2
  const float2 t = make_float2(a.x - 0.5f * s.x, a.y - 0.5f * s.y);
  // ∓i·(√3/2)·d
  const float2 u = Inverse ? make_float2(-h * d.y, h * d.x) : make_float2(h * d.y, -h * d.x);
  x[K] = make_float2(a.x + s.x, a.y + s.y);
  x[K + M] = make_float2(t.x + u.x, t.y + u.y);
  x[K + 2 * M] = make_float2(t.x - u.x, t.y - u.y);
}
template <int R, bool Inverse, int... K>
__device__ __forceinline__ void radix3Columns(float2* x, const float2* y0, const float2* y1,
                                              const float2* y2, std::integer_sequence<int, K...>) {
  (radix3Column<R, Inverse, K>(x, y0, y1, y2), ...);
}

// In-place R-point DFT for R = 3·M (M a power of two ≤ 8): M-point DFTs of x[3m + j] for
// j = 0, 1, 2 (decimation in time), then radix-3 butterflies.
template <int R, bool Inverse>
__device__ __forceinline__ void dftTimesThree(float2* x) {
  constexpr int M = R / 3;
  float2 y0[M], y1[M], y2[M];
#pragma unroll
  for (int m = 0; m < M; ++m) {
    y0[m] = x[3 * m];
    y1[m] = x[3 * m + 1];
    y2[m] = x[3 * m + 2];
  }
  if constexpr (M > 1) {
    dft<M, Inverse>(y0);
    dft<M, Inverse>(y1);
    dft<M, Inverse>(y2);
  }
  radix3Columns<R, Inverse>(x, y0, y1, y2, std::make_integer_sequence<int, M>{});
}

// In-place R-point DFT of x[0..R), natural order: R a power of two ≤ 32, or 3 times one ≤ 8.
template <int R, bool Inverse>
__device__ __forceinline__ void dft(float2* x) {
  if constexpr (isPowerOfTwo(R)) {
    dftPowerOfTwo<R, Inverse>(x);
  } else {
    static_assert(R % 3 == 0 && isPowerOfTwo(R / 3) && R / 3 <= 8, "radix 3·2^m, m ≤ 3");
    dftTimesThree<R, Inverse>(x);
  }
}

// One line in shared memory as complex values (one 64-bit access each), one padding value per
// V so that the strided writes of the early stages (strides 2 … V) do not hit the same banks,
// and how the threads that share it wait for each other: the whole block (barrier 0), or, when
// they are contiguous, their warp (≤ 32 threads) or a named barrier of their own, so that the
// other lines' threads in the block go on meanwhile.
template <int V = kValuesPerThread>
struct Line {
  float2* values;
  int barrier = 0;  // 0: __syncthreads; else 1 … 15, with `threads` contiguous threads
  int threads = 0;
  __device__ __forceinline__ static int pad(int j) { return j + j / V; }
  __device__ __forceinline__ float2 load(int j) const { return values[pad(j)]; }
  __device__ __forceinline__ void store(int j, float2 v) const { values[pad(j)] = v; }
  __device__ __forceinline__ void sync() const {
    if (barrier == 0)
      __syncthreads();
    else if (threads <= 32)
      __syncwarp();
    else
      asm volatile("bar.sync %0, %1;" ::"r"(barrier), "r"(threads) : "memory");
  }
};
// Complex values of one line: indices 0 … L (L for the real transforms' Nyquist term), padded,
// and a gap so that neighbouring lines start in different banks (tuning::BlockFftPolicy).
template <int V = kValuesPerThread>
__host__ __device__ constexpr int lineValues(int length) {
  return length + length / V + tuning::BlockFftPolicy::lineGapValues;
}

// Thread t's butterfly inputs of a radix-R stage: butterflies i = t + b·L/V, inputs
// i + r·L/R, in v[b·R + r]. The position of value v[b·R + r].
template <int L, int R, int V = kValuesPerThread>
__device__ __forceinline__ int stagePosition(int t, int b, int r) {
  return t + b * (L / V) + r * (L / R);
}

template <int L, int R, int V>
__device__ __forceinline__ void gather(float2 (&v)[V], int t, const Line<V>& line) {
#pragma unroll
  for (int b = 0; b < V / R; ++b)
#pragma unroll
    for (int r = 0; r < R; ++r) v[b * R + r] = line.load(stagePosition<L, R, V>(t, b, r));
}

// A radix-R stage at stride P: twiddles, the DFTs in registers; outputs stay in v.
template <int L, int R, int P, bool Inverse, int V>
__device__ __forceinline__ void butterflies(float2 (&v)[V], int t, const float2* __restrict__ roots,
                                            int rootStep) {
#pragma unroll
  for (int b = 0; b < V / R; ++b) {
    if (P > 1) {
      const int k = static_cast<unsigned>(t + b * (L / V)) % unsigned(P);
      // e^(∓2πi r k / (R P)) from the table of L-point roots (rootStep apart) at r·step.
      const int step = k * (L / (R * P)) * rootStep;
      if constexpr (R >= 8) {
        // R/4 + 2 table reads instead of R − 1, w_r = w_(r mod 4) · w_(r − r mod 4) (1–2 ulp):
        // the reads cost registers (they are issued together) and load-pipe slots.
        float2 low[4], high[R / 4];
#pragma unroll
        for (int s = 1; s < 4; ++s) low[s] = __ldg(&roots[s * step]);
#pragma unroll
        for (int q = 1; q < R / 4; ++q) high[q] = __ldg(&roots[4 * q * step]);
#pragma unroll
        for (int r = 1; r < R; ++r) {
          const int q = r / 4, s = r % 4;
          const float2 w = s == 0 ? high[q] : q == 0 ? low[s] : cmul(high[q], low[s]);
          v[b * R + r] = Inverse ? cmulConj(v[b * R + r], w) : cmul(v[b * R + r], w);
        }
      } else {
#pragma unroll
        for (int r = 1; r < R; ++r) {
          const float2 w = __ldg(&roots[r * step]);
          v[b * R + r] = Inverse ? cmulConj(v[b * R + r], w) : cmul(v[b * R + r], w);
        }
      }
    }
    dft<R, Inverse>(&v[b * R]);
  }
}

// Stage outputs to their places: butterfly i = t + b·L/V with k = i mod P writes output r to
// (i − k)·R + k + r·P.
template <int L, int R, int P, int V>
__device__ __forceinline__ void scatter(const float2 (&v)[V], int t, const Line<V>& line) {
#pragma unroll
  for (int b = 0; b < V / R; ++b) {
    const int i = t + b * (L / V), k = static_cast<unsigned>(i) % unsigned(P), j = (i - k) * R + k;
#pragma unroll
    for (int r = 0; r < R; ++r) line.store(j + r * P, v[b * R + r]);
  }
}

// Stages R, Rest... starting at stride P, v holding the first stage's inputs. On return v holds
// the transform at the last stage's positions (stagePosition<L, last R, V>), natural order.
// Every thread of the line must call it (it synchronises them: Line::sync).
template <int L, bool Inverse, int P, int R, int... Rest, int V>
__device__ __forceinline__ void stages(float2 (&v)[V], int t, const Line<V>& line,
                                       const float2* __restrict__ roots, int rootStep) {
  butterflies<L, R, P, Inverse>(v, t, roots, rootStep);
  if constexpr (sizeof...(Rest) > 0) {
    constexpr int next[] = {Rest...};
    line.sync();  // everyone has read this stage's inputs
    scatter<L, R, P>(v, t, line);
    line.sync();
    gather<L, next[0]>(v, t, line);
    stages<L, Inverse, P * R, Rest...>(v, t, line, roots, rootStep);
  }
}

// The forward (e^−) or inverse (e^+, unnormalised) transform of a line of length L held V values
// per thread. Forward: v enters at stagePosition<L, V, V> and leaves at stagePosition<L,
// lastForwardRadix<L, V>(), V>; inverse: the other way round. roots[j·rootStep] = e^(−2πi j/L).
// With V = 16: 64 = 16·4, 128 = 16·8, 256 = 16·16, 512 = 16·16·2, …, 4096 = 16·16·16; with
// V = 32: 512 = 32·16, 1024 = 32·32, 2048 = 32·32·2, 4096 = 32·32·4; with V = 24: 144 = 24·6,
// 576 = 24·24, 1152 = 24·24·2, 2304 = 24·24·4, 3456 = 24·24·6.
template <int L, bool Inverse, int V>
__device__ __forceinline__ void transform(float2 (&v)[V], int t, const Line<V>& line,
                                          const float2* __restrict__ roots, int rootStep) {
  static_assert(isSupportedLength(L) && L >= 2 * V);
  constexpr int k = fullStages<V>(L), rem = remainderRadix<V>(L);
  static_assert(k >= 1 && k <= 3);
  static_assert(V % rem == 0, "the last radix must divide the values per thread");
  if constexpr (rem == 1) {
    if constexpr (k == 1) stages<L, Inverse, 1, V>(v, t, line, roots, rootStep);
    if constexpr (k == 2) stages<L, Inverse, 1, V, V>(v, t, line, roots, rootStep);
    if constexpr (k == 3) stages<L, Inverse, 1, V, V, V>(v, t, line, roots, rootStep);
  } else if constexpr (Inverse) {
    if constexpr (k == 1) stages<L, true, 1, rem, V>(v, t, line, roots, rootStep);
    if constexpr (k == 2) stages<L, true, 1, rem, V, V>(v, t, line, roots, rootStep);
    if constexpr (k == 3) stages<L, true, 1, rem, V, V, V>(v, t, line, roots, rootStep);
  } else {
    if constexpr (k == 1) stages<L, false, 1, V, rem>(v, t, line, roots, rootStep);
    if constexpr (k == 2) stages<L, false, 1, V, V, rem>(v, t, line, roots, rootStep);
    if constexpr (k == 3) stages<L, false, 1, V, V, V, rem>(v, t, line, roots, rootStep);
  }
}

// The radix a forward transform ends with (and an inverse one starts with).
template <int L, int V = kValuesPerThread>
constexpr int lastForwardRadix() {
  return remainderRadix<V>(L) == 1 ? V : remainderRadix<V>(L);
}

}  // namespace stacklens::compute::cuda::blockfft
