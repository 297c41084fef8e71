// The segmentation's relabelling (compute/cuda/cuda_segment.cu): each root numbered in raster
// order from the roots left in each 32-pixel segment of the labelling (kernels/segment.cuh),
// fused with the per-source measurements (a warp adds up its rows of one source before its
// atomics). Launch shapes: tuning/segment.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/kernels/segment.cuh"
#include "compute/cuda/kernels/segment_sources.cuh"
#include "compute/cuda/tuning/segment.cuh"

namespace stacklens::compute::cuda {
namespace {

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

// The sums of the whole warp's lanes, in every lane: the doubles by a butterfly of shuffles, the
// integer fields by one warp reduction each (a lane's count is at most its strip's rows).
__device__ inline RowSums warpSums(RowSums r) {
  constexpr uint32_t kAll = 0xffffffffu;
  for (int o = 16; o > 0; o /= 2) {
    r.flux += __shfl_xor_sync(kAll, r.flux, o);
    r.fluxX += __shfl_xor_sync(kAll, r.fluxX, o);
    r.fluxY += __shfl_xor_sync(kAll, r.fluxY, o);
    r.sumX += __shfl_xor_sync(kAll, r.sumX, o);
    r.sumY += __shfl_xor_sync(kAll, r.sumY, o);
  }
  r.npix = __reduce_add_sync(kAll, static_cast<uint32_t>(r.npix));
  // The largest key, then the largest of the low words that come with it.
  const uint32_t key = __reduce_max_sync(kAll, static_cast<uint32_t>(r.peak >> 32));
  const uint32_t low =
      __reduce_max_sync(kAll, static_cast<uint32_t>(r.peak >> 32) == key ? uint32_t(r.peak) : 0u);
  r.peak = static_cast<unsigned long long>(key) << 32 | low;
  r.xMin = __reduce_min_sync(kAll, r.xMin);
  r.xMax = __reduce_max_sync(kAll, r.xMax);
  r.yMin = __reduce_min_sync(kAll, r.yMin);
  r.yMax = __reduce_max_sync(kAll, r.yMax);
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

// The first row of strip warpRow (of kTileThreadRows) of tile row tileY.
__device__ inline int stripRow(int tileY, int warpRow) {
  return tileY * kTileH + warpRow * kRowsPerThread;
}

// The foreground bits of the rows of the strip at rows y0 … y0 + 7 of tile column tileX (0 below
// the slice), in rowFg; whether any is set.
__device__ inline bool stripMasks(const uint32_t* fgMasks, int ny, int segmentsPerRow,
                                  int64_t slice, int y0, int tileX,
                                  uint32_t (&rowFg)[kRowsPerThread]) {
  uint32_t any = 0;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = y0 + r;
    rowFg[r] = y < ny ? fgMasks[(slice * ny + y) * segmentsPerRow + tileX] : 0u;
    any |= rowFg[r];
  }
  return any != 0;
}

// Adds a warp's sums of source `label` (each lane's part) to its record in one set of atomics.
__device__ __noinline__ void sendWarpSums(RowSums part, SourceSums* sums, int32_t label) {
  const RowSums total = warpSums(part);
  if (threadIdx.x % 32 == 0) addAtomically(sums[label - 1], total);
}

// Adds a row whose lanes belong to several sources (`label`: the lane's, ≤ 0 none; `mine`: its
// pixel's sums) to their records: the warp adds up each run of lanes of one source in one
// segmented scan and the run's last lane sends it, in one set of atomics a run instead of one a
// pixel, whose atomics on one record queue up behind one another (a warp reduction per source, one
// after another, cost this scan's time for each source). A run's count, box and coordinate sums
// follow from its ends; its flux sums and peak are scanned.
__device__ __noinline__ void sendRowBySource(RowSums mine, int32_t label, SourceSums* sums) {
  constexpr uint32_t kAll = 0xffffffffu;
  const int lane = threadIdx.x % 32;
  const int32_t left = __shfl_up_sync(kAll, label, 1);
  const uint32_t heads = __ballot_sync(kAll, lane == 0 || left != label);
  const int start = 31 - __clz(heads & (0xffffffffu >> (31 - lane)));  // the lane's run's first
  double flux = mine.flux, fluxX = mine.fluxX, fluxY = mine.fluxY;
  unsigned long long peak = mine.peak;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const double f = __shfl_up_sync(kAll, flux, d), fx = __shfl_up_sync(kAll, fluxX, d),
                 fy = __shfl_up_sync(kAll, fluxY, d);
    const unsigned long long p = __shfl_up_sync(kAll, peak, d);
    if (lane - d >= start) {
      flux += f;
      fluxX += fx;
      fluxY += fy;
      peak = p > peak ? p : peak;
    }
  }
  if (label <= 0 || (lane < 31 && ((heads >> (lane + 1)) & 1u) == 0)) return;  // not a run's last
  const int n = lane - start + 1;
  RowSums run;
  run.npix = static_cast<unsigned long long>(n);
  run.flux = flux;
  run.fluxX = fluxX;
  run.fluxY = fluxY;
  run.peak = peak;
  run.xMax = mine.xMax;
  run.xMin = mine.xMax - (n - 1);
  run.yMin = run.yMax = mine.yMin;
  run.sumX = double((int64_t(run.xMin) + run.xMax) * n / 2);
  run.sumY = double(int64_t(mine.yMin) * n);
  addAtomically(sums[label - 1], run);
}

// Writes the labels of the strip at rows y0 … y0 + 7 of tile column tileX (a warp's; rowFg: its
// rows' foreground bits, some set) and measures its pixels. A row whose foreground lanes all
// belong to one source (the usual case) is added to each lane's running sums of that source,
// which the warp adds up and sends out in one set of atomics when the source changes; other rows
// are added up by source (sendRowBySource). The strip's last such source's sums are not sent but
// left in `last` (label 0: none), in every lane, for the block to add up with its other warps'.
// Sources numbered above `capacity` are not measured; rows without foreground are left alone
// (labelTiles wrote their labels). rootEnds[s]: the number of roots in segments 0 … s.
__device__ inline void relabelStrip(
    const float* __restrict__ in, const int32_t* __restrict__ parent,
    const uint32_t (&rowFg)[kRowsPerThread], const uint32_t* __restrict__ rootMasks,
    const int32_t* __restrict__ rootEnds, int32_t* __restrict__ labels, SourceSums* sums,
    int64_t capacity, int ny, int nx, int segmentsPerRow, int64_t slice, int y0, int tileX,
    double background, RowSums& last) {
  const int lane = threadIdx.x % 32;
  const int x = tileX * kTileW + lane;
  const int64_t sliceBase = slice * ny * nx;
  // node[r]: row r's parent, then its root, then its label (0: background). The values, each step
  // of every row's walk, then the roots' numbers are loads that do not wait on one another (the
  // rows' walks one after another were the pass's critical path).
  int32_t node[kRowsPerThread];
  float value[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const bool fg = bitAt(rowFg[r], lane);
    const int64_t i = sliceBase + int64_t(y0 + r) * nx + x;
    node[r] = fg ? parent[i] : kBackground;
    value[r] = fg ? in[i] : 0.f;
  }
  walkToRoots(node, [&](int32_t i) { return parent[i]; });
  // Only the roots' numbers come from the numbering (endRootSegments, the kernel before): the
  // rest was written by the labelling, complete before the numbering let this kernel start.
  waitForPrevious();
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    if (node[r] == kBackground) {
      node[r] = 0;
      continue;
    }
    const int64_t segment = segmentOf(node[r], nx, segmentsPerRow);
    node[r] = rootEnds[segment] - __popc(rootMasks[segment] >> (node[r] % nx % kTileW)) + 1;
  }
  // Each lane's own sums of the rows of the warp's current source (runLabel), added up over the
  // warp once the source changes: one warp reduction per source and strip, not one per row.
  RowSums part;
  int32_t runLabel = 0;
  // Unrolled, so that each row's values stay in their registers; the warp reduction and its
  // atomics are one function called from every row (eight inlined copies overflowed the
  // instruction cache).
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int y = y0 + r;
    if (y >= ny) break;           // the same for the whole warp
    if (rowFg[r] == 0) continue;  // labelled by labelTiles
    const int64_t i = sliceBase + int64_t(y) * nx + x;
    int32_t label = node[r];
    if (x < nx) labels[i] = label;
    if (label > capacity) label = 0;
    const unsigned active = __ballot_sync(0xffffffffu, label > 0);
    if (active == 0) continue;
    const int32_t first = __shfl_sync(0xffffffffu, label, __ffs(active) - 1);
    const RowSums mine = pixelSums(value[r], i, label, x, y, background);
    if (__all_sync(0xffffffffu, label <= 0 || label == first)) {
      if (runLabel != first) {
        if (runLabel != 0) sendWarpSums(part, sums, runLabel);
        part = RowSums();
        runLabel = first;
      }
      accumulate(part, mine);
    } else {
      sendRowBySource(mine, label, sums);
    }
  }
  if (runLabel == 0) return;
  last = warpSums(part);
  last.label = runLabel;
}

// Where strip `strip` (tile index · kTileThreadRows + strip of the tile, as labelTile lists them)
// lies: its slice, first row and tile column.
struct StripPlace {
  int64_t slice;
  int y0, tileX;
};
__device__ inline StripPlace placeOf(int64_t strip, int ny, int segmentsPerRow) {
  const int tilesY = (ny + kTileH - 1) / kTileH;
  // 32-bit, as fgStrips holds the strips.
  const int tile = static_cast<int>(strip) / kTileThreadRows,
            tilesPerSlice = tilesY * segmentsPerRow;
  const int rest = tile % tilesPerSlice;
  return {tile / tilesPerSlice, stripRow(int(rest / segmentsPerRow), int(strip % kTileThreadRows)),
          int(rest % segmentsPerRow)};
}

// Adds up the block's warps' last sums (lastSums[w], every warp's, label 0: none) by source and
// sends each source's total in one set of atomics, by the first lane of the first warp with that
// source: the strips a block takes are neighbours, mostly of the same source, whose atomics on one
// record each warp's own would queue up.
__device__ inline void addBlockSums(const RowSums* lastSums, SourceSums* sums) {
  const int w = threadIdx.y;
  const int32_t label = lastSums[w].label;
  if (threadIdx.x != 0 || label == 0) return;
  for (int v = 0; v < w; ++v)
    if (lastSums[v].label == label) return;
  RowSums total = lastSums[w];
  for (int v = w + 1; v < kTileThreadRows; ++v)
    if (lastSums[v].label == label) accumulate(total, lastSums[v]);
  addAtomically(sums[label - 1], total);
}

// The numbering's ends: rootEnds[s] = the roots in segments 0 … s (raster order), a warp
// kNumberingRows consecutive rows of the stack, each by its start and a scan of its segments'
// root bits. A row's start is rowStarts[row] where given (CUB's scan of rowRoots, for many rows),
// else the block adds up the rows' counts before its own, which a device-wide scan's two launches
// cost more than for an image's rows. A row of at most 64 segments is one scan, a lane two
// segments, and the warp's rows are scanned side by side: the scans are chains of shuffles, which
// a warp a row, a scan each 32 segments, left waiting one after another. Several rows a warp make
// few blocks, so that the relabelling's blocks, which start while these run, find room beside
// them on most SMs.
__global__ void __launch_bounds__(kPixelThreads)
    endRootSegments(const uint32_t* __restrict__ rootMasks, const int32_t* __restrict__ rowRoots,
                    const int32_t* __restrict__ rowStarts, int rows, int segmentsPerRow,
                    int32_t* __restrict__ rootEnds) {
  waitForPrevious();
  letNextStart();  // after the wait: the relabelling reads the labelling's outputs before its own
  constexpr uint32_t kAll = 0xffffffffu;
  constexpr int kWarps = kPixelThreads / 32, kBlockRows = kWarps * kNumberingRows;
  __shared__ int32_t warpParts[kWarps], blockRows[kBlockRows];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // The block's first row, the warp's.
  const int first = blockIdx.x * kBlockRows, warpFirst = first + warp * kNumberingRows;
  // Lane l's two segments: 2l and 2l + 1 where a row has at most 64, else l and l + 32 (and the
  // rest loaded as they are scanned). Their bits go out with the counts' loads.
  const bool paired = segmentsPerRow <= 64;
  const int s0 = paired ? 2 * lane : lane, s1 = paired ? 2 * lane + 1 : lane + 32;
  uint32_t bits0[kNumberingRows], bits1[kNumberingRows];
#pragma unroll
  for (int r = 0; r < kNumberingRows; ++r) {
    const int row = warpFirst + r;
    const int64_t rowSegment = int64_t(row) * segmentsPerRow;
    const bool inside = row < rows;
    bits0[r] = inside && s0 < segmentsPerRow ? rootMasks[rowSegment + s0] : 0u;
    bits1[r] = inside && s1 < segmentsPerRow ? rootMasks[rowSegment + s1] : 0u;
  }
  if (!rowStarts) {
    int32_t part = 0;
#pragma unroll 4
    for (int k = threadIdx.x; k < first; k += kPixelThreads) part += rowRoots[k];
    part = __reduce_add_sync(kAll, part);
    if (lane == 0) warpParts[warp] = part;
  }
  if (threadIdx.x < kBlockRows)
    blockRows[threadIdx.x] = first + int(threadIdx.x) < rows ? rowRoots[first + threadIdx.x] : 0;
  __syncthreads();
  if (warpFirst >= rows) return;  // the same for the whole warp
  // Each row's start.
  int32_t before[kNumberingRows];
  int32_t start = 0;
  if (!rowStarts) {
    for (int w = 0; w < kWarps; ++w) start += warpParts[w];
    for (int k = 0; k < warp * kNumberingRows; ++k) start += blockRows[k];
  }
#pragma unroll
  for (int r = 0; r < kNumberingRows; ++r) {
    const int row = warpFirst + r;
    before[r] = rowStarts ? (row < rows ? rowStarts[row] : 0) : start;
    start += blockRows[warp * kNumberingRows + r];
  }
  if (paired) {
    int32_t upTo[kNumberingRows];  // the roots in the row's segments 0 … 2·lane + 1
#pragma unroll
    for (int r = 0; r < kNumberingRows; ++r) upTo[r] = __popc(bits0[r]) + __popc(bits1[r]);
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
#pragma unroll
      for (int r = 0; r < kNumberingRows; ++r) {
        const int32_t v = __shfl_up_sync(kAll, upTo[r], d);
        if (lane >= d) upTo[r] += v;
      }
    }
#pragma unroll
    for (int r = 0; r < kNumberingRows; ++r) {
      const int row = warpFirst + r;
      if (row >= rows) return;  // the same for the whole warp
      const int64_t rowSegment = int64_t(row) * segmentsPerRow;
      if (s0 < segmentsPerRow) rootEnds[rowSegment + s0] = before[r] + upTo[r] - __popc(bits1[r]);
      if (s1 < segmentsPerRow) rootEnds[rowSegment + s1] = before[r] + upTo[r];
    }
    return;
  }
  for (int r = 0; r < kNumberingRows; ++r) {
    const int row = warpFirst + r;
    if (row >= rows) return;  // the same for the whole warp
    const int64_t rowSegment = int64_t(row) * segmentsPerRow;
    int32_t upToBefore = before[r];
    for (int base = 0; base < segmentsPerRow; base += 32) {
      const int s = base + lane;
      const uint32_t mask = base == 0            ? bits0[r]
                            : base == 32         ? bits1[r]
                            : s < segmentsPerRow ? rootMasks[rowSegment + s]
                                                 : 0u;
      int32_t upTo = __popc(mask);
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int32_t v = __shfl_up_sync(kAll, upTo, d);
        if (lane >= d) upTo += v;
      }
      if (s < segmentsPerRow) rootEnds[rowSegment + s] = upToBefore + upTo;
      upToBefore += __shfl_sync(kAll, upTo, 31);
    }
  }
}

// Relabels and measures the listed strips with foreground (fgStrips[0 … *fgStripCount − 1]), a
// warp a strip at a time: a sky's few such strips take one wave of warps, each a short chain of
// dependent loads, where a pass over every strip took several. A block's warps take consecutive
// strips (mostly of one tile) and add up their sums of a source before the atomics.
__global__ void __launch_bounds__(kTileW* kTileThreadRows, kRelabelBlocksPerSm)
    relabelAndMeasure(const float* __restrict__ in, const int32_t* __restrict__ parent,
                      const uint32_t* __restrict__ fgMasks, const uint32_t* __restrict__ rootMasks,
                      const int32_t* __restrict__ rootEnds, const int32_t* __restrict__ fgStrips,
                      const int32_t* __restrict__ fgStripCount, int32_t* __restrict__ labels,
                      SourceSums* sums, int64_t capacity, int ny, int nx, double background) {
  // The strips are listed, labelled and walked to their roots before the numbering ends: its
  // blocks let this kernel start only once they have waited for the labelling's end
  // (relabelStrip waits for the numbering itself).
  letNextStart();
  const int segmentsPerRow = (nx + kTileW - 1) / kTileW;
  const int32_t listed = *fgStripCount;
  const int warps = gridDim.x * kTileThreadRows;
  // Raw storage: RowSums' member initialisers are not allowed on a __shared__ variable.
  __shared__ alignas(RowSums) unsigned char lastStorage[kTileThreadRows * sizeof(RowSums)];
  RowSums* lastSums = reinterpret_cast<RowSums*>(lastStorage);
  // The same number of turns for every warp of the block, which meet at each turn's barriers.
  for (int first = blockIdx.x * kTileThreadRows; first < listed; first += warps) {
    const int e = first + threadIdx.y;
    RowSums last;
    if (e < listed) {
      const StripPlace at = placeOf(fgStrips[e], ny, segmentsPerRow);
      uint32_t rowFg[kRowsPerThread];
      stripMasks(fgMasks, ny, segmentsPerRow, at.slice, at.y0, at.tileX, rowFg);
      relabelStrip(in, parent, rowFg, rootMasks, rootEnds, labels, sums, capacity, ny, nx,
                   segmentsPerRow, at.slice, at.y0, at.tileX, background, last);
    }
    if (threadIdx.x == 0) lastSums[threadIdx.y] = last;
    __syncthreads();
    addBlockSums(lastSums, sums);
    __syncthreads();
  }
  // Not before the numbering has ended, whose count the publishing reads after this kernel.
  waitForPrevious();
}

}  // namespace
}  // namespace stacklens::compute::cuda
