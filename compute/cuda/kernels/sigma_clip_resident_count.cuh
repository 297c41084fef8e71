// The on-chip sigma clip's passes over each block's share (kernels/sigma_clip_resident.cuh): the
// moments with the window's histogram and values, the digit counts, the window's publication and
// the blocks' sums added in one order. (For compute/cuda/*.cu only.)
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

#include "compute/cuda/kernels/sigma_clip_resident_state.cuh"

namespace stacklens::compute::cuda {
namespace {

// Counts the digit of `bits` bits at `shift` of the kept values among values[0, len) that share
// each rank's prefix above it, into the block's histograms.
__device__ void countDigit(const float* values, int len, FloatBounds bounds, const ResidentState& s,
                           int shift, int bits, uint32_t (&hist)[2][kBins]) {
  const int matchShift = shift + bits;  // up to 32: 64-bit shifts
  const uint32_t mask = (1u << bits) - 1;
  const uint64_t prefix0 = uint64_t(s.selection.prefix[0]) >> matchShift,
                 prefix1 = uint64_t(s.selection.prefix[1]) >> matchShift;
  const bool same = s.same;
  for (int i = threadIdx.x; i < len; i += blockDim.x) {
    const float v = values[i];
    if (!inBounds(v, bounds)) continue;
    const uint32_t key = orderedKey(v), digit = (key >> shift) & mask;
    const uint64_t high = uint64_t(key) >> matchShift;
    if (high == prefix0) atomicAdd(&hist[0][digit], 1u);
    if (!same && high == prefix1) atomicAdd(&hist[1][digit], 1u);
  }
  __syncthreads();
}

// Each warp's room in the block's list of window values.
constexpr int kWarpRoom = kResidentCandidates / (kResidentThreads / 32);

// Counts the block's share (see countMoments): with Moments into `own`; with Keep, each warp
// lists its window values in its part of `list`, as many as it has room for, and returns how many
// it found (the same in every lane).
template <bool Keep, bool Moments = true>
__device__ uint32_t countShare(const float* mine, int len, float lo, float hi, const Window& w,
                               BlockSums& own, uint32_t& count, uint32_t (&hist)[kBins],
                               float* list) {
  const int lane = threadIdx.x % 32;
  float* warpList = list + threadIdx.x / 32 * kWarpRoom;
  const uint32_t lanesBefore = (1u << lane) - 1;
  uint32_t listed = 0;
  // The counts as floats, on the float pipes rather than the (half as fast) integer ones: exact,
  // as a thread counts far fewer than 2^24 values. Below the window in value is below it in key,
  // as the window never starts at the key of +0 (nextWindow); the whole range's start is NaN.
  float counted = 0.f, below = 0.f;
  const float lowValue = keyToFloat(w.low);
  const auto visit = [&](float v) {
    const bool kept = v >= lo && v <= hi;
    const uint32_t key = orderedKey(v), offset = key - w.low;
    const bool inWindow = kept && offset <= w.last;
    if (Moments && kept) {
      counted += 1.f;
      own.sum += v;
      own.sumSquares += double(v) * v;
      own.minKey = min(own.minKey, key);
      own.maxKey = max(own.maxKey, key);
      if (v < lowValue) below += 1.f;
    }
    if (!Keep) {
      if (inWindow) atomicAdd(&hist[offset >> w.binShift], 1u);
      return;
    }
    // Most rounds of a narrow window find none of its values: one vote skips them.
    const unsigned lanes = __ballot_sync(0xffffffffu, inWindow);
    if (lanes == 0) return;
    if (inWindow) {
      atomicAdd(&hist[offset >> w.binShift], 1u);
      const uint32_t at = listed + __popc(lanes & lanesBefore);
      if (at < kWarpRoom) warpList[at] = v;
    }
    listed += __popc(lanes);
  };
  // Whole warps go round together, for the warps' lists; the same order of values in each
  // thread as a plain stride over the share.
  const int whole = len / kResidentThreads * kResidentThreads;
  const float* at = mine + threadIdx.x;
  for (int start = 0; start < whole; start += kResidentThreads, at += kResidentThreads) visit(*at);
  if (whole < len) {
    const int i = whole + int(threadIdx.x);
    visit(i < len ? mine[i] : __int_as_float(0x7fffffff));
  }
  count += uint32_t(counted);
  own.below += uint32_t(below);
  return listed;
}

// A warp's count of its window values, into the block's.
__device__ inline void noteListed(ResidentState& s, uint32_t listed) {
  if (threadIdx.x % 32 == 0) {
    s.listed[threadIdx.x / 32] = listed;
    atomicAdd(&s.kept, listed);
    if (listed > kWarpRoom) s.overflow = true;
  }
}

// The moments of the kept values over the block's share, their count below the window, and the
// window's values: histogrammed by bin and (when the window keeps them) listed by each warp in
// its part of `list`. The block's sums go to its slot; after the barrier every block adds all
// slots in one order.
__device__ void countMoments(const float* mine, int len, FloatBounds bounds, ResidentState& s,
                             uint32_t (&hist)[kBins], float* list, BlockSums* slots) {
  using Reduce = cub::BlockReduce<BlockSums, kResidentThreads>;
  __shared__ typename Reduce::TempStorage temp;
  // The same test as inBounds: infinite bounds become the largest finite floats.
  const float lo = fmaxf(bounds.lo, -FLT_MAX), hi = fminf(bounds.hi, FLT_MAX);
  const Window w = s.window;
  BlockSums own = kNoSums;
  uint32_t count = 0;  // a thread's counts fit 32 bits
  if (w.keep) {
    noteListed(s, countShare<true>(mine, len, lo, hi, w, own, count, hist, list));
  } else {
    countShare<false>(mine, len, lo, hi, w, own, count, hist, list);
  }
  own.count = count;
  BlockSums block = Reduce(temp).Reduce(own, AddBlockSums{});
  __syncthreads();  // the warps' counts are in
  if (threadIdx.x == 0) {
    // Every kept value is in the whole range's window.
    block.inWindow = w.keep ? s.kept : uint32_t(block.count);
    block.mostInWindow = s.overflow ? 0xffffffffu : block.inWindow;
    slots[(s.phase % 3) * gridDim.x + blockIdx.x] = block;
  }
}

// Adds the block's window histogram into the phase's set; with the window's values kept, each
// bin's add returns where the block's values of that bin go in the set's window values (as many
// as a bin has room for).
__device__ void publishWindow(ResidentWorkspace* ws, const ResidentBuffers& buffers,
                              const ResidentState& s, const uint32_t (&hist)[kBins],
                              uint32_t (&cursor)[kBins], const float* list) {
  __syncthreads();  // the list and the histogram are complete
  const bool publish = s.window.keep && !s.overflow;
  uint32_t* counts = phaseSet(ws, s.phase).histogram[0];
  for (int i = threadIdx.x; i < kBins; i += blockDim.x) {
    const uint32_t count = hist[i];
    if (count == 0) continue;
    if (publish)
      cursor[i] = atomicAdd(&counts[i], count);
    else
      atomicAdd(&counts[i], count);
  }
  // A block that could not keep all its window values says so in the set's second histogram,
  // which a window's count leaves empty otherwise.
  if (s.window.keep && !publish && threadIdx.x == 0)
    atomicAdd(&phaseSet(ws, s.phase).histogram[1][0], 1u);
  if (!publish) return;
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

// Every block's slot of the last phase added in one order (so every block gets the same sums), by
// one warp while the others wait, and the ranks. The slots are first staged in `staged` (room for
// kMostResidentBlocks), a thread each, so that their loads go out together.
__device__ void addSlots(const BlockSums* allSlots, ResidentState& s, BlockSums* staged) {
  if (threadIdx.x < gridDim.x) {
    const BlockSums* slot = allSlots + ((s.phase - 1) % 3) * gridDim.x + threadIdx.x;
    staged[threadIdx.x] =
        BlockSums{__ldcg(&slot->count),    __ldcg(&slot->sum),         __ldcg(&slot->sumSquares),
                  __ldcg(&slot->minKey),   __ldcg(&slot->maxKey),      __ldcg(&slot->below),
                  __ldcg(&slot->inWindow), __ldcg(&slot->mostInWindow)};
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    BlockSums own = kNoSums;
    for (int b = threadIdx.x; b < int(gridDim.x); b += 32) own = AddBlockSums{}(own, staged[b]);
    for (int offset = 16; offset > 0; offset /= 2)
      own = AddBlockSums{}(own, BlockSums{__shfl_down_sync(0xffffffffu, own.count, offset),
                                          __shfl_down_sync(0xffffffffu, own.sum, offset),
                                          __shfl_down_sync(0xffffffffu, own.sumSquares, offset),
                                          __shfl_down_sync(0xffffffffu, own.minKey, offset),
                                          __shfl_down_sync(0xffffffffu, own.maxKey, offset),
                                          __shfl_down_sync(0xffffffffu, own.below, offset),
                                          __shfl_down_sync(0xffffffffu, own.inWindow, offset),
                                          __shfl_down_sync(0xffffffffu, own.mostInWindow, offset)});
    if (threadIdx.x == 0) {
      s.total = own;
      const unsigned long long n = own.count, rank0 = n > 0 ? (n - 1) / 2 : 0, rank1 = n / 2;
      // Whether the window holds both middle ranks: then they are ranked within it.
      const bool hit = own.below <= rank0 && rank1 < own.below + own.inWindow;
      s.hit = hit;
      Selection& sel = s.selection;
      sel.rank[0] = rank0 - (hit ? own.below : 0);
      sel.rank[1] = rank1 - (hit ? own.below : 0);
      sel.prefix[0] = sel.prefix[1] = hit ? s.window.low : 0u;
      s.same = true;
    }
  }
  __syncthreads();
}

}  // namespace
}  // namespace stacklens::compute::cuda
