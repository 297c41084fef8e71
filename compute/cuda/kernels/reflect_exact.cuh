// The kernels of Boundary::ReflectExact (compute/cuda/reflect_exact.cu; the method in
// reflect_exact.cuh): the transfer function's cosine sums over the symmetric PSF, one axis at a
// time, the last axis written as the half spectrum's pairs, and the convolution of a half
// spectrum with those pairs, one thread per group of mixed frequencies. (For compute/cuda/*.cu
// only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/reflect_exact.cuh"

namespace stacklens::compute::cuda::reflect_exact {
namespace {

// Outputs per thread of the transfer sums: each input value read once serves this many.
constexpr int kOutputs = 8;

// out[o][k][i] = Σ_j in[o][j][i] · cos(π k (j − c) / n) for k < n, j < m = 2c + 1, with in
// symmetric in j about c: one axis of H at a time, kOutputs values of k per thread.
__global__ void cosineSums(const float* __restrict__ in, float* __restrict__ out, int64_t outer,
                           int64_t m, int64_t inner, int64_t n, const float* __restrict__ table) {
  const int64_t groups = (n + kOutputs - 1) / kOutputs;
  const int64_t id = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (id >= outer * groups * inner) return;
  const int64_t i = id % inner, k0 = (id / inner) % groups * kOutputs, o = id / (inner * groups);
  const int64_t c = m / 2;
  const float* src = in + o * m * inner + i;
  float sum[kOutputs];
  const float centre = src[c * inner];
#pragma unroll
  for (int q = 0; q < kOutputs; ++q) sum[q] = centre;
  for (int64_t d = 1; d <= c; ++d) {
    const float v = src[(c - d) * inner] + src[(c + d) * inner];
#pragma unroll
    for (int q = 0; q < kOutputs; ++q)
      if (k0 + q < n) sum[q] += v * table[(k0 + q) * (c + 1) + d];
  }
#pragma unroll
  for (int q = 0; q < kOutputs; ++q)
    if (k0 + q < n) out[(o * n + k0 + q) * inner + i] = sum[q];
}

// The last axis into pairs: (H at kx, H at width − kx) for kx ≤ width/2, scaled; `in` holds the
// x and y sums of each PSF plane (m planes of height × width). In 2D (depth 1) m is 1.
__global__ void transferPairs(const float* __restrict__ in, float2* __restrict__ pairs, int64_t m,
                              int64_t depth, int64_t height, int64_t width, int64_t pitch,
                              float scale, const float* __restrict__ table) {
  const int64_t columns = width / 2 + 1, groups = (depth + kOutputs - 1) / kOutputs;
  const int64_t id = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (id >= groups * height * columns) return;
  const int64_t kx = id % columns, ky = (id / columns) % height,
                k0 = id / (columns * height) * kOutputs;
  const int64_t c = m / 2, plane = height * width, mirror = width - kx;
  const float* src = in + ky * width;
  float a[kOutputs], b[kOutputs];
  const float ca = src[c * plane + kx], cb = mirror < width ? src[c * plane + mirror] : 0.f;
#pragma unroll
  for (int q = 0; q < kOutputs; ++q) a[q] = ca, b[q] = cb;
  for (int64_t d = 1; d <= c; ++d) {
    const float va = src[(c - d) * plane + kx] + src[(c + d) * plane + kx];
    const float vb =
        mirror < width ? src[(c - d) * plane + mirror] + src[(c + d) * plane + mirror] : 0.f;
#pragma unroll
    for (int q = 0; q < kOutputs; ++q) {
      const float t = k0 + q < depth ? table[(k0 + q) * (c + 1) + d] : 0.f;
      a[q] += va * t;
      b[q] += vb * t;
    }
  }
#pragma unroll
  for (int q = 0; q < kOutputs; ++q)
    if (k0 + q < depth)
      pairs[((k0 + q) * height + ky) * pitch + kx] = make_float2(a[q] * scale, b[q] * scale);
}

// One thread per group (kx ≤ width/2, ky ≤ height/2, kz ≤ depth/2).
__global__ void convolveGroups(float2* __restrict__ s, const float2* __restrict__ h, int64_t depth,
                               int64_t height, int64_t width, int64_t pitch) {
  const int64_t gx = width / 2 + 1, gy = height / 2 + 1, gz = depth / 2 + 1;
  const int64_t id = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (id >= gx * gy * gz) return;
  const int64_t kx = id % gx, ky = (id / gx) % gy, kz = id / (gx * gy);
  const int64_t ky2 = (height - ky) % height, kz2 = (depth - kz) % depth;
  const float2 wx = twiddle(kx, width), wy = twiddle(ky, height);
  auto at = [&](int64_t z, int64_t y) { return (z * height + y) * pitch + kx; };
  if (depth == 1) {
    float2 v[2] = {s[at(0, ky)], s[at(0, ky2)]};
    const float2 t[2] = {h[at(0, ky)], h[at(0, ky2)]};
    convolveGroup(v, t, wx, wy);
    s[at(0, ky)] = v[0];
    s[at(0, ky2)] = v[1];
    return;
  }
  const int64_t zs[2] = {kz, kz2}, ys[2] = {ky, ky2};
  float2 v[2][2], t[2][2];
#pragma unroll
  for (int a = 0; a < 2; ++a)
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      v[a][b] = s[at(zs[b], ys[a])];
      t[a][b] = h[at(zs[b], ys[a])];
    }
  convolveGroup(v, t, wx, wy, twiddle(kz, depth));
#pragma unroll
  for (int a = 0; a < 2; ++a)
#pragma unroll
    for (int b = 0; b < 2; ++b) s[at(zs[b], ys[a])] = v[a][b];
}

}  // namespace
}  // namespace stacklens::compute::cuda::reflect_exact
