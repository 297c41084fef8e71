// Power-of-two FFTs of one line (a row or a column of a frame) done by a group of threads in
// registers and shared memory, so that the element-wise work around a transform can be fused into
// the same kernel (compute/cuda/cuda_rl_fused.cu). Stockham autosort: every stage reads its
// butterflies' inputs from the line, applies twiddles and an R-point DFT in registers and writes
// the outputs in place; no bit reversal. (For compute/cuda/*.cu only.)
//
// A line of length L is held by L/16 threads with 16 complex values each. Forward stages use
// radix 16 and end with one radix 2, 4 or 8 stage when L is not a power of 16; inverse stages run
// the same radices in reverse, so a forward transform's last stage leaves each thread holding
// exactly the values the inverse transform's first stage needs (no shared-memory pass between
// them).
#pragma once

#include <cuda_runtime.h>

#include <utility>

namespace stacklens::compute::cuda::blockfft {

constexpr int kValuesPerThread = 16;
constexpr int kMinLength = 64, kMaxLength = 4096;

__host__ __device__ constexpr bool isSupportedLength(long long n) {
  return n >= kMinLength && n <= kMaxLength && (n & (n - 1)) == 0;
}

// The last forward radix: L / 16^k for the largest k with 16^k ≤ L (1 when L is a power of 16).
__host__ __device__ constexpr int remainderRadix(int length) {
  while (length >= 16) length /= 16;
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

// a · e^(∓2πi Q/16), the trivial rotations without a multiply.
template <bool Inverse, int Q>
__device__ __forceinline__ float2 rotate16(float2 a) {
  constexpr int q = Q & 15;
  if constexpr (q == 0) {
    return a;
  } else if constexpr (q == 8) {
    return make_float2(-a.x, -a.y);
  } else if constexpr (q == 4) {
    return Inverse ? make_float2(-a.y, a.x) : make_float2(a.y, -a.x);
  } else if constexpr (q == 12) {
    return Inverse ? make_float2(a.y, -a.x) : make_float2(-a.y, a.x);
  } else {
    // cos and sin of 2πq/16 from the first quadrant's values.
    constexpr float c[5] = {1.f, 0.923879532511286756f, 0.707106781186547524f,
                            0.382683432365089772f, 0.f};
    constexpr int quadrant = q / 4, r = q % 4;
    constexpr float cs = c[r], sn = c[4 - r];
    constexpr float cosv = quadrant == 0 ? cs : quadrant == 1 ? -sn : quadrant == 2 ? -cs : sn;
    constexpr float sinv = quadrant == 0 ? sn : quadrant == 1 ? cs : quadrant == 2 ? -sn : -cs;
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
  const float2 u = x[a], w = rotate16<Inverse, m*(16 / (2 * Half))>(x[a + Half]);
  x[a] = u + w;
  x[a + Half] = u - w;
}
template <int R, bool Inverse, int Half, int... I>
__device__ __forceinline__ void radix2Layer(float2* x, std::integer_sequence<int, I...>) {
  (radix2Butterfly<R, Inverse, Half, I>(x), ...);
}
template <int R, int... I>
__device__ __forceinline__ void bitReversePermute(float2* x, std::integer_sequence<int, I...>) {
  constexpr int bits = R == 2 ? 1 : R == 4 ? 2 : R == 8 ? 3 : 4;
  const float2 y[R] = {x[bitReversed(I, bits)]...};
  ((x[I] = y[I]), ...);
}

// In-place R-point DFT (R = 2, 4, 8, 16) of x[0..R), natural order in and out: radix-2
// decimation in time after a bit reversal, every index and twiddle a template argument (so that
// x stays in registers).
template <int R, bool Inverse, int Half = 1>
__device__ __forceinline__ void dft(float2* x) {
  if constexpr (Half == 1) bitReversePermute<R>(x, std::make_integer_sequence<int, R>{});
  if constexpr (Half < R) {
    radix2Layer<R, Inverse, Half>(x, std::make_integer_sequence<int, R / 2>{});
    dft<R, Inverse, Half * 2>(x);
  }
}

// One line in shared memory as complex values (one 64-bit access each), one padding value per
// 16 so that the strided writes of the early stages (strides 2 … 16) do not hit the same banks,
// and how the threads that share it wait for each other: the whole block (barrier 0), or, when
// they are contiguous, their warp (≤ 32 threads) or a named barrier of their own, so that the
// other lines' threads in the block go on meanwhile.
struct Line {
  float2* values;
  int barrier = 0;  // 0: __syncthreads; else 1 … 15, with `threads` contiguous threads
  int threads = 0;
  __device__ __forceinline__ static int pad(int j) { return j + (j >> 4); }
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
// and 4 more so that neighbouring lines start 8 banks apart.
__host__ __device__ constexpr int lineValues(int length) { return length + length / 16 + 4; }

// Thread t's butterfly inputs of a radix-R stage: butterflies i = t + b·L/16, inputs
// i + r·L/R, in v[b·R + r]. The position of value v[b·R + r].
template <int L, int R>
__device__ __forceinline__ int stagePosition(int t, int b, int r) {
  return t + b * (L / 16) + r * (L / R);
}

template <int L, int R>
__device__ __forceinline__ void gather(float2 (&v)[kValuesPerThread], int t, const Line& line) {
#pragma unroll
  for (int b = 0; b < kValuesPerThread / R; ++b)
#pragma unroll
    for (int r = 0; r < R; ++r) v[b * R + r] = line.load(stagePosition<L, R>(t, b, r));
}

// A radix-R stage at stride P: twiddles, the DFTs in registers; outputs stay in v.
template <int L, int R, int P, bool Inverse>
__device__ __forceinline__ void butterflies(float2 (&v)[kValuesPerThread], int t,
                                            const float2* __restrict__ roots, int rootStep) {
#pragma unroll
  for (int b = 0; b < kValuesPerThread / R; ++b) {
    if (P > 1) {
      const int k = (t + b * (L / 16)) & (P - 1);
#pragma unroll
      for (int r = 1; r < R; ++r) {
        // e^(∓2πi r k / (R P)) from the table of L-point roots (rootStep apart).
        float2 w = __ldg(&roots[(r * k * (L / (R * P))) * rootStep]);
        v[b * R + r] = Inverse ? cmulConj(v[b * R + r], w) : cmul(v[b * R + r], w);
      }
    }
    dft<R, Inverse>(&v[b * R]);
  }
}

// Stage outputs to their places: butterfly i = t + b·L/16 with k = i mod P writes output r to
// (i − k)·R + k + r·P.
template <int L, int R, int P>
__device__ __forceinline__ void scatter(const float2 (&v)[kValuesPerThread], int t,
                                        const Line& line) {
#pragma unroll
  for (int b = 0; b < kValuesPerThread / R; ++b) {
    const int i = t + b * (L / 16), k = i & (P - 1), j = (i - k) * R + k;
#pragma unroll
    for (int r = 0; r < R; ++r) line.store(j + r * P, v[b * R + r]);
  }
}

// Stages R, Rest... starting at stride P, v holding the first stage's inputs. On return v holds
// the transform at the last stage's positions (stagePosition<L, last R>), natural order.
// Every thread of the line must call it (it synchronises them: Line::sync).
template <int L, bool Inverse, int P, int R, int... Rest>
__device__ __forceinline__ void stages(float2 (&v)[kValuesPerThread], int t, const Line& line,
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

// The forward (e^−) or inverse (e^+, unnormalised) transform of a line of length L. Forward:
// v enters at stagePosition<L, 16> and leaves at stagePosition<L, remainderRadix(L)> (16 when
// L is a power of 16); inverse: the other way round. roots[j·rootStep] = e^(−2πi j/L).
template <int L, bool Inverse>
__device__ __forceinline__ void transform(float2 (&v)[kValuesPerThread], int t, const Line& line,
                                          const float2* __restrict__ roots, int rootStep) {
  static_assert(isSupportedLength(L));
  constexpr int rem = remainderRadix(L);
  // 64 = 16·4, 128 = 16·8, 256 = 16·16, 512 = 16·16·2, …, 4096 = 16·16·16.
  if constexpr (L <= 256 && rem == 1) {
    stages<L, Inverse, 1, 16, 16>(v, t, line, roots, rootStep);
  } else if constexpr (L <= 256) {
    if constexpr (Inverse)
      stages<L, true, 1, rem, 16>(v, t, line, roots, rootStep);
    else
      stages<L, false, 1, 16, rem>(v, t, line, roots, rootStep);
  } else if constexpr (rem == 1) {
    stages<L, Inverse, 1, 16, 16, 16>(v, t, line, roots, rootStep);
  } else {
    if constexpr (Inverse)
      stages<L, true, 1, rem, 16, 16>(v, t, line, roots, rootStep);
    else
      stages<L, false, 1, 16, 16, rem>(v, t, line, roots, rootStep);
  }
}

// The radix a forward transform ends with (and an inverse one starts with).
template <int L>
constexpr int lastForwardRadix() {
  return remainderRadix(L) == 1 ? 16 : remainderRadix(L);
}

}  // namespace stacklens::compute::cuda::blockfft
