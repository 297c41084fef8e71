// The segmentation's labelling (compute/cuda/cuda_segment.cu): threshold and connected
// components by a block-based lock-free union–find (each tile labelled in shared memory on its
// rows' runs, then joined to its labelled neighbours across their borders with atomicMin, so a
// component's root is its smallest raster index), with each 32-pixel segment's roots marked and
// each row's roots counted for the numbering. The relabelling and measuring:
// kernels/segment_measure.cuh. Launch shapes: tuning/segment.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cuda/atomic>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/kernels/segment_sources.cuh"
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
constexpr int kRowsSummedByBlocks = tuning::SegmentPolicy::rowsSummedByBlocks;
constexpr int kNumberingRows = tuning::SegmentPolicy::numberingRowsPerWarp;
static_assert(kTileW == 32, "a warp takes a tile row: one lane per pixel, one ballot per row");
static_assert(kTileH % kTileThreadRows == 0, "every thread takes the same number of rows");
static_assert(kPixelThreads % 32 == 0, "the per-pixel passes' warp votes use every lane");

// Provisional labels (the scratch "parent" array): −1 background; a foreground pixel holds the
// index of a pixel of its component nearer the root, a root its own index.
constexpr int32_t kBackground = -1;

// A parent as the union–find reads it: in the tile's shared memory, or (kAcrossTiles) in global
// memory from L2, where every block's stores and atomics meet: tiles are joined while others are
// still being labelled, and an SM's L1 may hold a line read before another block wrote it.
template <bool kAcrossTiles>
__device__ inline int32_t parentOf(const int32_t* labels, int32_t i) {
  if constexpr (kAcrossTiles) return __ldcg(labels + i);
  return labels[i];
}

// The root of i, each node passed pointed at its grandparent (path halving), so that later
// walks are short. Safe beside concurrent joins: a parent is always a smaller index and an
// ancestor, and a join that loses its link to such a store joins the old parent's root again.
template <bool kAcrossTiles = false>
__device__ inline int32_t findRootHalving(int32_t* labels, int32_t i) {
  int32_t up = parentOf<kAcrossTiles>(labels, i);
  if (up == i) return i;
  int32_t next;
  while (up != (next = parentOf<kAcrossTiles>(labels, up))) {
    labels[i] = next;
    i = up;
    up = next;
  }
  return up;
}

// Joins the trees of a and b, the larger root pointing to the smaller one (global or shared
// memory: atomicMin works on both). Returns the root that stopped being one, or −1 when a and b
// were already joined.
template <bool kAcrossTiles = false>
__device__ inline int32_t unite(int32_t* labels, int32_t a, int32_t b) {
  a = findRootHalving<kAcrossTiles>(labels, a);
  b = findRootHalving<kAcrossTiles>(labels, b);
  while (a != b) {
    if (a < b) {
      int32_t t = a;
      a = b;
      b = t;
    }
    int32_t old = atomicMin(&labels[a], b);
    if (old == a) return a;  // a was a root and now hangs below b
    a = findRootHalving<kAcrossTiles>(labels, old);
    b = findRootHalving<kAcrossTiles>(labels, b);
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

// a[r] for a row known only at run time, by selects, so that the rows' arrays stay in registers.
template <class T>
__device__ inline T rowOf(const T (&a)[kRowsPerThread], int r) {
  T v = a[0];
#pragma unroll
  for (int k = 1; k < kRowsPerThread; ++k) v = r == k ? a[k] : v;
  return v;
}

// Walks each of a thread's nodes (kBackground: none) up to its root (parentOf(i): i's parent),
// the nodes side by side: each step is a dependent load, and taken one node after another their
// walks waited on one another. Every lane of the warp calls it.
template <class Parent>
__device__ inline void walkToRoots(int32_t (&node)[kRowsPerThread], Parent parentOf) {
  bool walking = true;
  while (__any_sync(0xffffffffu, walking)) {
    walking = false;
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      if (node[r] == kBackground) continue;
      const int32_t next = parentOf(node[r]);
      walking |= next != node[r];
      node[r] = next;
    }
  }
}

// The thresholding reads a tile four pixels a thread: a block's 256 threads take 32 tile rows at
// a time, 8 threads a row, each 4 consecutive pixels (one 16-byte load where the rows are
// aligned). A row's foreground bits come from its 8 threads' nibbles by three shuffles: a lane a
// pixel cost a warp's load, compare, ballot and stores for every 32 pixels of a mostly empty sky.
constexpr int kQuadRows = kTileW * kTileThreadRows / 8;
constexpr int kQuadPasses = kTileH / kQuadRows;
static_assert(kTileH % kQuadRows == 0 && kTileW == 8 * 4, "8 threads of 4 pixels a tile row");

// A thread's pixels: of tile row pass · kQuadRows + t / 8, columns 4 · (t % 8) … + 3 (t: the
// thread's index in the block), 0 outside the image.
struct TileQuads {
  float v[kQuadPasses][4];
};

__device__ inline int blockThread() { return threadIdx.y * blockDim.x + threadIdx.x; }

// Whether every row of the stack starts 16-byte aligned in both `in` and `labels`, so that the
// quads are loaded and their background labels stored whole.
__device__ inline bool quadsAligned(const float* in, const int32_t* labels, int nx) {
  return nx % 4 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0 &&
         reinterpret_cast<uintptr_t>(labels) % 16 == 0;
}

// The thread's pixels of tile (tileY, tileX) of `slice`.
__device__ inline void loadTile(const float* __restrict__ in, int ny, int nx, int64_t slice,
                                int tileY, int tileX, bool aligned, TileQuads& q) {
  const int t = blockThread();
  const int x = tileX * kTileW + 4 * (t % 8);
  // 32-bit indices: a stack holds fewer than 2^31 pixels (cuda_segment.cu checks).
  const int sliceBase = int(slice) * ny * nx;
#pragma unroll
  for (int p = 0; p < kQuadPasses; ++p) {
    const int y = tileY * kTileH + p * kQuadRows + t / 8;
    const float* row = in + sliceBase + y * nx + x;
    if (aligned && y < ny && x + 3 < nx) {
      const float4 f = *reinterpret_cast<const float4*>(row);
      q.v[p][0] = f.x, q.v[p][1] = f.y, q.v[p][2] = f.z, q.v[p][3] = f.w;
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k) q.v[p][k] = y < ny && x + k < nx ? row[k] : 0.f;
    }
  }
}

// What the labelling writes (every array but fgStrips, fgStripCount and tileDone indexed as
// described at labelTile).
struct TileOutputs {
  int32_t* parent;
  uint32_t *fgMasks, *rootMasks;
  // Each row's (of the stack) number of roots, added to (0 before the labelling).
  int32_t *rowRoots, *labels;
  // The strips (8 rows of a tile: tile index · kTileThreadRows + strip) with foreground, in no
  // particular order, and their number (0 before the labelling).
  int32_t *fgStrips, *fgStripCount;
  // Each tile's state (tile index over the stack): `generation`, unique to this labelling, once
  // a tile with foreground has written its outputs (older values: not yet, or no foreground).
  unsigned long long* tileDone;
  unsigned long long generation;
};

// Listing the tile's strips with foreground in o.fgStrips, by the block's first warp (lane s:
// strip s), in two parts: the places are taken (one atomic) before the union–find, and written
// after it, so that the atomic's round trip does not hold the warp's rows back.
struct StripSlots {
  uint32_t listed;  // bit s: strip s has foreground
  int32_t first;    // in lane 0: the first place taken
};
__device__ inline StripSlots takeStripSlots(const uint32_t* rowMask, const TileOutputs& o) {
  const int lane = threadIdx.x;
  uint32_t any = 0;
  if (lane < kTileThreadRows)
    for (int r = 0; r < kRowsPerThread; ++r) any |= rowMask[lane * kRowsPerThread + r];
  StripSlots slots{__ballot_sync(0xffffffffu, any != 0), 0};
  if (lane == 0 && slots.listed) slots.first = atomicAdd(o.fgStripCount, __popc(slots.listed));
  return slots;
}
__device__ inline void writeStripSlots(const StripSlots& slots, const TileOutputs& o,
                                       int64_t tile) {
  const int lane = threadIdx.x;
  const int32_t first = __shfl_sync(0xffffffffu, slots.first, 0);
  if ((slots.listed >> lane) & 1u)
    o.fgStrips[first + __popc(slots.listed & ((1u << lane) - 1u))] =
        static_cast<int32_t>(tile * kTileThreadRows + lane);
}

// The tile-local index of the root of the tile's foreground when it is one component met by
// every row in one run (rowMask: the tile rows' bits, in shared memory): the rows with foreground
// consecutive, each one run touching the run above (diagonally too under 8-connectivity), as a
// compact source or the inside of a large one gives. The root is then the first such row's first
// pixel, and the union–find, whose chains are longest on such tiles, is not needed. −1 otherwise.
// By every warp alike, two rows a lane.
__device__ inline int singleRunRoot(const uint32_t* rowMask, bool eight) {
  static_assert(kTileH == 2 * 32, "a lane checks two rows");
  const int lane = threadIdx.x;
  bool starts[2], bad = false;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int row = 2 * lane + k;
    const uint32_t m = rowMask[row], above = row > 0 ? rowMask[row - 1] : 0u;
    const uint32_t reach = eight ? (above | above << 1 | above >> 1) : above;
    const bool oneRun = (m & (m + (m & (0u - m)))) == 0;
    starts[k] = m != 0 && above == 0;
    bad |= m != 0 && (!oneRun || (above != 0 && (m & reach) == 0));
  }
  const uint32_t even = __ballot_sync(0xffffffffu, starts[0]),
                 odd = __ballot_sync(0xffffffffu, starts[1]);
  if (__any_sync(0xffffffffu, bad) || __popc(even) + __popc(odd) != 1) return -1;
  const int row = even ? 2 * (__ffs(even) - 1) : 2 * (__ffs(odd) - 1) + 1;
  return row * kTileW + __ffs(rowMask[row]) - 1;
}

// The segment (tile row) of pixel i, in raster order: segments of a row are consecutive.
__device__ inline int64_t segmentOf(int32_t i, int nx, int segmentsPerRow) {
  return int64_t(i / nx) * segmentsPerRow + (i % nx) / kTileW;
}

// Joining a labelled tile to its labelled neighbours, across the borders and corners they share:
// each pair of neighbouring tiles is joined by the one of the two that finishes last (both, when
// they finish together: a join of trees already joined changes nothing), while the other tiles
// are still being labelled, instead of by a pass of its own after them all. A pair's joins are a
// unit: 0 the tile's left border (with its left neighbour), 1 its right neighbour's left border,
// 2 its top border, 3 its lower neighbour's top border, and under 8-connectivity the pixel pairs
// across a corner, where two tiles meet diagonally: 4 the tile's top left corner, 5 its top
// right, 6 the top right corner of its lower left neighbour, 7 the top left of its lower right.
constexpr int kBorderUnits = 4, kUnits = 8;
// The unit of block thread t, and which of its pixels: threads 0–63 and 64–127 a left border's
// rows, 128–159 and 160–191 a top border's columns, 192–195 a corner.
__device__ inline int unitOf(int t) {
  static_assert(2 * kTileH + 2 * kTileW + kUnits - kBorderUnits <= kTileW * kTileThreadRows,
                "a block thread a border pixel or corner");
  return t < 2 * kTileH                ? t / kTileH
         : t < 2 * kTileH + 2 * kTileW ? 2 + (t - 2 * kTileH) / kTileW
                                       : 4 + t - 2 * kTileH - 2 * kTileW;
}

// Which units tile (tileY, tileX) of a slice of tilesY × tilesX tiles takes: those whose other
// tile is done (tileDone, `generation`). By one thread, after the tile's own state is stored: of
// two neighbours finishing together, each stores its state and then reads the other's, behind
// sequentially consistent fences, so that at least one of them sees the other done.
__device__ inline uint32_t unitsDue(const TileOutputs& o, int64_t tile, int tileY, int tileX,
                                    int tilesY, int tilesX, bool eight) {
  const bool left = tileX > 0, right = tileX + 1 < tilesX, up = tileY > 0,
             down = tileY + 1 < tilesY;
  const int64_t partner[kUnits] = {tile - 1,          tile + 1,          tile - tilesX,
                                   tile + tilesX,     tile - tilesX - 1, tile - tilesX + 1,
                                   tile + tilesX - 1, tile + tilesX + 1};
  const bool exists[kUnits] = {left,       right,       up,           down,
                               up && left, up && right, down && left, down && right};
  uint32_t due = 0;
#pragma unroll
  for (int u = 0; u < kUnits; ++u) {
    if (u >= kBorderUnits && !eight) break;
    // Loaded whether or not the tile exists (the tile's own state stands in), all at once.
    const unsigned long long state = *reinterpret_cast<const volatile unsigned long long*>(
        o.tileDone + (exists[u] ? partner[u] : tile));
    due |= uint32_t(exists[u] && state == o.generation) << u;
  }
  return due;
}

// Calls join(i, j) for the foreground pixel (y, x) of a tile border and each of its foreground
// neighbours in the tile across it (column: x is a tile's first column, the neighbours to its
// left; else y is a tile's first row, the neighbours above), but for the pairs that another pair
// already joins: a pair whose two pixels are each connected inside their own tile to the two
// pixels of a pair one step back along the border (the previous pixel's straight pair, itself
// joined or passed by the same rule), so that a run along the border joins its two tile
// components once instead of once a pixel. Pairs across a tile corner are the corners' units.
template <class Fg, class Join>
__device__ inline void joinBorderPixel(Fg fg, int32_t i, int y, int x, int ny, int nx, bool column,
                                       bool eight, Join join) {
  if (!fg(y, x)) return;
  if (column) {  // (y, x) in the right tile, (·, x − 1) in the left one
    // The previous pixel up the border, in the same tile row, joins the same two components.
    const bool upInTile = y % kTileH != 0, downInTile = (y + 1) % kTileH != 0;
    const bool left = fg(y, x - 1);
    if (left && !(upInTile && fg(y - 1, x) && fg(y - 1, x - 1))) join(i, i - 1);
    if (eight) {
      // (y − 1, x − 1) is connected in its tile to (y, x − 1), or (y, x) to (y − 1, x), whose
      // straight pairs are joined.
      if (upInTile && !(left || fg(y - 1, x)) && fg(y - 1, x - 1)) join(i, i - nx - 1);
      if (downInTile && y + 1 < ny && !(left || fg(y + 1, x)) && fg(y + 1, x - 1))
        join(i, i + nx - 1);
    }
  } else {  // (y, x) in the lower tile, (y − 1, ·) in the upper one
    const bool leftInTile = x % kTileW != 0, rightInTile = (x + 1) % kTileW != 0;
    const bool up = fg(y - 1, x);
    if (up && !(leftInTile && fg(y, x - 1) && fg(y - 1, x - 1))) join(i, i - nx);
    if (eight) {
      if (leftInTile && !(up || fg(y, x - 1)) && fg(y - 1, x - 1)) join(i, i - nx - 1);
      if (rightInTile && x + 1 < nx && !(up || fg(y, x + 1)) && fg(y - 1, x + 1))
        join(i, i - nx + 1);
    }
  }
}

// After tile (tileY, tileX) of `slice` has written its outputs: marks it done and joins it to
// its neighbours already done (unitsDue), a block thread a border pixel or corner; every root
// that stops being one is taken off its segment's bits and count. Only tiles with foreground
// take part: a tile without any has nothing to join.
__device__ inline void joinDoneNeighbours(const TileOutputs& o, int ny, int nx, int tilesY,
                                          int tilesX, int64_t slice, int tileY, int tileX,
                                          int64_t tile, bool eight) {
  __shared__ uint32_t dueUnits;
  const int t = blockThread();
  __syncthreads();  // the tile's outputs are stored
  if (t == 0) {
    // The tile's outputs (the block's, through the barrier) before its state: a release, which
    // needs no place in the fences' single order, unlike the store–load fence after it.
    ::cuda::atomic_thread_fence(::cuda::std::memory_order_release, ::cuda::thread_scope_device);
    *reinterpret_cast<volatile unsigned long long*>(o.tileDone + tile) = o.generation;
    __threadfence();
    const uint32_t due = unitsDue(o, tile, tileY, tileX, tilesY, tilesX, eight);
    // The done neighbours' outputs are read after their states: an acquire.
    if (due)
      ::cuda::atomic_thread_fence(::cuda::std::memory_order_acquire, ::cuda::thread_scope_device);
    dueUnits = due;
  }
  __syncthreads();
  const int unit = unitOf(t);
  if (unit >= kUnits || !((dueUnits >> unit) & 1u)) return;
  const int y0 = tileY * kTileH, x0 = tileX * kTileW;
  // 32-bit indices: a stack holds fewer than 2^31 pixels (cuda_segment.cu checks).
  const int sliceRow = int(slice) * ny, sliceBase = sliceRow * nx;
  const uint32_t* fgMasks = o.fgMasks;
  auto fg = [&](int y, int x) {
    return bitAt(__ldcg(fgMasks + (sliceRow + y) * tilesX + x / kTileW), x % kTileW);
  };
  auto join = [&](int32_t i, int32_t j) {
    const int32_t gone = unite<true>(o.parent, i, j);
    if (gone < 0) return;
    const int64_t segment = segmentOf(gone, nx, tilesX);
    atomicAnd(&o.rootMasks[segment], ~(1u << (gone % nx % kTileW)));
    atomicSub(&o.rowRoots[gone / nx], 1);
  };
  if (unit < kBorderUnits) {
    const bool column = unit < 2;
    const int k = column ? t % kTileH : (t - 2 * kTileH) % kTileW;
    const int y = column ? y0 + k : y0 + (unit == 3 ? kTileH : 0);
    const int x = column ? x0 + (unit == 1 ? kTileW : 0) : x0 + k;
    if (y < ny && x < nx)
      joinBorderPixel(fg, sliceBase + y * nx + x, y, x, ny, nx, column, eight, join);
    return;
  }
  // A corner's pair: (y, x) and its upper neighbour at x + dx (the tiles exist, so both pixels
  // do).
  const int y = y0 + (unit >= 6 ? kTileH : 0);
  const int x = x0 + (unit == 4 ? 0 : unit == 5 ? kTileW - 1 : unit == 6 ? -1 : kTileW);
  const int dx = unit == 4 || unit == 7 ? -1 : 1;
  if (fg(y, x) && fg(y - 1, x + dx)) {
    const int32_t i = sliceBase + y * nx + x;
    join(i, i - nx + dx);
  }
}

// Joins, in the tile's shared labels `local`, each run of the warp's rows in `below` (rows under
// a row with foreground) to the runs of the row above that it touches: each run above that
// overlaps it by the lane under its first overlapping pixel, and under 8-connectivity the runs
// touching its ends diagonally. The warp lists its rows' joins first and then shares them out
// over its lanes: a ragged tile's rows hold a few joins each, and taken row after row each row's
// unions waited on the last's.
__device__ inline void joinTileRuns(int32_t* local, const uint32_t* rowMask, uint64_t below,
                                    bool eight) {
  // Up to 2 joins a pixel (straight up, or one diagonal at each end of a run), a warp's list
  // shared out whenever the next row might not fit.
  constexpr int kListed = 4 * kTileW;
  __shared__ uint16_t listed[kTileThreadRows][kListed];
  const int lane = threadIdx.x, warp = threadIdx.y;
  uint16_t* list = listed[warp];
  const uint32_t lanesBefore = (1u << lane) - 1u;
  int count = 0;
  auto joinListed = [&] {
    __syncwarp();
#pragma unroll 1
    for (int j = lane; j < count; j += 32) {
      const int li = list[j] >> 2;  // the pixel, and the column offset + 1 of the one above
      unite(local, li, li - kTileW + (list[j] & 3) - 1);
    }
    __syncwarp();
    count = 0;
  };
#pragma unroll 1
  for (; below; below &= below - 1) {
    const int row = __ffsll(static_cast<long long>(below)) - 1;
    const uint32_t fg = rowMask[row], above = rowMask[row - 1];
    uint32_t joins = 0;  // bit d + 1: join the pixel above at column offset d
    if (bitAt(fg, lane)) {
      const int start = runStart(fg, lane);
      if (bitAt(above, lane) && (lane == start || !bitAt(above, lane - 1))) joins |= 2u;
      if (eight) {
        if (lane == start && lane > 0 && bitAt(above, lane - 1)) joins |= 1u;
        if (lane < 31 && lane == runEnd(fg, lane) && bitAt(above, lane + 1) && !bitAt(above, lane))
          joins |= 4u;
      }
    }
    const uint32_t one = __ballot_sync(0xffffffffu, __popc(joins) == 1),
                   two = __ballot_sync(0xffffffffu, __popc(joins) >= 2);
    if (count + __popc(one) + 2 * __popc(two) > kListed) joinListed();
    int at = count + __popc(one & lanesBefore) + 2 * __popc(two & lanesBefore);
    const int li = row * kTileW + lane;
    for (; joins; joins &= joins - 1) list[at++] = uint16_t(li << 2 | (__ffs(joins) - 1));
    count += __popc(one) + 2 * __popc(two);
  }
  joinListed();
}

// Threshold and union–find inside one tile in shared memory: a pixel starts at its row run's
// first pixel, and each run joins once per run of the row above that it touches. Every tile row
// (segment) gets its foreground bits and the bits of its tile-local roots (their number added to
// the row's count), and, when
// it has foreground, each pixel's global index of its tile-local root (the tile part's first
// pixel in raster order) or −1 in `parent`; a row without foreground gets its final labels (0)
// instead, so that the relabelling passes it by. Background dominates a sky, so a tile without
// foreground skips the union–find, and the joining and the roots' search visit only the rows
// with foreground (a warp the rows ≡ its index mod kTileThreadRows). The strips with foreground
// are listed for the relabelling, and the tile is joined to its neighbours that are done
// (joinDoneNeighbours). tile: the tile's index over the stack, (slice · tilesY + tileY) ·
// segmentsPerRow + tileX.
__device__ inline void labelTile(const TileQuads& q, const TileOutputs& o, int ny, int nx,
                                 int segmentsPerRow, int tilesY, int64_t slice, int tileY,
                                 int tileX, int64_t tile, float threshold, bool eight,
                                 bool aligned) {
  __shared__ alignas(16) int32_t local[kTileH * kTileW];
  __shared__ uint32_t rowMask[kTileH];
  const int t = blockThread(), quad = t % 8;
  const int x4 = tileX * kTileW + 4 * quad, y0 = tileY * kTileH;
  const int sliceBase = int(slice) * ny * nx, sliceRow = int(slice) * ny;  // as loadTile
  int32_t* __restrict__ parent = o.parent;
  uint32_t* __restrict__ fgMasks = o.fgMasks;
  uint32_t* __restrict__ rootMasks = o.rootMasks;
  int32_t* __restrict__ rowRoots = o.rowRoots;
  int32_t* __restrict__ labels = o.labels;
  bool any = false;
#pragma unroll
  for (int p = 0; p < kQuadPasses; ++p) {
    const int row = p * kQuadRows + t / 8, y = y0 + row;
    // Compared in float like the CPU (value > threshold, the threshold rounded to float once).
    uint32_t nibble = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k)
      nibble |= uint32_t(y < ny && x4 + k < nx && q.v[p][k] > threshold) << k;
    uint32_t fg = nibble << (4 * quad);  // the row's bits, gathered over its 8 threads
    fg |= __shfl_xor_sync(0xffffffffu, fg, 1);
    fg |= __shfl_xor_sync(0xffffffffu, fg, 2);
    fg |= __shfl_xor_sync(0xffffffffu, fg, 4);
    any |= fg != 0;
    if (quad == 0) rowMask[row] = fg;
    if (y >= ny) continue;  // the same for the row's threads
    if (quad == 0) {
      const int segment = (sliceRow + y) * segmentsPerRow + tileX;
      fgMasks[segment] = fg;
      if (fg == 0) rootMasks[segment] = 0;
    }
    if (fg == 0) {
      int32_t* to = labels + sliceBase + y * nx + x4;
      if (aligned && x4 + 3 < nx) {
        *reinterpret_cast<int4*>(to) = make_int4(0, 0, 0, 0);
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k)
          if (x4 + k < nx) to[k] = 0;
      }
    } else {  // background entries are set too, and never read
      const int li = row * kTileW + 4 * quad;
      *reinterpret_cast<int4*>(&local[li]) = make_int4(
          row * kTileW + runStart(fg, 4 * quad), row * kTileW + runStart(fg, 4 * quad + 1),
          row * kTileW + runStart(fg, 4 * quad + 2), row * kTileW + runStart(fg, 4 * quad + 3));
    }
  }
  if (!__syncthreads_or(any)) return;
  // The joining's loops are not unrolled, with one call of unite: unrolled, their copies
  // overflowed the instruction cache.
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int x = tileX * kTileW + lane;
  StripSlots slots{};
  if (warp == 0) slots = takeStripSlots(rowMask, o);
  const int single = singleRunRoot(rowMask, eight);  // the same for the whole block
  static_assert(kTileH == 64, "a tile's rows with foreground are one 64-bit mask");
  const uint64_t rows = uint64_t(__ballot_sync(0xffffffffu, rowMask[lane] != 0)) |
                        uint64_t(__ballot_sync(0xffffffffu, rowMask[lane + 32] != 0)) << 32;
  const uint64_t mine = rows & (0x0101010101010101ull << warp);
  if (single < 0) {
    joinTileRuns(local, rowMask, mine & rows << 1, eight);
    __syncthreads();
  }
  // Each row's pixels' roots (a ragged tile's chains are long).
  int32_t rootOf[kRowsPerThread];  // of the pixel in row warp + k · kTileThreadRows
#pragma unroll
  for (int k = 0; k < kRowsPerThread; ++k) {
    const int row = warp + k * kTileThreadRows;
    rootOf[k] = (mine >> row) & 1 && bitAt(rowMask[row], lane)
                    ? (single >= 0 ? single : row * kTileW + lane)
                    : kBackground;
  }
  if (single < 0) walkToRoots(rootOf, [&](int32_t i) { return local[i]; });
#pragma unroll 1
  for (uint64_t left = mine; left; left &= left - 1) {
    const int row = __ffsll(static_cast<long long>(left)) - 1, y = y0 + row;
    const int lr = rowOf(rootOf, row / kTileThreadRows);
    const bool root = lr == row * kTileW + lane;
    const int32_t label = lr == kBackground
                              ? kBackground
                              : sliceBase + (y0 + lr / kTileW) * nx + tileX * kTileW + lr % kTileW;
    const uint32_t roots = __ballot_sync(0xffffffffu, root);
    if (x < nx) parent[sliceBase + y * nx + x] = label;
    if (lane == 0) {
      rootMasks[(sliceRow + y) * segmentsPerRow + tileX] = roots;
      if (roots) atomicAdd(&rowRoots[sliceRow + y], __popc(roots));
    }
  }
  if (warp == 0) writeStripSlots(slots, o, tile);
  joinDoneNeighbours(o, ny, nx, tilesY, segmentsPerRow, slice, tileY, tileX, tile, eight);
}

// The tiles of a band of tile rows, from tileY0 on, in a group of slices from z0 on (grid: tile
// columns × the band's tile rows × slices; a slice has tilesY tile rows), each by a block; the
// blocks also clear the first `sumsToClear` sources' sums and the first `countersToClear` of
// nextCounters: the next labelling's counters (its strip count and rows' root counts), which are
// not this one's.
__global__ void __launch_bounds__(kTileW* kTileThreadRows)
    labelTiles(const float* __restrict__ in, TileOutputs o, int ny, int nx, int z0, int tileY0,
               int tilesY, float threshold, bool eight, SourceSums* __restrict__ sums,
               int64_t sumsToClear, int32_t* nextCounters, int64_t countersToClear) {
  letNextStart();
  const int64_t slice = int64_t(z0) + blockIdx.z;
  const int tileY = tileY0 + int(blockIdx.y);
  const bool aligned = quadsAligned(in, o.labels, nx);
  TileQuads q;
  loadTile(in, ny, nx, slice, tileY, blockIdx.x, aligned, q);
  labelTile(q, o, ny, nx, gridDim.x, tilesY, slice, tileY, blockIdx.x,
            (slice * tilesY + tileY) * gridDim.x + blockIdx.x, threshold, eight, aligned);
  const int64_t threads = int64_t(gridDim.x) * gridDim.y * gridDim.z * blockDim.x * blockDim.y;
  const int64_t block = (int64_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  for (int64_t k = block * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
       k < sumsToClear; k += threads)
    clearSums(sums[k]);
  for (int64_t k = block * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
       k < countersToClear; k += threads)
    nextCounters[k] = 0;
}

}  // namespace
}  // namespace stacklens::compute::cuda
