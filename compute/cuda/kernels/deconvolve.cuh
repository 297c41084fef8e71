// Richardson–Lucy's element-wise kernels (compute/cuda/cuda_deconvolve.cu): the observed data
// into its padded (or, for Boundary::ReflectExact, permuted) frame and the result back out, the
// check for any finite value, the PSF wrapped into a frame for the OTF, the RL–TV divergence, the
// Biggs–Andrews acceleration (its step size computed and applied on the device, so that the loop
// needs no host synchronisation), and on cuFFT's path the separate passes that the store callbacks
// (compute/cuda/lto/) replace where they link: the OTF products, the ratio, the update with its
// clamp. Semantics are the CPU backend's (compute/cpu/richardson_lucy.cpp); launch shapes:
// tuning/deconvolve.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include <cstdint>
#include <cub/block/block_reduce.cuh>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/lto/rl_callback_args.h"
#include "compute/cuda/reflect_exact.cuh"
#include "compute/cuda/tuning/deconvolve.cuh"
#include "compute/params.h"

namespace stacklens::compute::cuda {
namespace {

using Policy = tuning::RichardsonLucyPolicy;
constexpr int kThreads = Policy::threads;  // the element-wise passes

struct Dims {
  int64_t z, y, x;
  __host__ __device__ int64_t count() const { return z * y * x; }
};

// The observed data in the padded frame: reflected (half-sample symmetric), zero, or as is;
// non-finite values count as 0 during the iterations.
// The first estimate (and the acceleration's previous one, when not null) start as copies.
__global__ void padObserved(const float* __restrict__ src, Dims s, float* __restrict__ dst, Dims d,
                            Dims lo, int boundary, float* __restrict__ firstEstimate,
                            float* __restrict__ previous) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= d.count()) return;
  int64_t x = i % d.x, y = (i / d.x) % d.y, z = i / (d.x * d.y);
  int64_t sx = x - lo.x, sy = y - lo.y, sz = z - lo.z;
  bool inside = sx >= 0 && sx < s.x && sy >= 0 && sy < s.y && sz >= 0 && sz < s.z;
  float v = 0.f;
  if (inside || boundary != static_cast<int>(Boundary::Zero)) {
    sx = reflectIndex(sx, s.x);
    sy = reflectIndex(sy, s.y);
    sz = reflectIndex(sz, s.z);
    v = src[(sz * s.y + sy) * s.x + sx];
  }
  v = isfinite(v) ? v : 0.f;
  dst[i] = v;
  firstEstimate[i] = v;
  if (previous) previous[i] = v;
}

// The image-sized centre of the estimate; non-finite input values are written back unchanged.
__global__ void cropEstimate(const float* __restrict__ src, Dims d, Dims lo,
                             const float* __restrict__ original, float* __restrict__ dst, Dims s) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= s.count()) return;
  int64_t x = i % s.x, y = (i / s.x) % s.y, z = i / (s.x * s.y);
  float o = original[i];
  dst[i] = isfinite(o) ? src[((z + lo.z) * d.y + (y + lo.y)) * d.x + (x + lo.x)] : o;
}

// Boundary::ReflectExact: the observed data in the DCT's permuted order (reflect_exact.cuh), with
// the first estimates as padObserved makes them.
__global__ void permuteObserved(const float* __restrict__ src, Dims d, float* __restrict__ dst,
                                float* __restrict__ firstEstimate, float* __restrict__ previous) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= d.count()) return;
  const int64_t x = i % d.x, y = (i / d.x) % d.y, z = i / (d.x * d.y);
  using reflect_exact::dataIndex;
  float v = src[(dataIndex(z, d.z) * d.y + dataIndex(y, d.y)) * d.x + dataIndex(x, d.x)];
  v = isfinite(v) ? v : 0.f;
  dst[i] = v;
  firstEstimate[i] = v;
  if (previous) previous[i] = v;
}

// The estimate back in the data's order; non-finite input values are written back unchanged.
__global__ void unpermuteEstimate(const float* __restrict__ src, Dims d,
                                  const float* __restrict__ original, float* __restrict__ dst) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= d.count()) return;
  const int64_t x = i % d.x, y = (i / d.x) % d.y, z = i / (d.x * d.y);
  using reflect_exact::permutedIndex;
  const float o = original[i];
  dst[i] =
      isfinite(o)
          ? src[(permutedIndex(z, d.z) * d.y + permutedIndex(y, d.y)) * d.x + permutedIndex(x, d.x)]
          : o;
}

__global__ void anyFinite(const float* __restrict__ v, int64_t n, int* flag) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  bool finite = i < n && isfinite(v[i]);
  if (__any_sync(0xffffffffu, finite) && (threadIdx.x & 31) == 0) atomicOr(flag, 1);
}

// The PSF wrapped so that its centre sample (index size / 2) sits at the origin.
__global__ void placePsf(const float* __restrict__ psf, Dims p, float* __restrict__ dst, Dims d) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= p.count()) return;
  int64_t x = i % p.x, y = (i / p.x) % p.y, z = i / (p.x * p.y);
  int64_t tx = ((x - p.x / 2) % d.x + d.x) % d.x;
  int64_t ty = ((y - p.y / 2) % d.y + d.y) % d.y;
  int64_t tz = ((z - p.z / 2) % d.z + d.z) % d.z;
  // atomicAdd: a PSF longer than a padded axis wraps onto itself.
  atomicAdd(&dst[(tz * d.y + ty) * d.x + tx], psf[i]);
}

__global__ void scaleSpectrum(cufftComplex* s, int64_t n, float factor) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    s[i].x *= factor;
    s[i].y *= factor;
  }
}

// S ← S·OTF (blur) or S·conj(OTF) (correlate, the adjoint).
template <bool Conjugate>
__global__ void multiplySpectrum(cufftComplex* __restrict__ s, const cufftComplex* __restrict__ otf,
                                 int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  cufftComplex a = s[i], b = otf[i];
  if (Conjugate) b.y = -b.y;
  s[i] = make_cuFloatComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// ratio = image / max(PSF ⊛ estimate, ε), in place.
__global__ void ratioKernel(const float* __restrict__ image, float* __restrict__ blurred, int64_t n,
                            float epsilon) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) blurred[i] = image[i] / fmaxf(blurred[i], epsilon);
}

// estimate ← max(estimate · correction [/ max(1 − λ div, floor)], 0); change ← new − old when
// tracked (for the acceleration).
__global__ void updateEstimate(float* __restrict__ estimate, const float* __restrict__ correction,
                               const float* __restrict__ divergence, float lambda,
                               float* __restrict__ change, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float old = estimate[i];
  float next = old * correction[i];
  if (divergence) next /= fmaxf(1.f - lambda * divergence[i], 1e-3f);
  next = fmaxf(next, 0.f);
  if (change) change[i] = next - old;
  estimate[i] = next;
}

// The unit gradient (forward differences, periodic on the frame) at (z, y, x).
__device__ inline void unitGradient(const float* u, Dims d, int64_t z, int64_t y, int64_t x,
                                    float g[3]) {
  float c = u[(z * d.y + y) * d.x + x];
  int64_t xp = x + 1 == d.x ? 0 : x + 1, yp = y + 1 == d.y ? 0 : y + 1,
          zp = z + 1 == d.z ? 0 : z + 1;
  float gx = u[(z * d.y + y) * d.x + xp] - c;
  float gy = u[(z * d.y + yp) * d.x + x] - c;
  float gz = d.z > 1 ? u[(zp * d.y + y) * d.x + x] - c : 0.f;
  float inv = 1.0f / sqrtf(gx * gx + gy * gy + gz * gz + 1e-12f);
  g[0] = gx * inv;
  g[1] = gy * inv;
  g[2] = gz * inv;
}

// div(∇u/|∇u|) with backward differences (periodic), as Dey et al.'s RL–TV uses it.
__global__ void tvDivergence(const float* __restrict__ u, float* __restrict__ div, Dims d) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= d.count()) return;
  int64_t x = i % d.x, y = (i / d.x) % d.y, z = i / (d.x * d.y);
  float here[3], left[3], up[3], below[3] = {0.f, 0.f, 0.f};
  unitGradient(u, d, z, y, x, here);
  unitGradient(u, d, z, y, x == 0 ? d.x - 1 : x - 1, left);
  unitGradient(u, d, z, y == 0 ? d.y - 1 : y - 1, x, up);
  if (d.z > 1) unitGradient(u, d, z == 0 ? d.z - 1 : z - 1, y, x, below);
  div[i] = (here[0] - left[0]) + (here[1] - up[1]) + (here[2] - below[2]);
}

// Biggs–Andrews: dots[0] = Σ g·g_prev, dots[1] = Σ g_prev² (accumulated in double).
__global__ void accelerationDots(const float* __restrict__ g, const float* __restrict__ gPrevious,
                                 int64_t n, double* dots) {
  using Reduce = cub::BlockReduce<double, kThreads>;  // launched with kThreads
  __shared__ typename Reduce::TempStorage temp;
  double a = 0, b = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float gi = g[i], gp = gPrevious[i];
    a += double(gi) * gp;
    b += double(gp) * gp;
  }
  double sa = Reduce(temp).Sum(a);
  __syncthreads();
  double sb = Reduce(temp).Sum(b);
  if (threadIdx.x == 0) {
    atomicAdd(&dots[0], sa);
    atomicAdd(&dots[1], sb);
  }
}

// x = estimate: estimate ← max(x + α (x − previous), 0), previous ← x, with
// α = clamp(dots[0] / dots[1], 0, 1) read on the device (0 when dots is null: the first step).
__global__ void extrapolate(float* __restrict__ estimate, float* __restrict__ previous, int64_t n,
                            const double* dots) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float alpha = 0.f;
  if (dots) {
    double num = dots[0], den = dots[1];
    alpha = den > 0 ? static_cast<float>(fmin(fmax(num / den, 0.0), 1.0)) : 0.f;
  }
  float x = estimate[i];
  estimate[i] = fmaxf(x + alpha * (x - previous[i]), 0.f);
  previous[i] = x;
}

// Points the update callback's change output at this iteration's buffer (the change buffers
// swap every iteration; the callback's arguments live on the device).
__global__ void setChangeTarget(RlCallbackArgs* args, float* change) { args->change = change; }

}  // namespace
}  // namespace stacklens::compute::cuda
