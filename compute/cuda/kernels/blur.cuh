// The Gaussian blur's own kernels (compute/cuda/cuda_blur.cu): the fused 2D pass for equal, small
// radii (x pass into shared memory, then the y pass: one read and one write of the image), and the
// element-wise passes around the NaN-aware normalised convolution. The separable passes it falls
// back to are kernels/cuda_filters.cuh. Launch shapes: tuning/blur.cuh. (For compute/cuda/*.cu
// only.)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
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
constexpr int kFuseOutX = FusedPolicy::outputsPerThreadX;
constexpr int kFuseWalkBlocksPerSm = FusedPolicy::walkBlocksPerSm;
// A quarter warp's x-pass reads are eight consecutive float4s of one row, and a thread keeps its
// columns from row to row.
static_assert(kFuseOutX == 4 && kFuseW % 4 == 0 && kFuseThreads % 32 == 0);
static_assert(kFuseThreads % (kFuseW / 4) == 0 && kFuseThreads % kFuseW == 0);
static_assert(FusedPolicy::tileHeight >= 2 * kFuseMaxRadius);

// The taps of both axes travel as a kernel parameter: with the radius a template argument every
// tap is a fixed constant-bank entry, loaded once into a uniform register for its multiply–adds.
// Sized for the radius: the launch copies no unused taps.
template <int R>
struct FusedTaps {
  float x[2 * R + 1], y[2 * R + 1];
};

// The fused kernel's tile and shared arrays for radius R: the input rows with their halo, whose
// columns start R rounded up to a float4 left of the output tile (so interior rows copy as aligned
// float4s), and the x pass's rows. Tiles are tallTileHeight rows where both arrays fit static
// shared memory, else tileHeight; the y pass's columns of outY outputs, one a thread, tile them.
template <int R>
struct FusedTile {
  static constexpr int halo = (R + 3) / 4 * 4;
  static constexpr int inW = kFuseW + 2 * halo, quads = inW / 4;
  static constexpr int pitch = inW;
  static constexpr int bytesFor(int h) { return 4 * (h + 2 * R) * (pitch + kFuseW); }
  static constexpr int height = bytesFor(FusedPolicy::tallTileHeight) <= 48 * 1024
                                    ? FusedPolicy::tallTileHeight
                                    : FusedPolicy::tileHeight;
  static constexpr int inH = height + 2 * R, bytes = bytesFor(height);
  static constexpr int outY = height * kFuseW / kFuseThreads;
  // As many blocks as shared memory lets an SM hold (228 KiB, 1 KiB of it reserved per block), at
  // most the 2048 threads it can run and kFuseWalkBlocksPerSm (the walk leaves no more): the
  // register budget __launch_bounds__ asks for.
  static constexpr int perSm =
      std::min({(228 * 1024) / (bytes + 1024), 2048 / kFuseThreads, kFuseWalkBlocksPerSm});
  static_assert(quads <= 32, "a warp loads a row, a float4 per lane");
  static_assert(height % outY == 0 && height >= 2 * R && bytes <= 48 * 1024);
};

// scipy's reflect for an index at most one period out, without reflectIndex's 64-bit division.
__device__ __forceinline__ int reflectNear(int i, int n) {
  if (i >= 0 && i < n) return i;
  const int j = i < 0 ? -1 - i : 2 * n - 1 - i;
  return j >= 0 && j < n ? j : int(reflectIndex(i, n));
}

// Stages input rows gy0 … gy0 + K − 1 (reflected at the image edges) of the block's columns into
// src, a warp per row and a float4 per lane, asynchronously: the caller waits. A lane's columns are
// the same in every row, so their reflection is worked out once.
template <int R, int K>
__device__ __forceinline__ void stageFusedRows(float* src, const float* slice, int gy0, int ny,
                                               int nx, int gx, bool direct) {
  using T = FusedTile<R>;
  constexpr int P = T::pitch, kWarps = kFuseThreads / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane >= T::quads) return;
  if (direct && gy0 >= 0 && gy0 + K <= ny) {
    // All the rows lie inside the image: consecutive rows, nothing to reflect.
    const float* g = slice + int64_t(gy0 + warp) * nx + gx;
    float* s = src + warp * P + 4 * lane;
    const int64_t step = int64_t(kWarps) * nx;
#pragma unroll
    for (int k = 0; k < (K + kWarps - 1) / kWarps; ++k)
      if (k < K / kWarps || warp + k * kWarps < K) copyAsync16(s + k * kWarps * P, g + k * step);
  } else if (direct) {
    for (int r = warp; r < K; r += kWarps)
      copyAsync16(src + r * P + 4 * lane, slice + int64_t(reflectNear(gy0 + r, ny)) * nx + gx);
  } else {
    // Columns reflected at the left or right edge (or a row that is not float4-aligned): a float
    // at a time, still asynchronously, so that the edge tiles do not wait for each row in turn.
    int xs[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) xs[e] = reflectNear(gx + e, nx);
    for (int r = warp; r < K; r += kWarps) {
      const float* row = slice + int64_t(reflectNear(gy0 + r, ny)) * nx;
#pragma unroll
      for (int e = 0; e < 4; ++e) copyAsync4(src + r * P + 4 * lane + e, row + xs[e]);
    }
  }
}

// The x pass of K staged rows into the x-pass rows at dst: four adjacent outputs per thread from
// the float4s around them, in the same four columns of every kXRowStep-th row; a quarter warp
// reads eight consecutive float4s of one row (no bank conflicts).
template <int R, int K>
__device__ __forceinline__ void fusedXPass(const float* src, float* dst, const FusedTaps<R>& taps) {
  using T = FusedTile<R>;
  constexpr int A = T::halo, P = T::pitch, kTaps = 2 * R + 1;
  constexpr int kWin = ((kFuseOutX - 1 + A + R) / 4 + 1) * 4;
  constexpr int kPerRow = kFuseW / 4, kSegs = K * kPerRow, kXRowStep = kFuseThreads / kPerRow;
  const int c = (threadIdx.x % kPerRow) * 4, r0 = threadIdx.x / kPerRow;
#pragma unroll
  for (int k = 0; k < (kSegs + kFuseThreads - 1) / kFuseThreads; ++k) {
    if (k >= kSegs / kFuseThreads && r0 + k * kXRowStep >= K) break;
    const float* p = src + (r0 + k * kXRowStep) * P + c;
    float win[kWin];
#pragma unroll
    for (int q = 0; q < kWin / 4; ++q) {
      const float4 v = *reinterpret_cast<const float4*>(p + 4 * q);
      win[4 * q] = v.x;
      win[4 * q + 1] = v.y;
      win[4 * q + 2] = v.z;
      win[4 * q + 3] = v.w;
    }
    float a[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int d = 0; d < kTaps; ++d) {
      const float w = taps.x[d];
#pragma unroll
      for (int e = 0; e < 4; ++e) a[e] += w * win[e + A - R + d];
    }
    *reinterpret_cast<float4*>(dst + (r0 + k * kXRowStep) * kFuseW + c) =
        make_float4(a[0], a[1], a[2], a[3]);
  }
}

// A column of kFuseW-wide output tiles (FusedTile<R>::height rows tall) per block, walked down
// walkRows rows (a multiple of the height), radius R on both axes. Each step stages the next tile's
// input rows (with their halo columns; reflected at the image edges) into shared memory while the
// y pass of the current tile runs, then filters them along x into the x-pass rows, whose last 2R
// rows the next tile reuses: along the walk every input row is filtered along x once, not once
// per tile it touches. Sums run in the same order as the separable passes (x then y, taps in order,
// each output's sum from 0), so both paths give the same values. Registers are budgeted for as many
// blocks per SM as run at once (FusedTile::perSm); the taps stay uniform-register operands of the
// multiply–adds. The kernel is bound by instruction issue, so each pass runs as straight-line code
// over a thread's fixed column, its rows at immediate offsets.
template <int R>
__global__ void __launch_bounds__(kFuseThreads, FusedTile<R>::perSm)
    blur2dFused(const float* __restrict__ in, float* __restrict__ out, int ny, int nx, int walkRows,
                FusedTaps<R> taps) {
  using T = FusedTile<R>;
  constexpr int A = T::halo, kInH = T::inH, kTaps = 2 * R + 1, H = T::height, kOutY = T::outY;
  __shared__ __align__(16) float src[kInH * T::pitch];
  __shared__ __align__(16) float rows[kInH * kFuseW];
  const int x0 = blockIdx.x * kFuseW, yFirst = blockIdx.y * walkRows;
  const int yEnd = min(ny, yFirst + walkRows);
  const int64_t sliceBase = int64_t(blockIdx.z) * ny * nx;
  const float* slice = in + sliceBase;
  const int gx = x0 - A + 4 * (threadIdx.x % 32);
  const bool direct =
      nx % 4 == 0 && (reinterpret_cast<uintptr_t>(in) & 15) == 0 && gx >= 0 && gx + 4 <= nx;
  // The first tile's rows in two groups: the first half is filtered along x while the second
  // half's copies are still in flight (every block starts loading at once).
  constexpr int kFirst = kInH / 2 / 16 * 16;
  stageFusedRows<R, kFirst>(src, slice, yFirst - R, ny, nx, gx, direct);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  stageFusedRows<R, kInH - kFirst>(src + kFirst * T::pitch, slice, yFirst - R + kFirst, ny, nx, gx,
                                   direct);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  __syncthreads();
  fusedXPass<R, kFirst>(src, rows, taps);
  waitForAsyncCopies();
  __syncthreads();
  fusedXPass<R, kInH - kFirst>(src + kFirst * T::pitch, rows + kFirst * kFuseW, taps);
  // y pass: kOutY outputs down a column per thread, each x-pass row read once.
  const int c = threadIdx.x % kFuseW, r0 = (threadIdx.x / kFuseW) * kOutY;
  const float* p = rows + r0 * kFuseW + c;
  const bool inX = x0 + c < nx;
  float* o = out + sliceBase + int64_t(yFirst + r0) * nx + x0 + c;
  for (int y0 = yFirst;; y0 += H) {
    __syncthreads();
    const bool more = y0 + H < yEnd;
    // The x-pass rows of this tile are complete and src is free: stage the next tile's new rows.
    if (more) stageFusedRows<R, H>(src, slice, y0 + H + R, ny, nx, gx, direct);
    float a[kOutY];
#pragma unroll
    for (int j = 0; j < kOutY; ++j) a[j] = 0.f;
#pragma unroll
    for (int i = 0; i < kOutY + 2 * R; ++i) {
      const float v = p[i * kFuseW];
#pragma unroll
      for (int j = 0; j < kOutY; ++j)
        if (i - j >= 0 && i - j < kTaps) a[j] += taps.y[i - j] * v;
    }
    const int rowsLeft = ny - (y0 + r0);
    if (inX && rowsLeft >= kOutY) {
#pragma unroll
      for (int j = 0; j < kOutY; ++j) o[int64_t(j) * nx] = a[j];
    } else if (inX) {
#pragma unroll
      for (int j = 0; j < kOutY; ++j)
        if (j < rowsLeft) o[int64_t(j) * nx] = a[j];
    }
    if (!more) break;
    o += int64_t(H) * nx;
    __syncthreads();
    // The next tile's first 2R x-pass rows are this tile's last 2R.
    for (int i = threadIdx.x; i < 2 * R * kFuseW / 4; i += kFuseThreads)
      reinterpret_cast<float4*>(rows)[i] = reinterpret_cast<const float4*>(rows + H * kFuseW)[i];
    waitForAsyncCopies();
    __syncthreads();
    fusedXPass<R, H>(src, rows + 2 * R * kFuseW, taps);
  }
}

}  // namespace
}  // namespace stacklens::compute::cuda
