// The on-chip sigma clip's median (kernels/sigma_clip_resident.cuh): the middle ranks' values
// gathered from every block, or their digits counted over the whole shares, and the window of the
// next evaluation. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

#include "compute/cuda/kernels/sigma_clip_resident_count.cuh"
#include "compute/cuda/kernels/sigma_clip_resident_exchange.cuh"
#include "compute/cuda/kernels/sigma_clip_resident_state.cuh"

namespace stacklens::compute::cuda {
namespace {

// The values of the middle ranks' bins (the first's, then the second's if another) from the
// phase set's window values into `list`; false (nothing usable) when a bin holds more than its
// room. Each thread loads one place of a bin before the counts are known: one round trip.
__device__ bool gatherBins(ResidentWorkspace* ws, const ResidentBuffers& buffers,
                           const ResidentState& s, float* list, unsigned& gathered,
                           unsigned& firstCount) {
  static_assert(2 * kBinRoom <= kResidentThreads, "a thread for each place of both bins");
  const Window& w = s.window;
  const uint32_t first = (s.selection.prefix[0] - w.low) >> w.binShift,
                 second = (s.selection.prefix[1] - w.low) >> w.binShift;
  const uint32_t* counts = phaseSet(ws, s.phase - 1).histogram[0];
  const float* values = buffers.windowValues + ((s.phase - 1) % 3) * (long long)(kBins * kBinRoom);
  const bool two = second != first;
  const int place = threadIdx.x % kBinRoom;
  const bool inSecond = threadIdx.x >= kBinRoom;
  float v = 0.f;
  if (threadIdx.x < 2 * kBinRoom && (two || !inSecond))
    v = __ldcg(values + (inSecond ? second : first) * kBinRoom + place);
  const uint32_t count0 = __ldcg(counts + first), count1 = two ? __ldcg(counts + second) : 0u;
  if (count0 > kBinRoom || count1 > kBinRoom) return false;  // the same in every thread
  if (threadIdx.x < 2 * kBinRoom && place < int(inSecond ? count1 : count0))
    list[inSecond ? count0 + place : place] = v;
  gathered = count0 + count1;
  firstCount = count0;
  __syncthreads();
  return true;
}

// The keys of the middle ranks among the gathered values (the first rank's bin, then the second's
// when another): each value's rank is the number of smaller ones, ties broken by place.
__device__ void selectGathered(const float* list, unsigned count, unsigned firstCount,
                               ResidentState& s) {
  Selection& sel = s.selection;
  const unsigned long long q0 = sel.rank[0], q1 = s.same ? sel.rank[1] : firstCount + sel.rank[1];
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
    const uint32_t key = orderedKey(list[i]);
    unsigned rank = 0;
    for (unsigned j = 0; j < count; ++j) {
      const uint32_t other = orderedKey(list[j]);
      rank += other < key || (other == key && j < i);
    }
    if (rank == q0) sel.prefix[0] = key;
    if (rank == q1) sel.prefix[1] = key;
  }
  __syncthreads();
}

// The digits below `shift` of the middle ranks, 11 bits at a time, each counted over the whole
// shares and summed across the blocks.
__device__ void selectRest(ResidentWorkspace* ws, const float* mine, int len, FloatBounds bounds,
                           ResidentState& s, uint32_t (&hist)[2][kBins], int shift) {
  while (shift > 0) {
    const int bits = min(shift, kBinBits);
    shift -= bits;
    clearHistograms(hist);
    countDigit(mine, len, bounds, s, shift, bits, hist);
    endPhase(ws, s, hist, s.same ? 1 : 2);
    const uint32_t* summed = &phaseSet(ws, s.phase - 1).histogram[0][0];
    pickBin(summed, shift, s, loadBinPair(summed));
  }
}

// The rest of the middle ranks' keys when both lie in one bin of the whole range's window: that
// bin becomes a window, counted over the whole shares and its values kept, as an evaluation's
// (one barrier); then as there.
__device__ void selectInBin(ResidentWorkspace* ws, const ResidentBuffers& buffers,
                            const float* mine, int len, float* list, FloatBounds bounds,
                            ResidentState& s, uint32_t (&hist)[2][kBins]) {
  const Window whole = s.window;
  const int shift = whole.binShift;
  const Window bin{s.selection.prefix[0], (1u << shift) - 1, shift - kBinBits, true};
  __syncthreads();  // every thread has read the prefix and the window
  if (threadIdx.x == 0) {
    s.window = bin;
    s.kept = 0;
    s.overflow = false;
  }
  clearHistogram(hist[0]);
  const float lo = fmaxf(bounds.lo, -FLT_MAX), hi = fminf(bounds.hi, FLT_MAX);
  BlockSums unused = kNoSums;
  ThreadMoments uncounted = kNoThreadMoments;
  noteListed(s, countShare<true, false>(mine, len, lo, hi, bin, unused, uncounted, hist[0], list));
  publishWindow(ws, buffers, s, hist[0], hist[1], list);
  endPhase(ws, s, hist, 0);
  const uint32_t* summed = &phaseSet(ws, s.phase - 1).histogram[0][0];
  const bool published = __ldcg(summed + kBins) == 0;  // every block kept its values
  pickBin(summed, bin.binShift, s, loadBinPair(summed));
  unsigned gathered, firstCount;
  if (published && gatherBins(ws, buffers, s, list, gathered, firstCount))
    selectGathered(list, gathered, firstCount, s);
  else
    selectRest(ws, mine, len, bounds, s, hist, bin.binShift);
  if (threadIdx.x == 0) s.window = whole;
  __syncthreads();
}

// The median's keys: from the window when it holds both middle ranks (its bins from the summed
// histogram, the rest from the bins' values gathered from every block, or where those are too
// many, from counts over the whole share); else from counts over the whole share. Ends with a
// barrier of the block; the counts over the whole shares leave hist[0] cleared, as the next
// evaluation's moments count needs it.
__device__ void selectMedian(ResidentWorkspace* ws, const ResidentBuffers& buffers,
                             const float* mine, int len, float* list, FloatBounds bounds,
                             ResidentState& s, uint32_t (&hist)[2][kBins], BinPair windowPair) {
  const Window w = s.window;
  if (s.hit) {
    pickWindowBin(w.binShift, s, windowPair);
    const bool same =
        (s.selection.prefix[0] >> w.binShift) == (s.selection.prefix[1] >> w.binShift);
    if (threadIdx.x == 0) s.same = same;  // read after the next barrier
    unsigned gathered, firstCount;
    if (w.keep && s.total.mostInWindow <= kResidentCandidates &&
        gatherBins(ws, buffers, s, list, gathered, firstCount)) {
      selectGathered(list, gathered, firstCount, s);
      return;
    }
    __syncthreads();  // s.same
    if (!w.keep && same)
      selectInBin(ws, buffers, mine, len, list, bounds, s, hist);
    else
      selectRest(ws, mine, len, bounds, s, hist, w.binShift);
  } else {
    selectRest(ws, mine, len, bounds, s, hist, 32);
  }
  clearHistogram(hist[0]);
}

// The half-width (log2 keys) of a window four times as wide as a median's move from `from` to
// `to`, within kLeastHalfBits and `most`.
__device__ int halfBitsFor(uint32_t from, uint32_t to, int most) {
  const long long move = to > from ? (long long)(to - from) : (long long)(from - to);
  // The least halfBits from kLeastHalfBits up to `most` with 2^halfBits >= 4 * move, without a
  // loop: ceil(log2(4 * move)) from its leading zeros.
  const long long wide = 4 * move;
  if (most <= kLeastHalfBits || wide <= (1ll << kLeastHalfBits)) return kLeastHalfBits;
  return min(most, 64 - __clzll(wide - 1));
}

// The window of 2^(halfBits + 1) keys around `key`, in whole bins.
__device__ Window windowAround(uint32_t key, int halfBits) {
  const long long width = 2ll << halfBits;
  const long long bin = width >> kWindowBinBits;
  long long low = max(0ll, (long long)key - width / 2) & ~(bin - 1);  // bin: a power of two
  low = min(low, (1ll << 32) - width);
  // Not at the key of +0, where -0 (the key before) would be below in key but not in value.
  if (low == 0x80000000ll) low -= bin;
  return Window{uint32_t(low), uint32_t(width - 1), halfBits + 1 - kWindowBinBits, true};
}

// The window of the next evaluation: around this median, as wide as four times its last move
// (within kLeastHalfBits and kMostHalfBits), narrower after a window that held too many values.
__device__ Window nextWindow(ResidentState& s) {
  const uint32_t key = s.selection.prefix[0];
  int halfBits = kFirstHalfBits;
  if (s.haveMedian) {
    halfBits = halfBitsFor(s.medianKey, key, kMostHalfBits);
    if (s.window.keep && s.total.mostInWindow > kResidentCandidates)
      halfBits = min(halfBits, max(kLeastHalfBits, s.halfBits - 4));
  }
  s.halfBits = halfBits;
  s.haveMedian = true;
  s.medianKey = key;
  return windowAround(key, halfBits);
}

}  // namespace
}  // namespace stacklens::compute::cuda
