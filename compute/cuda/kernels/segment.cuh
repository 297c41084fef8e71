// The segmentation's kernels (compute/cuda/cuda_segment.cu): threshold and connected components
// by a block-based lock-free union–find (each tile labelled in shared memory on its rows' runs,
// then the tiles joined across their borders with atomicMin, so a component's root is its
// smallest raster index), the roots numbered in raster order from per-segment root counts, and
// the relabelling fused with the per-source measurements (warp-aggregated atomics). Launch
// shapes: tuning/segment.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/tuning/segment.cuh"

namespace stacklens::compute::cuda {
namespace {

// The local labelling tile; a tile row is one segment (the unit whose roots are counted).
constexpr int kTileW = tuning::SegmentPolicy::tileWidth, kTileH = tuning::SegmentPolicy::tileHeight;
constexpr int kTileThreadRows = tuning::SegmentPolicy::tileThreadRows;
constexpr int kRowsPerThread = kTileH / kTileThreadRows;
constexpr int kPixelThreads = tuning::SegmentPolicy::pixelThreads;
constexpr int64_t kMinSourceCapacity = tuning::SegmentPolicy::minSourceCapacity;
static_assert(kTileW == 32, "a warp takes a tile row: one lane per pixel, one ballot per row");
static_assert(kTileH % kTileThreadRows == 0, "every thread takes the same number of rows");
static_assert(kPixelThreads % 32 == 0, "the per-pixel passes' warp votes use every lane");

// Provisional labels (the scratch "parent" array): −1 background; a foreground pixel holds the
// index of a pixel of its component nearer the root (a root itself), until the roots are
// numbered: a root then holds −(label + 1), so that following parents ends at the label.
constexpr int32_t kBackground = -1;
__host__ __device__ inline int32_t encodeLabel(int32_t label) { return -label - 1; }
__host__ __device__ inline int32_t decodeLabel(int32_t code) { return -code - 1; }

__device__ inline int32_t findRoot(const int32_t* labels, int32_t i) {
  int32_t parent = labels[i];
  while (parent != i) {
    i = parent;
    parent = labels[i];
  }
  return i;
}

// Joins the trees of a and b, the larger root pointing to the smaller one (global or shared
// memory: atomicMin works on both). Returns the root that stopped being one, or −1 when a and b
// were already joined.
__device__ inline int32_t unite(int32_t* labels, int32_t a, int32_t b) {
  a = findRoot(labels, a);
  b = findRoot(labels, b);
  while (a != b) {
    if (a < b) {
      int32_t t = a;
      a = b;
      b = t;
    }
    int32_t old = atomicMin(&labels[a], b);
    if (old == a) return a;  // a was a root and now hangs below b
    a = findRoot(labels, old);
    b = findRoot(labels, b);
  }
  return -1;
}

// The first lane of the run of set bits of `mask` that holds `lane`.
__device__ inline int runStart(uint32_t mask, int lane) {
  const uint32_t gaps = ~mask & ((1u << lane) - 1u);
  return gaps ? 32 - __clz(gaps) : 0;
}
// The last lane of that run.
__device__ inline int runEnd(uint32_t mask, int lane) {
  const uint32_t gaps = ~mask & ~((2u << lane) - 1u);
  return gaps ? __ffs(gaps) - 2 : 31;
}
__device__ inline bool bitAt(uint32_t mask, int lane) { return (mask >> lane) & 1u; }

// Threshold and union–find inside one tile in shared memory: a pixel starts at its row run's
// first pixel, and each run joins once per run of the row above that it touches. Every pixel
// gets the global index of its tile-local root (the tile part's first pixel in raster order) or
// −1, and each tile row's segment its number of tile-local roots.
__global__ void __launch_bounds__(kTileW* kTileThreadRows)
    labelTiles(const float* __restrict__ in, int32_t* __restrict__ parent,
               int32_t* __restrict__ rootCounts, int ny, int nx, int z0, float threshold,
               bool eight) {
  __shared__ int32_t local[kTileH * kTileW];
  __shared__ uint32_t rowMask[kTileH];
  const int lane = threadIdx.x;
  const int x = blockIdx.x * kTileW + lane, y0 = blockIdx.y * kTileH;
  const int64_t slice = int64_t(z0) + blockIdx.z;
  const int64_t sliceBase = slice * ny * nx;
  float v[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = y0 + threadIdx.y + r * kTileThreadRows;
    v[r] = (x < nx && y < ny) ? in[sliceBase + int64_t(y) * nx + x] : 0.f;
  }
  uint32_t mine[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int row = threadIdx.y + r * kTileThreadRows, y = y0 + row;
    // Compared in float like the CPU (value > threshold, the threshold rounded to float once).
    const bool fg = x < nx && y < ny && v[r] > threshold;
    mine[r] = __ballot_sync(0xffffffffu, fg);
    if (lane == 0) rowMask[row] = mine[r];
    local[row * kTileW + lane] = fg ? row * kTileW + runStart(mine[r], lane) : kBackground;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int row = threadIdx.y + r * kTileThreadRows;
    if (row == 0 || !bitAt(mine[r], lane)) continue;
    const uint32_t above = rowMask[row - 1];
    const int li = row * kTileW + lane, start = runStart(mine[r], lane);
    // Each run above that overlaps this run is joined by the lane under its first overlapping
    // pixel; under 8-connectivity the runs touching the run's ends diagonally too.
    if (bitAt(above, lane) && (lane == start || !bitAt(above, lane - 1)))
      unite(local, li, li - kTileW);
    if (eight) {
      if (lane == start && lane > 0 && bitAt(above, lane - 1)) unite(local, li, li - kTileW - 1);
      if (lane < 31 && lane == runEnd(mine[r], lane) && bitAt(above, lane + 1) &&
          !bitAt(above, lane))
        unite(local, li, li - kTileW + 1);
    }
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int row = threadIdx.y + r * kTileThreadRows, y = y0 + row;
    if (y >= ny) continue;  // the same for the whole warp
    const int li = row * kTileW + lane;
    int32_t label = kBackground;
    bool root = false;
    if (bitAt(mine[r], lane)) {
      const int lr = findRoot(local, li);
      root = lr == li;
      label = static_cast<int32_t>(sliceBase + int64_t(y0 + lr / kTileW) * nx +
                                   blockIdx.x * kTileW + lr % kTileW);
    }
    const uint32_t roots = __ballot_sync(0xffffffffu, root);
    if (x < nx) parent[sliceBase + int64_t(y) * nx + x] = label;
    if (lane == 0)
      rootCounts[(slice * ny + y) * gridDim.x + blockIdx.x] = __popc(roots);
  }
}

// The segment (tile row) of pixel i, in raster order: segments of a row are consecutive.
__device__ inline int64_t segmentOf(int32_t i, int nx, int segmentsPerRow) {
  return int64_t(i / nx) * segmentsPerRow + (i % nx) / kTileW;
}

// Calls join(i, j) for the foreground pixel i of border thread t (a pixel on a tile's left column
// or top row; tiles of the first column or row have none) and each of its neighbours j in the
// other tile.
template <class Join>
__device__ inline void forBorderNeighbours(const int32_t* parent, int64_t t, int ny, int nx,
                                           int64_t sliceBase, bool eight, int64_t columnPixels,
                                           Join join) {
  int x, y;
  const bool column = t < columnPixels;
  if (column) {  // x = a tile column's first, ≥ 1
    y = static_cast<int>(t % ny);
    x = static_cast<int>((t / ny + 1) * kTileW);
  } else {  // y = a tile row's first, ≥ 1
    t -= columnPixels;
    x = static_cast<int>(t % nx);
    y = static_cast<int>((t / nx + 1) * kTileH);
  }
  const int64_t i = sliceBase + int64_t(y) * nx + x;
  if (parent[i] < 0) return;
  auto visit = [&](int64_t j) {
    if (parent[j] >= 0) join(static_cast<int32_t>(i), static_cast<int32_t>(j));
  };
  if (column) {
    visit(i - 1);
    if (eight) {
      if (y > 0) visit(i - nx - 1);
      if (y + 1 < ny) visit(i + nx - 1);
    }
  } else {
    visit(i - nx);
    if (eight) {
      if (x > 0) visit(i - nx - 1);
      if (x + 1 < nx) visit(i - nx + 1);
    }
  }
}

// Joins the tile-local components across tile borders, one thread per border pixel; every root
// that stops being one is taken off its segment's count.
__global__ void mergeTileBorders(int32_t* parent, int32_t* rootCounts, int ny, int nx, int z0,
                                 bool eight, int64_t columnPixels, int64_t borderPixels) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= borderPixels) return;
  const int segmentsPerRow = (nx + kTileW - 1) / kTileW;
  const int64_t sliceBase = (int64_t(z0) + blockIdx.y) * ny * nx;
  forBorderNeighbours(parent, t, ny, nx, sliceBase, eight, columnPixels,
                      [&](int32_t i, int32_t j) {
                        const int32_t gone = unite(parent, i, j);
                        if (gone >= 0)
                          atomicSub(&rootCounts[segmentOf(gone, nx, segmentsPerRow)], 1);
                      });
}

// Points every node on the path from i to its root at the root.
__device__ inline void compressPath(int32_t* parent, int32_t i) {
  const int32_t root = findRoot(parent, i);
  while (i != root) {
    const int32_t next = parent[i];
    parent[i] = root;
    i = next;
  }
}

// After the merge, points the paths from every joined border pair straight at their component's
// root. A tile root is attached while it is the root of one side of such a pair, so nearly all of
// them end one step from the root and the relabelling follows few parents (more only where a
// concurrent join re-pointed a node; the labels never depend on it).
__global__ void flattenBorderPaths(int32_t* parent, int ny, int nx, int z0, bool eight,
                                   int64_t columnPixels, int64_t borderPixels) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= borderPixels) return;
  const int64_t sliceBase = (int64_t(z0) + blockIdx.y) * ny * nx;
  forBorderNeighbours(parent, t, ny, nx, sliceBase, eight, columnPixels,
                      [&](int32_t i, int32_t j) {
                        compressPath(parent, i);
                        compressPath(parent, j);
                      });
}

struct SourceSums {
  unsigned long long npix;
  double flux, fluxX, fluxY, sumX, sumY;
  unsigned long long peak;  // ordered value key << 32 | (~raster index): max = brightest, first
  int32_t xMin, xMax, yMin, yMax;
};

__device__ inline void clearSums(SourceSums& sums) {
  SourceSums s{};
  s.xMin = s.yMin = INT32_MAX;
  s.xMax = s.yMax = -1;
  sums = s;
}

__global__ void initSums(SourceSums* sums, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) clearSums(sums[i]);
}

// Numbers the roots in raster order, one thread per segment: the segment's first label follows
// the inclusive scan of the root counts; each root's parent becomes its encoded label, and the
// first `capacity` sources' sums are cleared.
__global__ void numberRoots(int32_t* parent, const int32_t* __restrict__ rootCounts,
                            const int32_t* __restrict__ rootEnds, int64_t segments, int nx,
                            SourceSums* sums, int64_t capacity) {
  const int64_t s = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (s >= segments) return;
  const int32_t n = rootCounts[s];
  if (n == 0) return;
  int32_t label = rootEnds[s] - n;
  const int segmentsPerRow = (nx + kTileW - 1) / kTileW;
  const int x0 = static_cast<int>(s % segmentsPerRow) * kTileW;
  const int64_t first = (s / segmentsPerRow) * nx + x0;
  const int width = min(kTileW, nx - x0);
  for (int k = 0; k < width; ++k) {
    const int64_t i = first + k;
    if (parent[i] != i) continue;
    parent[i] = encodeLabel(++label);
    if (label <= capacity) clearSums(sums[label - 1]);
  }
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

// Adds each pixel of a source numbered at most `capacity` to its sums. A warp whose foreground
// lanes all belong to one source (the usual case: a row segment through a source) reduces in
// registers and makes one set of atomics.
__device__ inline void measure(const float* __restrict__ in, int64_t i, int32_t label,
                               SourceSums* sums, int64_t capacity, int64_t ny, int64_t nx,
                               double background) {
  if (label > capacity) label = 0;
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

// Writes each pixel's label (its root's number, found by following parents) and measures it.
__global__ void relabelAndMeasure(const float* __restrict__ in, const int32_t* __restrict__ parent,
                                  int32_t* __restrict__ labels, SourceSums* sums, int64_t capacity,
                                  int64_t count, int64_t ny, int64_t nx, double background) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int32_t label = 0;
  if (i < count) {
    int32_t p = parent[i];
    if (p != kBackground) {
      while (p >= 0) p = parent[p];
      label = decodeLabel(p);
    }
    labels[i] = label;
  }
  measure(in, i, label, sums, capacity, ny, nx, background);
}

// Dropping the sources below the minimum size: kept[k] = 1 for a kept source, else 0.
__global__ void markKeptSources(const SourceSums* __restrict__ sums, int32_t* kept, int64_t n,
                                int64_t minPixels) {
  const int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (k < n) kept[k] = sums[k].npix >= static_cast<unsigned long long>(minPixels) ? 1 : 0;
}

// Renumbers the kept sources' pixels consecutively (keptEnds: the inclusive scan of kept) and
// clears the dropped ones'.
__global__ void renumberKept(int32_t* labels, const int32_t* __restrict__ kept,
                             const int32_t* __restrict__ keptEnds, int64_t count) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const int32_t label = labels[i];
  if (label > 0) labels[i] = kept[label - 1] ? keptEnds[label - 1] : 0;
}

__global__ void compactKept(const SourceSums* __restrict__ sums, SourceSums* __restrict__ out,
                            const int32_t* __restrict__ kept,
                            const int32_t* __restrict__ keptEnds, int64_t n) {
  const int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (k < n && kept[k]) out[keptEnds[k] - 1] = sums[k];
}

}  // namespace
}  // namespace stacklens::compute::cuda
