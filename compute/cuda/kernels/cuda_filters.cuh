// Separable 1D filters along one axis of a (z, y, x) array, for compute/cuda/*.cu only: shared-
// memory tiles along x (row segments) and along y or z (32-column strips), scipy's 'reflect' or
// 'mirror' boundary. Used by the Gaussian blur and by the spline prefilter of the resampling.
// Launch shapes: tuning/filters.cuh.
#pragma once

#include <algorithm>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/tuning/filters.cuh"

namespace stacklens::compute::cuda {
namespace {

template <bool Mirror>
__device__ inline int64_t boundaryIndex(int64_t i, int64_t n) {
  return Mirror ? mirrorIndex(i, n) : reflectIndex(i, n);
}

constexpr int kRowThreads = tuning::SeparableFilterPolicy::rowThreads;
constexpr int kRowOutputsPerThread = tuning::SeparableFilterPolicy::rowOutputsPerThread;
constexpr int kRowTile = kRowThreads * kRowOutputsPerThread;

__device__ inline float2 operator*(float w, float2 v) { return make_float2(w * v.x, w * v.y); }
__device__ inline float2& operator+=(float2& a, float2 b) {
  a.x += b.x;
  a.y += b.y;
  return a;
}
template <class T>
__device__ inline T zero();
template <>
__device__ inline float zero<float>() {
  return 0.f;
}
template <>
__device__ inline float2 zero<float2>() {
  return make_float2(0.f, 0.f);
}

// Along x: a block covers kRowTile outputs of one row; the row segment plus its halo (reflected
// or mirrored at the row ends) is staged in shared memory once and read 2r+1 times.
template <class T, bool Mirror>
__global__ void filterRows(const T* __restrict__ in, T* __restrict__ out, int nx, int ny, int z0,
                           const float* __restrict__ weights, int radius) {
  extern __shared__ unsigned char shared[];
  float* w = reinterpret_cast<float*>(shared);
  int taps = 2 * radius + 1;
  T* tile = reinterpret_cast<T*>(shared + ((taps * sizeof(float) + 15) / 16) * 16);
  int64_t row = (int64_t(z0) + blockIdx.z) * ny + blockIdx.y;
  int x0 = blockIdx.x * kRowTile;
  const T* src = in + row * nx;
  for (int i = threadIdx.x; i < taps; i += blockDim.x) w[i] = weights[i];
  int span = kRowTile + 2 * radius;
  for (int i = threadIdx.x; i < span; i += blockDim.x) {
    int x = x0 - radius + i;
    tile[i] = src[(x >= 0 && x < nx) ? x : boundaryIndex<Mirror>(x, nx)];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kRowOutputsPerThread; ++k) {
    int local = threadIdx.x + k * kRowThreads;
    int x = x0 + local;
    if (x >= nx) break;
    T acc = zero<T>();
    for (int d = 0; d < taps; ++d) acc += w[d] * tile[local + d];
    out[row * nx + x] = acc;
  }
}

// Any axis, for radii too large for a shared tile: one thread per output, neighbouring threads
// along x (coalesced loads; the taps' reuse is left to the caches).
template <class T, bool Mirror>
__global__ void filterAxis(const T* __restrict__ in, T* __restrict__ out, int nx, int ny, int z0,
                           int axis, int n, int64_t stride, const float* __restrict__ weights,
                           int radius) {
  extern __shared__ unsigned char shared[];
  float* w = reinterpret_cast<float*>(shared);
  int taps = 2 * radius + 1;
  for (int i = threadIdx.x; i < taps; i += blockDim.x) w[i] = weights[i];
  __syncthreads();
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = z0 + blockIdx.z;
  if (x >= nx) return;
  int64_t idx = (int64_t(z) * ny + y) * nx + x;
  int i = axis == 2 ? x : axis == 1 ? y : z;
  const T* base = in + (idx - i * stride);
  T acc = zero<T>();
  if (i >= radius && i + radius < n) {
    const T* p = base + (i - radius) * stride;
    for (int d = 0; d < taps; ++d) acc += w[d] * p[d * stride];
  } else {
    for (int d = 0; d < taps; ++d)
      acc += w[d] * base[boundaryIndex<Mirror>(i - radius + d, n) * stride];
  }
  out[idx] = acc;
}

constexpr int kColumnWidth = tuning::SeparableFilterPolicy::columnWidth;
constexpr int kColumnRows = tuning::SeparableFilterPolicy::columnRows;  // outputs along the axis
constexpr int kColumnThreadsY = tuning::SeparableFilterPolicy::columnThreadsY;

// Along y or z: a block covers 32 columns × kColumnRows outputs; the strip plus its halo is
// staged in shared memory once, so each input is read from memory about once instead of 2r+1
// times. `stride` is the element distance along the axis, `lineStride` between the blocks' grid-z
// index (z for the y axis, y for the z axis).
template <class T, bool Mirror>
__global__ void filterColumns(const T* __restrict__ in, T* __restrict__ out, int nx, int n,
                              int64_t stride, int64_t lineStride, int line0,
                              const float* __restrict__ weights, int radius) {
  extern __shared__ unsigned char shared[];
  float* w = reinterpret_cast<float*>(shared);
  int taps = 2 * radius + 1;
  T* tile = reinterpret_cast<T*>(shared + ((taps * sizeof(float) + 15) / 16) * 16);
  int tid = threadIdx.y * kColumnWidth + threadIdx.x;
  for (int i = tid; i < taps; i += kColumnWidth * kColumnThreadsY) w[i] = weights[i];
  int x = blockIdx.x * kColumnWidth + threadIdx.x;
  int a0 = blockIdx.y * kColumnRows;
  const int64_t base = (int64_t(line0) + blockIdx.z) * lineStride;
  int span = kColumnRows + 2 * radius;
  for (int r = threadIdx.y; r < span; r += kColumnThreadsY) {
    int pos = a0 - radius + r;
    pos = (pos >= 0 && pos < n) ? pos : int(boundaryIndex<Mirror>(pos, n));
    tile[r * kColumnWidth + threadIdx.x] = x < nx ? in[base + pos * stride + x] : zero<T>();
  }
  __syncthreads();
  if (x >= nx) return;
  for (int k = threadIdx.y; k < kColumnRows; k += kColumnThreadsY) {
    int pos = a0 + k;
    if (pos >= n) break;
    T acc = zero<T>();
    const T* column = tile + k * kColumnWidth + threadIdx.x;
    for (int d = 0; d < taps; ++d) acc += w[d] * column[d * kColumnWidth];
    out[base + pos * stride + x] = acc;
  }
}

// out = in filtered along `axis` (0 z, 1 y, 2 x) with the 2r+1 weights w (on the device).
template <class T, bool Mirror>
void filterAlong(const ContextPtr& ctx, const T* in, T* out, const Shape& s, int axis,
                 const float* w, int radius) {
  const size_t weightBytes = ((size_t(2 * radius + 1) * sizeof(float) + 15) / 16) * 16;
  constexpr size_t kShared = 48 * 1024;  // dynamic shared memory a launch gets without opting in
  cudaStream_t st = ctx->stream();
  if (axis == 2) {
    size_t tileBytes = (kRowTile + 2 * size_t(radius)) * sizeof(T);
    if (weightBytes + tileBytes <= kShared) {
      for (int64_t z0 = 0; z0 < s.z; z0 += 65535) {
        unsigned nz = static_cast<unsigned>(std::min<int64_t>(65535, s.z - z0));
        dim3 grid(blocksFor(s.x, kRowTile), static_cast<unsigned>(s.y), nz);
        filterRows<T, Mirror><<<grid, kRowThreads, weightBytes + tileBytes, st>>>(
            in, out, int(s.x), int(s.y), int(z0), w, radius);
        SL_LAUNCHED();
      }
      return;
    }
  } else {
    size_t tileBytes = size_t(kColumnRows + 2 * radius) * kColumnWidth * sizeof(T);
    if (weightBytes + tileBytes <= kShared) {
      const int64_t n = axis == 0 ? s.z : s.y;
      const int64_t stride = axis == 0 ? s.y * s.x : s.x;
      const int64_t lines = axis == 0 ? s.y : s.z;
      const int64_t lineStride = axis == 0 ? s.x : s.y * s.x;
      for (int64_t l0 = 0; l0 < lines; l0 += 65535) {
        unsigned nl = static_cast<unsigned>(std::min<int64_t>(65535, lines - l0));
        dim3 grid(blocksFor(s.x, kColumnWidth), blocksFor(n, kColumnRows), nl);
        filterColumns<T, Mirror>
            <<<grid, dim3(kColumnWidth, kColumnThreadsY), weightBytes + tileBytes, st>>>(
                in, out, int(s.x), int(n), stride, lineStride, int(l0), w, radius);
        SL_LAUNCHED();
      }
      return;
    }
  }
  if (weightBytes > kShared) throw InvalidArgument("filter radius too large");
  const int64_t n = axis == 0 ? s.z : axis == 1 ? s.y : s.x;
  const int64_t stride = axis == 0 ? s.y * s.x : axis == 1 ? s.x : 1;
  for (int64_t z0 = 0; z0 < s.z; z0 += 65535) {
    unsigned nz = static_cast<unsigned>(std::min<int64_t>(65535, s.z - z0));
    constexpr int threads = tuning::SeparableFilterPolicy::axisThreads;
    dim3 grid(blocksFor(s.x, threads), static_cast<unsigned>(s.y), nz);
    filterAxis<T, Mirror><<<grid, threads, weightBytes, st>>>(in, out, int(s.x), int(s.y), int(z0),
                                                              axis, int(n), stride, w, radius);
    SL_LAUNCHED();
  }
}

}  // namespace
}  // namespace stacklens::compute::cuda
