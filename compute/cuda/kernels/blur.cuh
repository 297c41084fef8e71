// The Gaussian blur's own kernels (compute/cuda/cuda_blur.cu): the fused 2D pass for equal, small
// radii (x pass into shared memory, then the y pass: one read and one write of the image), and the
// element-wise passes around the NaN-aware normalised convolution. The separable passes it falls
// back to are kernels/cuda_filters.cuh. Launch shapes: tuning/blur.cuh. (For compute/cuda/*.cu
// only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/tuning/blur.cuh"

namespace stacklens::compute::cuda {
namespace {

__global__ void splitNan(const float* __restrict__ in, float2* __restrict__ out, int64_t count) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  float v = in[i];
  out[i] = isnan(v) ? make_float2(0.f, 0.f) : make_float2(v, 1.f);
}

// Normalised convolution: blurred values over blurred weights; NaN stays where it was.
__global__ void joinNan(const float2* __restrict__ blurred, const float* __restrict__ original,
                        float* __restrict__ out, int64_t count) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  float2 b = blurred[i];
  out[i] = (isnan(original[i]) || b.y <= 0.f) ? __int_as_float(0x7fc00000) : b.x / b.y;
}

// The fused kernel's tile shape and radii (tuning::FusedBlurPolicy).
using FusedPolicy = tuning::FusedBlurPolicy;
constexpr int kFuseW = FusedPolicy::tileWidth, kFuseThreads = FusedPolicy::threads,
              kFuseMaxRadius = FusedPolicy::maxRadius;
__host__ __device__ constexpr int fusedTileHeight(int radius) {
  return FusedPolicy::tileHeight(radius);
}
// Each thread makes four adjacent outputs per step along x and y; a warp loads a row.
static_assert(kFuseW % 4 == 0 && kFuseThreads % 32 == 0);
static_assert(FusedPolicy::tallTileHeight % 4 == 0 && FusedPolicy::shortTileHeight % 4 == 0);

// The taps of both axes travel as a kernel parameter: with the radius a template argument every
// tap is a constant-bank operand of its multiply–add.
struct FusedTaps {
  float x[2 * kFuseMaxRadius + 1], y[2 * kFuseMaxRadius + 1];
};

// One kFuseW × fusedTileHeight(R) output tile per block (radius R on both axes): the input tile
// with its halo (reflected at the image edges) goes to shared memory, the x pass over all its rows
// into a second shared array, then the y pass to the output: one read and one write of the image.
// Each thread makes four adjacent outputs per step (one shared read per tap for four outputs); the
// row pitch ≡ 1 (mod 4) keeps the x pass's four-wide segments free of bank conflicts. Sums run in
// the same order as the separable passes (x then y, taps in order), so both paths give the same
// values.
template <int R>
__global__ void __launch_bounds__(kFuseThreads)
    blur2dFused(const float* __restrict__ in, float* __restrict__ out, int ny, int nx,
                FusedTaps taps) {
  constexpr int kFuseH = fusedTileHeight(R);
  constexpr int kInW = kFuseW + 2 * R, kInH = kFuseH + 2 * R, kTaps = 2 * R + 1;
  constexpr int kPitch = (kInW + 3) / 4 * 4 + 1;
  __shared__ float src[kInH * kPitch];
  __shared__ __align__(16) float rows[kInH * kFuseW];
  const int x0 = blockIdx.x * kFuseW, y0 = blockIdx.y * kFuseH;
  const int64_t sliceBase = int64_t(blockIdx.z) * ny * nx;
  const float* slice = in + sliceBase;
  // A warp per row (one reflection per row, no index division), a few rows in flight per warp.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll(FusedPolicy::rowsInFlight)
  for (int r = warp; r < kInH; r += kFuseThreads / 32) {
    int y = y0 - R + r;
    if (y < 0 || y >= ny) y = int(reflectIndex(y, ny));
    const float* row = slice + int64_t(y) * nx;
#pragma unroll
    for (int c = lane; c < kInW; c += 32) {
      int x = x0 - R + c;
      if (x < 0 || x >= nx) x = int(reflectIndex(x, nx));
      src[r * kPitch + c] = __ldg(row + x);
    }
  }
  __syncthreads();
  for (int seg = threadIdx.x; seg < kInH * (kFuseW / 4); seg += kFuseThreads) {
    const int r = seg / (kFuseW / 4), c = (seg % (kFuseW / 4)) * 4;
    const float* p = src + r * kPitch + c;
    float v0 = p[0], v1 = p[1], v2 = p[2];
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
#pragma unroll
    for (int d = 0; d < kTaps; ++d) {
      const float v3 = p[d + 3], w = taps.x[d];
      a0 += w * v0;
      a1 += w * v1;
      a2 += w * v2;
      a3 += w * v3;
      v0 = v1;
      v1 = v2;
      v2 = v3;
    }
    *reinterpret_cast<float4*>(rows + r * kFuseW + c) = make_float4(a0, a1, a2, a3);
  }
  __syncthreads();
  for (int item = threadIdx.x; item < kFuseW * (kFuseH / 4); item += kFuseThreads) {
    const int c = item % kFuseW, r = (item / kFuseW) * 4;
    const float* p = rows + r * kFuseW + c;
    float v0 = p[0], v1 = p[kFuseW], v2 = p[2 * kFuseW];
    float a[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int d = 0; d < kTaps; ++d) {
      const float v3 = p[(d + 3) * kFuseW], w = taps.y[d];
      a[0] += w * v0;
      a[1] += w * v1;
      a[2] += w * v2;
      a[3] += w * v3;
      v0 = v1;
      v1 = v2;
      v2 = v3;
    }
    const int x = x0 + c;
    if (x >= nx) continue;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int y = y0 + r + k;
      if (y < ny) out[sliceBase + int64_t(y) * nx + x] = a[k];
    }
  }
}

}  // namespace
}  // namespace stacklens::compute::cuda
