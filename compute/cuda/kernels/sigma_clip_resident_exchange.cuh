// What the on-chip sigma clip's blocks share through device memory (kernels/
// sigma_clip_resident.cuh): the moments count's block sums (countMoments), the window's bins and
// values published before the grid barrier, and every block's sums added in one order after it.
// (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

#include "compute/cuda/kernels/sigma_clip_resident_count.cuh"
#include "compute/cuda/kernels/sigma_clip_resident_state.cuh"

namespace stacklens::compute::cuda {
namespace {

// A phase's slots column by column, in the room of gridDim.x BlockSums: each block's double sums,
// counts (count, below, inWindow, mostInWindow) and keys (minKey, maxKey), so that a warp's loads
// of one column are contiguous: the few L2 sectors that every block reads after the barrier.
struct SlotColumns {
  double2* sums;
  uint4* counts;
  uint2* keys;
};
__device__ inline SlotColumns slotColumns(BlockSums* allSlots, int phase) {
  static_assert(sizeof(double2) + sizeof(uint4) + sizeof(uint2) <= sizeof(BlockSums) &&
                    sizeof(BlockSums) % 16 == 0,
                "the columns fit the slots' room, aligned");
  char* base = reinterpret_cast<char*>(allSlots + (phase % 3) * gridDim.x);
  return {reinterpret_cast<double2*>(base),
          reinterpret_cast<uint4*>(base + gridDim.x * sizeof(double2)),
          reinterpret_cast<uint2*>(base + gridDim.x * (sizeof(double2) + sizeof(uint4)))};
}

// The block's window histogram added into the phase's set (see publishWindow): where the
// block's values of each of the thread's bins go, when the window's values are published.
struct BinStarts {
  uint32_t at[kBins / kResidentThreads];
};
__device__ BinStarts addWindowBins(ResidentWorkspace* ws, const ResidentState& s,
                                   const uint32_t (&hist)[kBins]) {
  const bool publish = s.window.keep && !s.overflow;
  uint32_t* counts = phaseSet(ws, s.phase).histogram[0];
  BinStarts starts{};
#pragma unroll
  for (int k = 0; k < kBins / kResidentThreads; ++k) {
    const int i = threadIdx.x + k * kResidentThreads;
    const uint32_t count = hist[i];
    if (count == 0) continue;
    if (publish)
      starts.at[k] = atomicAdd(&counts[i], count);
    else
      atomicAdd(&counts[i], count);
  }
  // A block that could not keep all its window values says so in the set's second histogram,
  // which a window's count leaves empty otherwise.
  if (s.window.keep && !publish && threadIdx.x == 0)
    atomicAdd(&phaseSet(ws, s.phase).histogram[1][0], 1u);
  return starts;
}
__device__ void noteBinStarts(const BinStarts& starts, const uint32_t (&hist)[kBins],
                              uint32_t (&cursor)[kBins]) {
#pragma unroll
  for (int k = 0; k < kBins / kResidentThreads; ++k) {
    const int i = threadIdx.x + k * kResidentThreads;
    if (hist[i]) cursor[i] = starts.at[k];
  }
}

// The listed window values to where addWindowBins placed the block's values of their bins (as
// many as a bin has room for), when they are published; after a barrier of the block.
__device__ void placeWindowValues(const ResidentBuffers& buffers, const ResidentState& s,
                                  uint32_t (&cursor)[kBins], const float* list) {
  if (!s.window.keep || s.overflow) return;
  __syncthreads();
  float* values = buffers.windowValues + (s.phase % 3) * (long long)(kBins * kBinRoom);
  const uint32_t low = s.window.low;
  const int binShift = s.window.binShift;
  for (int i = threadIdx.x; i < kResidentCandidates; i += blockDim.x) {
    if (i % kWarpRoom >= int(s.listed[i / kWarpRoom])) continue;
    const float v = list[i];
    const uint32_t bin = (orderedKey(v) - low) >> binShift, at = atomicAdd(&cursor[bin], 1u);
    if (at < kBinRoom) values[bin * kBinRoom + at] = v;
  }
}

// Adds the block's window histogram into the phase's set; with the window's values kept, each
// bin's add returns where the block's values of that bin go in the set's window values (as many
// as a bin has room for), and they are placed there.
__device__ void publishWindow(ResidentWorkspace* ws, const ResidentBuffers& buffers,
                              const ResidentState& s, const uint32_t (&hist)[kBins],
                              uint32_t (&cursor)[kBins], const float* list) {
  __syncthreads();  // the list and the histogram are complete
  noteBinStarts(addWindowBins(ws, s, hist), hist, cursor);
  placeWindowValues(buffers, s, cursor, list);
}

// The moments of the kept values over the block's share, their count below the window, and the
// window's values: histogrammed by bin and (when the window keeps them) listed by each warp in
// its part of `list`. The block's sums go to its slot; after the barrier every block adds all
// slots in one order. The window histogram is added into the phase's set (addWindowBins) while
// warp 0 adds the warps' sums; placeWindowValues is the rest of publishWindow.
__device__ void countMoments(ResidentWorkspace* ws, const float* mine, int len, FloatBounds bounds,
                             ResidentState& s, uint32_t (&hist)[kBins], uint32_t (&cursor)[kBins],
                             float* list, BlockSums* slots, ThreadMoments& cached) {
  // The same test as inBounds: infinite bounds become the largest finite floats.
  const float lo = fmaxf(bounds.lo, -FLT_MAX), hi = fminf(bounds.hi, FLT_MAX);
  const Window w = s.window;
  BlockSums own = kNoSums;
  if (w.keep) {
    noteListed(s, countShare<true>(mine, len, lo, hi, w, own, cached, hist, list));
  } else {
    countShare<false>(mine, len, lo, hi, w, own, cached, hist, list);
  }
  // A thread's counts fit 32 bits.
  BinStarts starts;
  // The barrier in reduceBlock also waits for the warps' counts, lists and histogram.
  BlockSums block =
      reduceBlock(own, uint32_t(own.count), [&] { starts = addWindowBins(ws, s, hist); });
  noteBinStarts(starts, hist, cursor);
  if (threadIdx.x == 0) {
    // Every kept value is in the whole range's window.
    block.inWindow = w.keep ? s.kept : uint32_t(block.count);
    block.mostInWindow = s.overflow ? 0xffffffffu : block.inWindow;
    const SlotColumns slot = slotColumns(slots, s.phase);
    slot.sums[blockIdx.x] = make_double2(block.sum, block.sumSquares);
    slot.counts[blockIdx.x] =
        make_uint4(uint32_t(block.count), block.below, block.inWindow, block.mostInWindow);
    slot.keys[blockIdx.x] = make_uint2(block.minKey, block.maxKey);
  }
}

// The warp's run of a summed histogram (its lanes' pairs) for pickWindowBin.
__device__ inline void noteRun(ResidentState& s, BinPair pair) {
  const uint32_t runSum = __reduce_add_sync(0xffffffffu, pair.both);
  if (threadIdx.x % 32 == 0) s.runSums[threadIdx.x / 32] = runSum;
}

// Every block's slot of the last phase added in one order, so that every block gets the same
// sums, and the ranks. A thread loads each slot, so that every load goes out at once. The double
// sums keep the order of one warp whose lanes each add the slots lane, lane + 32, ... and then
// the lanes at offsets 16, 8, 4, 2 and 1: they are staged in `staged` (room for
// kMostResidentBlocks pairs), and warp 0 adds the sums in that order, warp 1 the sums of squares.
// The integer fields (in any order) are summed by warp, then by warp 2 while warps 0 and 1 add
// the doubles; its first lane works out the ranks. The slots' warps meet at a barrier of their
// own before those adds. Each warp also sums its run of the summed window histogram (windowPair:
// its lanes' pairs) for pickWindowBin, once its slot loads are out.
__device__ void addSlots(BlockSums* allSlots, ResidentState& s, BinPair windowPair,
                         double2* staged) {
  constexpr int kWarps = kResidentThreads / 32, kMostSlotWarps = (kMostResidentBlocks + 31) / 32;
  static_assert(kMostSlotWarps <= kWarps, "a thread for each slot");
  const SlotColumns slots = slotColumns(allSlots, s.phase - 1);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, blocks = int(gridDim.x);
  // Warps 0 and 1 add the doubles while warp 2 adds the integer fields.
  const int slotWarps = max(3, (blocks + 31) / 32);
  __shared__ uint32_t partCount[kMostSlotWarps], partBelow[kMostSlotWarps],
      partInWindow[kMostSlotWarps], partMost[kMostSlotWarps], partMin[kMostSlotWarps],
      partMax[kMostSlotWarps];
  BlockSums mine = kNoSums;
  if (int(threadIdx.x) < blocks) {
    const double2 sums = __ldcg(slots.sums + threadIdx.x);
    const uint4 counts = __ldcg(slots.counts + threadIdx.x);
    const uint2 keys = __ldcg(slots.keys + threadIdx.x);
    mine = BlockSums{counts.x, sums.x, sums.y, keys.x, keys.y, counts.y, counts.z, counts.w};
  }
  noteRun(s, windowPair);
  if (warp >= slotWarps) {
    __syncthreads();
    return;
  }
  if (int(threadIdx.x) < blocks) staged[threadIdx.x] = make_double2(mine.sum, mine.sumSquares);
  // A run's counts fit 32 bits: its values fit in the SMs' shared memory.
  const uint32_t count = __reduce_add_sync(0xffffffffu, uint32_t(mine.count)),
                 below = __reduce_add_sync(0xffffffffu, mine.below),
                 inWindow = __reduce_add_sync(0xffffffffu, mine.inWindow),
                 most = __reduce_max_sync(0xffffffffu, mine.mostInWindow),
                 minKey = __reduce_min_sync(0xffffffffu, mine.minKey),
                 maxKey = __reduce_max_sync(0xffffffffu, mine.maxKey);
  if (lane == 0) {
    partCount[warp] = count;
    partBelow[warp] = below;
    partInWindow[warp] = inWindow;
    partMost[warp] = most;
    partMin[warp] = minKey;
    partMax[warp] = maxKey;
  }
  asm volatile("bar.sync 1, %0;" ::"r"(slotWarps * 32) : "memory");
  if (warp < 2) {
    // The lane's staged sums are read into registers ahead of its adds (as in reduceBlock).
    const double* column = reinterpret_cast<const double*>(staged) + (warp == 0 ? 0 : 1);
    double part[kMostSlotWarps];
#pragma unroll
    for (int k = 0; k < kMostSlotWarps; ++k) {
      const int b = lane + 32 * k;
      part[k] = b < blocks ? column[2 * b] : 0.0;
    }
    double own = 0.0;
#pragma unroll
    for (int k = 0; k < kMostSlotWarps; ++k)
      if (lane + 32 * k < blocks) own += part[k];
    for (int offset = 16; offset > 0; offset /= 2)
      own += __shfl_down_sync(0xffffffffu, own, offset);
    if (lane == 0) (warp == 0 ? s.total.sum : s.total.sumSquares) = own;
  }
  if (warp == 2) {
    const bool part = lane < slotWarps;
    const uint32_t count = __reduce_add_sync(0xffffffffu, part ? partCount[lane] : 0u),
                   below = __reduce_add_sync(0xffffffffu, part ? partBelow[lane] : 0u),
                   inWindow = __reduce_add_sync(0xffffffffu, part ? partInWindow[lane] : 0u),
                   most = __reduce_max_sync(0xffffffffu, part ? partMost[lane] : 0u),
                   minKey = __reduce_min_sync(0xffffffffu, part ? partMin[lane] : 0xffffffffu),
                   maxKey = __reduce_max_sync(0xffffffffu, part ? partMax[lane] : 0u);
    if (lane == 0) {
      BlockSums& total = s.total;
      total.count = count;
      total.below = below;
      total.inWindow = inWindow;
      total.mostInWindow = most;
      total.minKey = minKey;
      total.maxKey = maxKey;
      const unsigned long long n = count, rank0 = n > 0 ? (n - 1) / 2 : 0, rank1 = n / 2;
      // Whether the window holds both middle ranks: then they are ranked within it.
      const bool hit = below <= rank0 && rank1 < below + inWindow;
      s.hit = hit;
      Selection& sel = s.selection;
      sel.rank[0] = s.windowRank[0] = rank0 - (hit ? below : 0);
      sel.rank[1] = s.windowRank[1] = rank1 - (hit ? below : 0);
      sel.prefix[0] = sel.prefix[1] = hit ? s.window.low : 0u;
      s.same = true;
    }
  }
  __syncthreads();
}

}  // namespace
}  // namespace stacklens::compute::cuda
