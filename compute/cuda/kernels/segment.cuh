// The segmentation's kernels (compute/cuda/cuda_segment.cu): threshold and connected components
// by a block-based lock-free union–find (each tile labelled in shared memory, then the tiles
// joined across their borders with atomicMin, so a component's root is its smallest raster
// index), the kept components' flags, and the relabelling to SciPy's order fused with the
// per-source measurements (warp-aggregated atomics). Launch shapes: tuning/segment.cuh. (For
// compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/tuning/segment.cuh"

namespace stacklens::compute::cuda {
namespace {

// The local labelling tile: one thread per pixel.
constexpr int kTileW = tuning::SegmentPolicy::tileWidth, kTileH = tuning::SegmentPolicy::tileHeight;
constexpr int kPixelThreads = tuning::SegmentPolicy::pixelThreads;
static_assert(kPixelThreads % 32 == 0, "the per-pixel passes' warp votes use every lane");

__device__ inline int32_t findRoot(const int32_t* labels, int32_t i) {
  int32_t parent = labels[i];
  while (parent != i) {
    i = parent;
    parent = labels[i];
  }
  return i;
}

// Joins the trees of a and b, the larger root pointing to the smaller one (global or shared
// memory: atomicMin works on both).
__device__ inline void unite(int32_t* labels, int32_t a, int32_t b) {
  a = findRoot(labels, a);
  b = findRoot(labels, b);
  while (a != b) {
    if (a < b) {
      int32_t t = a;
      a = b;
      b = t;
    }
    int32_t old = atomicMin(&labels[a], b);
    if (old == a) break;  // a was a root and now hangs below b
    a = findRoot(labels, old);
    b = findRoot(labels, b);
  }
}

// Threshold and union–find inside one kW×kH tile in shared memory; every foreground pixel gets
// the global index of its tile-local root (the tile part's first pixel in raster order), the
// background −1. Also clears the size counters.
__global__ void __launch_bounds__(kTileW* kTileH)
    labelTiles(const float* __restrict__ in, int32_t* __restrict__ labels,
               int32_t* __restrict__ sizes, int ny, int nx, int z0, float threshold, bool eight) {
  __shared__ int32_t local[kTileH * kTileW];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * kTileW + tx, y = blockIdx.y * kTileH + ty;
  const int64_t sliceBase = (int64_t(z0) + blockIdx.z) * ny * nx;
  const bool inside = x < nx && y < ny;
  const int li = ty * kTileW + tx;
  const int64_t gi = sliceBase + int64_t(y) * nx + x;
  // Compared in float like the CPU (value > threshold, the threshold rounded to float once).
  const bool fg = inside && in[gi] > threshold;
  local[li] = fg ? li : -1;
  __syncthreads();
  if (fg) {
    if (tx > 0 && local[li - 1] >= 0) unite(local, li, li - 1);
    if (ty > 0) {
      if (local[li - kTileW] >= 0) unite(local, li, li - kTileW);
      if (eight) {
        if (tx > 0 && local[li - kTileW - 1] >= 0) unite(local, li, li - kTileW - 1);
        if (tx + 1 < kTileW && local[li - kTileW + 1] >= 0) unite(local, li, li - kTileW + 1);
      }
    }
  }
  __syncthreads();
  if (!inside) return;
  int32_t label = -1;
  if (fg) {
    const int root = findRoot(local, li);
    label = static_cast<int32_t>(sliceBase + int64_t(blockIdx.y * kTileH + root / kTileW) * nx +
                                 blockIdx.x * kTileW + root % kTileW);
  }
  labels[gi] = label;
  sizes[gi] = 0;
}

// Joins the tile-local components across tile borders: only pixels with a neighbour (left, up,
// and for 8-connectivity the two upper diagonals) in another tile do any work.
__global__ void __launch_bounds__(kTileW* kTileH)
    mergeTileBorders(int32_t* labels, int ny, int nx, int z0, bool eight) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * kTileW + tx, y = blockIdx.y * kTileH + ty;
  if (x >= nx || y >= ny) return;
  const bool left = tx == 0 && x > 0, top = ty == 0 && y > 0;
  const bool right = tx == kTileW - 1 && x + 1 < nx;
  if (!left && !top && !(eight && right && y > 0)) return;
  const int64_t i = (int64_t(z0) + blockIdx.z) * ny * nx + int64_t(y) * nx + x;
  if (labels[i] < 0) return;
  const int32_t me = static_cast<int32_t>(i);
  auto join = [&](int64_t j) {
    if (labels[j] >= 0) unite(labels, me, static_cast<int32_t>(j));
  };
  if (left) join(i - 1);
  if (y > 0) {
    if (top) join(i - nx);
    if (eight) {
      if (x > 0 && (left || top)) join(i - nx - 1);
      if (x + 1 < nx && (right || top)) join(i - nx + 1);
    }
  }
}

// Points every foreground pixel straight at its component's root and counts the pixels per root
// (lanes of a warp with the same root add together: one atomic per distinct root in the warp).
__global__ void flattenAndCount(int32_t* labels, int32_t* sizes, int64_t count) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int32_t root = -1;
  if (i < count && labels[i] >= 0) {
    root = findRoot(labels, static_cast<int32_t>(i));
  }
  const unsigned peers = __match_any_sync(0xffffffffu, root);
  if (i < count && root >= 0) {
    labels[i] = root;
    if (int(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&sizes[root], __popc(peers));
  }
}

// sizes[i] becomes 1 where pixel i is the root of a component that is kept, else 0.
__global__ void markKeptRoots(const int32_t* __restrict__ labels, int32_t* sizes, int64_t count,
                              int64_t minPixels) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  sizes[i] = (labels[i] == i && sizes[i] >= minPixels) ? 1 : 0;
}

// The number of kept components: the exclusive scan's last value plus the last flag.
__global__ void countKept(const int32_t* kept, const int32_t* rank, int64_t count, int32_t* n) {
  *n = rank[count - 1] + kept[count - 1];
}

struct SourceSums {
  unsigned long long npix;
  double flux, fluxX, fluxY, sumX, sumY;
  unsigned long long peak;  // ordered value key << 32 | (~raster index): max = brightest, first
  int32_t xMin, xMax, yMin, yMax;
};

__global__ void initSums(SourceSums* sums, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  SourceSums s{};
  s.xMin = s.yMin = INT32_MAX;
  s.xMax = s.yMax = -1;
  sums[i] = s;
}

__device__ inline double warpSum(double v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <class T, class Op>
__device__ inline T warpReduce(T v, Op op) {
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Relabels each pixel (root → rank in raster order + 1, or 0 when dropped) and adds it to its
// source's sums. A warp whose foreground lanes all belong to one source (the usual case: a row
// segment through a source) reduces in registers and makes one set of atomics.
__global__ void relabelAndMeasure(const float* __restrict__ in, int32_t* __restrict__ labels,
                                  const int32_t* __restrict__ kept,
                                  const int32_t* __restrict__ rank, SourceSums* sums, int64_t count,
                                  int64_t ny, int64_t nx, double background) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int32_t label = 0;
  if (i < count) {
    const int32_t root = labels[i];
    label = (root >= 0 && kept[root]) ? rank[root] + 1 : 0;
    labels[i] = label;
  }
  const unsigned active = __ballot_sync(0xffffffffu, label > 0);
  if (active == 0) return;
  const int leader = __ffs(active) - 1;
  const int32_t first = __shfl_sync(0xffffffffu, label, leader);
  const bool uniform = __all_sync(0xffffffffu, label <= 0 || label == first);
  const bool mine = label > 0;
  const int32_t x = mine ? static_cast<int32_t>(i % nx) : 0;
  const int32_t y = mine ? static_cast<int32_t>((i / nx) % ny) : 0;
  const float v = mine ? in[i] : 0.f;
  const double f = mine ? double(v) - background : 0.0;
  unsigned long long key = mine ? (static_cast<unsigned long long>(orderedKey(v)) << 32) |
                                      (0xffffffffull - static_cast<unsigned long long>(i))
                                : 0ull;
  double fx = f * x, fy = f * y, sx = x, sy = y;
  int32_t xMin = mine ? x : INT32_MAX, xMax = mine ? x : -1;
  int32_t yMin = mine ? y : INT32_MAX, yMax = mine ? y : -1;
  unsigned long long npix = mine ? 1ull : 0ull;
  double flux = f;
  if (uniform) {
    npix = __popc(active);
    flux = warpSum(flux);
    fx = warpSum(fx);
    fy = warpSum(fy);
    sx = warpSum(sx);
    sy = warpSum(sy);
    key = warpReduce(key, [](unsigned long long a, unsigned long long b) { return a > b ? a : b; });
    xMin = warpReduce(xMin, [](int32_t a, int32_t b) { return min(a, b); });
    xMax = warpReduce(xMax, [](int32_t a, int32_t b) { return max(a, b); });
    yMin = warpReduce(yMin, [](int32_t a, int32_t b) { return min(a, b); });
    yMax = warpReduce(yMax, [](int32_t a, int32_t b) { return max(a, b); });
    if (int(threadIdx.x & 31) != leader) return;
    label = first;
  } else if (!mine) {
    return;
  }
  SourceSums& s = sums[label - 1];
  atomicAdd(&s.npix, npix);
  atomicAdd(&s.flux, flux);
  atomicAdd(&s.fluxX, fx);
  atomicAdd(&s.fluxY, fy);
  atomicAdd(&s.sumX, sx);
  atomicAdd(&s.sumY, sy);
  atomicMax(&s.peak, key);
  atomicMin(&s.xMin, xMin);
  atomicMax(&s.xMax, xMax);
  atomicMin(&s.yMin, yMin);
  atomicMax(&s.yMax, yMax);
}

}  // namespace
}  // namespace stacklens::compute::cuda
