// The segmentation's kernels (compute/cuda/cuda_segment.cu): threshold and connected components
// by a block-based lock-free union–find (each tile labelled in shared memory on its rows' runs,
// then the tiles joined across their borders with atomicMin, so a component's root is its
// smallest raster index), and the relabelling, which numbers each root in raster order from the
// roots left in each 32-pixel segment, fused with the per-source measurements (a warp adds up
// its rows of one source before its atomics). Launch shapes: tuning/segment.cuh. (For
// compute/cuda/*.cu only.)
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
constexpr int kRelabelBlocksPerSm = tuning::SegmentPolicy::relabelBlocksPerSm;
static_assert(kTileW == 32, "a warp takes a tile row: one lane per pixel, one ballot per row");
static_assert(kTileH % kTileThreadRows == 0, "every thread takes the same number of rows");
static_assert(kPixelThreads % 32 == 0, "the per-pixel passes' warp votes use every lane");

// Provisional labels (the scratch "parent" array): −1 background; a foreground pixel holds the
// index of a pixel of its component nearer the root, a root its own index.
constexpr int32_t kBackground = -1;

__device__ inline int32_t findRoot(const int32_t* labels, int32_t i) {
  int32_t parent = labels[i];
  while (parent != i) {
    i = parent;
    parent = labels[i];
  }
  return i;
}

// findRoot that points each node it passes at its grandparent (path halving), so that later
// walks are short. Safe beside concurrent joins: a parent is always a smaller index and an
// ancestor, and a join that loses its link to such a store joins the old parent's root again.
__device__ inline int32_t findRootHalving(int32_t* labels, int32_t i) {
  int32_t up = labels[i];
  if (up == i) return i;
  int32_t next;
  while (up != (next = labels[up])) {
    labels[i] = next;
    i = up;
    up = next;
  }
  return up;
}

// Joins the trees of a and b, the larger root pointing to the smaller one (global or shared
// memory: atomicMin works on both). Returns the root that stopped being one, or −1 when a and b
// were already joined.
__device__ inline int32_t unite(int32_t* labels, int32_t a, int32_t b) {
  a = findRootHalving(labels, a);
  b = findRootHalving(labels, b);
  while (a != b) {
    if (a < b) {
      int32_t t = a;
      a = b;
      b = t;
    }
    int32_t old = atomicMin(&labels[a], b);
    if (old == a) return a;  // a was a root and now hangs below b
    a = findRootHalving(labels, old);
    b = findRootHalving(labels, b);
  }
  return -1;
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
// −1, and each tile row's segment the bits and the number of its tile-local roots. The blocks
// also clear the first `sumsToClear` sources' sums.
__global__ void __launch_bounds__(kTileW* kTileThreadRows)
    labelTiles(const float* __restrict__ in, int32_t* __restrict__ parent,
               uint32_t* __restrict__ rootMasks, int32_t* __restrict__ rootCounts, int ny, int nx,
               int z0, float threshold, bool eight, SourceSums* __restrict__ sums,
               int64_t sumsToClear) {
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
      const int lr = findRootHalving(local, li);
      root = lr == li;
      label = static_cast<int32_t>(sliceBase + int64_t(y0 + lr / kTileW) * nx +
                                   blockIdx.x * kTileW + lr % kTileW);
    }
    const uint32_t roots = __ballot_sync(0xffffffffu, root);
    if (x < nx) parent[sliceBase + int64_t(y) * nx + x] = label;
    if (lane == 0) {
      const int64_t segment = (slice * ny + y) * gridDim.x + blockIdx.x;
      rootMasks[segment] = roots;
      rootCounts[segment] = __popc(roots);
    }
  }
  const int64_t threads = int64_t(gridDim.x) * gridDim.y * gridDim.z * blockDim.x * blockDim.y;
  const int64_t block = (int64_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  for (int64_t k = block * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
       k < sumsToClear; k += threads)
    clearSums(sums[k]);
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
// that stops being one is taken off its segment's bits and count.
__global__ void mergeTileBorders(int32_t* parent, uint32_t* rootMasks, int32_t* rootCounts, int ny,
                                 int nx, int z0, bool eight, int64_t columnPixels,
                                 int64_t borderPixels) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= borderPixels) return;
  const int segmentsPerRow = (nx + kTileW - 1) / kTileW;
  const int64_t sliceBase = (int64_t(z0) + blockIdx.y) * ny * nx;
  forBorderNeighbours(parent, t, ny, nx, sliceBase, eight, columnPixels, [&](int32_t i, int32_t j) {
    const int32_t gone = unite(parent, i, j);
    if (gone < 0) return;
    const int64_t segment = segmentOf(gone, nx, segmentsPerRow);
    atomicAnd(&rootMasks[segment], ~(1u << (gone % nx % kTileW)));
    atomicSub(&rootCounts[segment], 1);
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
  forBorderNeighbours(parent, t, ny, nx, sliceBase, eight, columnPixels, [&](int32_t i, int32_t j) {
    compressPath(parent, i);
    compressPath(parent, j);
  });
}

// A warp's running sums of one source over the rows it has measured (every lane holds them).
struct RowSums {
  int32_t label = 0;  // 0: none
  unsigned long long npix = 0, peak = 0;
  double flux = 0, fluxX = 0, fluxY = 0, sumX = 0, sumY = 0;
  int32_t xMin = INT32_MAX, xMax = -1, yMin = INT32_MAX, yMax = -1;
};

__device__ inline void addAtomically(SourceSums& s, const RowSums& r) {
  atomicAdd(&s.npix, r.npix);
  atomicAdd(&s.flux, r.flux);
  atomicAdd(&s.fluxX, r.fluxX);
  atomicAdd(&s.fluxY, r.fluxY);
  atomicAdd(&s.sumX, r.sumX);
  atomicAdd(&s.sumY, r.sumY);
  atomicMax(&s.peak, r.peak);
  atomicMin(&s.xMin, r.xMin);
  atomicMax(&s.xMax, r.xMax);
  atomicMin(&s.yMin, r.yMin);
  atomicMax(&s.yMax, r.yMax);
}

// One pixel's share of its source's sums (nothing for label 0).
__device__ inline RowSums pixelSums(float v, int64_t i, int32_t label, int x, int y,
                                    double background) {
  RowSums r;
  if (label <= 0) return r;
  const double f = double(v) - background;
  r.label = label;
  r.npix = 1;
  r.peak = (static_cast<unsigned long long>(orderedKey(v)) << 32) |
           (0xffffffffull - static_cast<unsigned long long>(i));
  r.flux = f;
  r.fluxX = f * x;
  r.fluxY = f * y;
  r.sumX = x;
  r.sumY = y;
  r.xMin = r.xMax = x;
  r.yMin = r.yMax = y;
  return r;
}

// The sums of the whole warp's lanes, in every lane.
__device__ inline RowSums warpSums(RowSums r) {
  for (int o = 16; o > 0; o /= 2) {
    r.npix += __shfl_xor_sync(0xffffffffu, r.npix, o);
    r.flux += __shfl_xor_sync(0xffffffffu, r.flux, o);
    r.fluxX += __shfl_xor_sync(0xffffffffu, r.fluxX, o);
    r.fluxY += __shfl_xor_sync(0xffffffffu, r.fluxY, o);
    r.sumX += __shfl_xor_sync(0xffffffffu, r.sumX, o);
    r.sumY += __shfl_xor_sync(0xffffffffu, r.sumY, o);
    const unsigned long long peak = __shfl_xor_sync(0xffffffffu, r.peak, o);
    r.peak = peak > r.peak ? peak : r.peak;
    r.xMin = min(r.xMin, __shfl_xor_sync(0xffffffffu, r.xMin, o));
    r.xMax = max(r.xMax, __shfl_xor_sync(0xffffffffu, r.xMax, o));
    r.yMin = min(r.yMin, __shfl_xor_sync(0xffffffffu, r.yMin, o));
    r.yMax = max(r.yMax, __shfl_xor_sync(0xffffffffu, r.yMax, o));
  }
  return r;
}

// a += b, both of the same source.
__device__ inline void accumulate(RowSums& a, const RowSums& b) {
  a.npix += b.npix;
  a.flux += b.flux;
  a.fluxX += b.fluxX;
  a.fluxY += b.fluxY;
  a.sumX += b.sumX;
  a.sumY += b.sumY;
  a.peak = b.peak > a.peak ? b.peak : a.peak;
  a.xMin = min(a.xMin, b.xMin);
  a.xMax = max(a.xMax, b.xMax);
  a.yMin = min(a.yMin, b.yMin);
  a.yMax = max(a.yMax, b.yMax);
}

// Writes each pixel's label and measures it, on the labelling's tiles: a warp takes 8 consecutive
// rows of a 32-pixel strip. A row whose foreground lanes all belong to one source (the usual
// case) is reduced in registers and added to the warp's running sums of that source, which go
// out in one set of atomics when the source changes; other rows add lane by lane. Sources
// numbered above `capacity` are not measured.
__global__ void __launch_bounds__(kTileW* kTileThreadRows, kRelabelBlocksPerSm)
    relabelAndMeasure(const float* __restrict__ in, const int32_t* __restrict__ parent,
                      const uint32_t* __restrict__ rootMasks, const int32_t* __restrict__ rootEnds,
                      int32_t* __restrict__ labels, SourceSums* sums, int64_t capacity, int ny,
                      int nx, int z0, double background) {
  const int lane = threadIdx.x;
  const int x = blockIdx.x * kTileW + lane;
  const int y0 = blockIdx.y * kTileH + threadIdx.y * kRowsPerThread;
  const int64_t sliceBase = (int64_t(z0) + blockIdx.z) * ny * nx;
  const int segmentsPerRow = gridDim.x;
  // node[r]: row r's parent, then its root, then its label (0: background). Each step of every
  // row's walk, then the roots' numbers and the values, are loads that do not wait on one
  // another (the rows' walks one after another were the pass's critical path).
  int32_t node[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = y0 + r;
    node[r] = (x < nx && y < ny) ? parent[sliceBase + int64_t(y) * nx + x] : kBackground;
  }
  bool walking = true;
  while (__any_sync(0xffffffffu, walking)) {
    walking = false;
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      if (node[r] == kBackground) continue;
      const int32_t next = parent[node[r]];
      walking |= next != node[r];
      node[r] = next;
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    if (node[r] == kBackground) {
      node[r] = 0;
      continue;
    }
    const int64_t segment = segmentOf(node[r], nx, segmentsPerRow);
    node[r] = rootEnds[segment] - __popc(rootMasks[segment] >> (node[r] % nx % kTileW)) + 1;
  }
  float value[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
    value[r] = node[r] > 0 ? in[sliceBase + int64_t(y0 + r) * nx + x] : 0.f;
  RowSums running;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = y0 + r;
    if (y >= ny) break;  // the same for the whole warp
    const int64_t i = sliceBase + int64_t(y) * nx + x;
    int32_t label = node[r];
    if (x < nx) labels[i] = label;
    if (label > capacity) label = 0;
    const unsigned active = __ballot_sync(0xffffffffu, label > 0);
    if (active == 0) continue;
    const int32_t first = __shfl_sync(0xffffffffu, label, __ffs(active) - 1);
    const RowSums mine = pixelSums(value[r], i, label, x, y, background);
    if (__all_sync(0xffffffffu, label <= 0 || label == first)) {
      RowSums row = warpSums(mine);
      if (running.label == first) {
        accumulate(running, row);
        continue;
      }
      if (running.label > 0 && lane == 0) addAtomically(sums[running.label - 1], running);
      running = row;
      running.label = first;
    } else if (label > 0) {
      addAtomically(sums[label - 1], mine);
    }
  }
  if (running.label > 0 && lane == 0) addAtomically(sums[running.label - 1], running);
}

// Copies the sources' number and the first `limit` sources' sums into host memory mapped for
// the device, so that one synchronisation brings the table back. Consecutive threads write
// consecutive 8-byte words (a source's sums at once would scatter each store across the bus).
static_assert(sizeof(SourceSums) % sizeof(unsigned long long) == 0, "sums copy as whole words");
constexpr int kSumsWords = sizeof(SourceSums) / sizeof(unsigned long long);
__global__ void publishSources(const SourceSums* __restrict__ sums,
                               const int32_t* __restrict__ found, int64_t limit,
                               long long* hostCount, SourceSums* hostSums) {
  const int64_t w = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int32_t n = *found;
  if (w == 0) *hostCount = n;
  if (w < min(int64_t(n), limit) * kSumsWords)
    reinterpret_cast<unsigned long long*>(hostSums)[w] =
        reinterpret_cast<const unsigned long long*>(sums)[w];
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
                            const int32_t* __restrict__ kept, const int32_t* __restrict__ keptEnds,
                            int64_t n) {
  const int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (k < n && kept[k]) out[keptEnds[k] - 1] = sums[k];
}

}  // namespace
}  // namespace stacklens::compute::cuda
