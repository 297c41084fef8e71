// Richardson–Lucy with Boundary::ReflectExact: every convolution sees the data mirrored past the
// edges (half-sample symmetric). For a PSF symmetric on every axis, convolving that extension is
// diagonal in the DCT-II basis, with the eigenvalues
//     H[k] = Σ_m psf[m] · Π_a cos(π k_a m_a / N_a)        (m relative to the PSF's centre),
// so no padding is needed. The DCT is taken through the FFT (Makhoul 1980): the data permuted on
// every axis (v[n] = x[2n], v[N−1−n] = x[2n+1]; permutedIndex), transformed, and then per axis
//     X_k = w_k V_k + w̄_k V_{N−k},    w_k = e^(−iπk / 2N).
// A convolution is V ← M⁻¹ · H · M · V, which mixes the 2^d frequencies {k_a, N_a − k_a}; in a real
// frame's half spectrum (V at N_x − k_x is the conjugate of V at −k) those are 2 stored values in
// 2D and 4 in 3D. Richardson–Lucy's other steps act value by value, so the whole iteration runs
// on the permuted data and only the input and the result are permuted.
//
// The transfer function is kept as pairs (H at k_x, H at N_x − k_x) in the half spectrum's layout,
// with H at index N (which meets only zeros) taken as 0. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"

namespace stacklens::compute::cuda::reflect_exact {

// The position of data index i in the permuted order of an axis of length n, and back.
__host__ __device__ inline int64_t permutedIndex(int64_t i, int64_t n) {
  return i % 2 == 0 ? i / 2 : n - (i + 1) / 2;
}
__host__ __device__ inline int64_t dataIndex(int64_t p, int64_t n) {
  return 2 * p < n ? 2 * p : 2 * n - 1 - 2 * p;
}

// w_k = e^(−iπk / 2n).
__device__ __forceinline__ float2 twiddle(int64_t k, int64_t n) {
  float s, c;
  sincospif(-float(k) / float(2 * n), &s, &c);
  return make_float2(c, s);
}
// The same for k < n as interleaved (cos, sin), computed in double: the fused passes read them.
std::vector<float> twiddles(int64_t n);

__device__ __forceinline__ float2 mul(float2 a, float2 b) {
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ float2 mulConj(float2 a, float2 b) {  // a · conj(b)
  return make_float2(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
}
__device__ __forceinline__ float2 conj(float2 a) { return make_float2(a.x, -a.y); }

// (V_k, V_{N−k}) → (X_k, X_{N−k}): X_k = w V_k + w̄ V_{N−k}, X_{N−k} = i (w V_k − w̄ V_{N−k}).
__device__ __forceinline__ void toCosine(float2& a, float2& b, float2 w) {
  const float2 p = mul(a, w), q = mulConj(b, w);
  a = make_float2(p.x + q.x, p.y + q.y);
  b = make_float2(q.y - p.y, p.x - q.x);
}
// The inverse: V_k = w̄ (X_k − i X_{N−k}) / 2, V_{N−k} = w (X_k + i X_{N−k}) / 2.
__device__ __forceinline__ void fromCosine(float2& a, float2& b, float2 w) {
  const float2 d = make_float2(0.5f * (a.x + b.y), 0.5f * (a.y - b.x));  // (X_k − i X_{N−k}) / 2
  const float2 s = make_float2(0.5f * (a.x - b.y), 0.5f * (a.y + b.x));  // (X_k + i X_{N−k}) / 2
  a = mulConj(d, w);
  b = mul(s, w);
}

// The x axis last. The values at N_x − k_x are the conjugates of those at −k, and each axis step
// keeps that relation between the two halves, so after the y and z steps the half at N_x − k_x is
// the conjugate of the half at k_x, and the cosine coefficients (real: the DCT of real data) are
// X_k = 2 Re(w a), X_{N−k} = −2 Im(w a). Those · the transfer pair, back to V_kx.
__device__ __forceinline__ float2 scaleAlongX(float2 a, float2 h, float2 w) {
  const float x0 = 2.f * h.x * (w.x * a.x - w.y * a.y);
  const float x1 = -2.f * h.y * (w.x * a.y + w.y * a.x);
  return make_float2(0.5f * (x0 * w.x - x1 * w.y), -0.5f * (x0 * w.y + x1 * w.x));
}

// One 3D group: s[sy][sz] the stored values at (k_x, ky or N_y − ky, kz or N_z − kz), h[cy][cz]
// the transfer pairs there, w* the axes' twiddles. In place.
__device__ __forceinline__ void convolveGroup(float2 (&s)[2][2], const float2 (&h)[2][2], float2 wx,
                                              float2 wy, float2 wz) {
#pragma unroll
  for (int b = 0; b < 2; ++b) toCosine(s[b][0], s[b][1], wz);
#pragma unroll
  for (int b = 0; b < 2; ++b) toCosine(s[0][b], s[1][b], wy);
#pragma unroll
  for (int sy = 0; sy < 2; ++sy)
#pragma unroll
    for (int sz = 0; sz < 2; ++sz) s[sy][sz] = scaleAlongX(s[sy][sz], h[sy][sz], wx);
#pragma unroll
  for (int b = 0; b < 2; ++b) fromCosine(s[0][b], s[1][b], wy);
#pragma unroll
  for (int b = 0; b < 2; ++b) fromCosine(s[b][0], s[b][1], wz);
}

// One 2D group: s[sy] the stored values at (k_x, ky or N_y − ky), h[cy] the transfer pairs.
__device__ __forceinline__ void convolveGroup(float2 (&s)[2], const float2 (&h)[2], float2 wx,
                                              float2 wy) {
  toCosine(s[0], s[1], wy);
#pragma unroll
  for (int sy = 0; sy < 2; ++sy) s[sy] = scaleAlongX(s[sy], h[sy], wx);
  fromCosine(s[0], s[1], wy);
}

// The transfer pairs of a depth × height × width frame (depth 1: 2D) into `pairs` (depth ×
// height rows of `pitch` float2, pitch ≥ width/2 + 1; the rest zero), scaled by `scale`, from the
// PSF on the device (psfDepth × psfHeight × psfWidth, centre at size / 2, symmetric on every axis).
void makeTransfer(const ContextPtr& ctx, const float* psf, int64_t psfDepth, int64_t psfHeight,
                  int64_t psfWidth, int64_t depth, int64_t height, int64_t width, int64_t pitch,
                  float scale, float2* pairs);

// spectrum (depth × height rows of `pitch` complex values, width/2 + 1 used) ← the convolution
// above, for the transforms that are not fused (cuFFT's half spectrum, pitch width/2 + 1).
void convolve(cudaStream_t stream, float2* spectrum, const float2* pairs, int64_t depth,
              int64_t height, int64_t width, int64_t pitch);

}  // namespace stacklens::compute::cuda::reflect_exact
