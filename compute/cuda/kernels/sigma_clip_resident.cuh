// Sigma clipping of values that fit in the GPU's shared memory (compute/cuda/cuda_statistics.cu):
// one cooperative kernel runs astropy's whole loop. Each block copies its share of the values
// into shared memory once; every evaluation then counts them there and the blocks meet at a
// grid-wide barrier after each count. Every block reads the same summed counts and so takes the
// same decisions (bins, statistics, next bounds, done) itself: nothing waits for the host or for
// another launch.
//
// The median is an exact radix selection of the two middle ranks. Between evaluations it moves
// little, so each evaluation watches a window of keys around the last median: the moments count
// also counts the kept values below the window, histograms the window's values in bins and lists
// them (each warp its own). The blocks add their histograms into a shared one, each add returning
// where the block's values of that bin go in device memory. After the one barrier every block
// finds the bins of the middle ranks from the summed histogram, gathers those bins' values and
// ranks them on its own. The first evaluation's window is every key (its bins are the first radix
// digit); the bin found then becomes a window of its own, counted in one more pass and barrier.
// Only when a window misses a middle rank or holds more values than there is room for do digit
// counts over the whole shares follow, each with a barrier. The selection and the statistics are
// those of kernels/statistics.cuh, whose helpers this uses. Launch shape and sizes:
// tuning/statistics.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

#include "compute/cuda/kernels/statistics.cuh"
#include "compute/cuda/tuning/statistics.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr int kResidentThreads = tuning::SigmaClipPolicy::residentThreads;
constexpr int kResidentCandidates = tuning::SigmaClipPolicy::residentCandidates;
constexpr int kBinBits = 11;  // log2(kBins)
static_assert(kBins == 1 << kBinBits, "the window's bins and the digits share one histogram size");
constexpr int kWindowBinBits = tuning::SigmaClipPolicy::residentWindowBinBits;
static_assert(kWindowBinBits <= kBinBits, "a window's bins fit the histograms");
constexpr int kFirstHalfBits = tuning::SigmaClipPolicy::residentFirstHalfBits;
constexpr int kLeastHalfBits = tuning::SigmaClipPolicy::residentLeastHalfBits;
constexpr int kMostHalfBits = tuning::SigmaClipPolicy::residentMostHalfBits;

// One block's moments of the kept values, and its count of them below and inside the window.
struct BlockSums {
  unsigned long long count;
  double sum, sumSquares;
  uint32_t minKey, maxKey;
  // mostInWindow: the most any one block holds, all ones where a warp's list had no room
  uint32_t below, inWindow, mostInWindow;
};
struct AddBlockSums {
  __device__ BlockSums operator()(const BlockSums& a, const BlockSums& b) const {
    return {a.count + b.count,           a.sum + b.sum,
            a.sumSquares + b.sumSquares, min(a.minKey, b.minKey),
            max(a.maxKey, b.maxKey),     a.below + b.below,
            a.inWindow + b.inWindow,     max(a.mostInWindow, b.mostInWindow)};
  }
};
constexpr BlockSums kNoSums{0, 0.0, 0.0, 0xffffffffu, 0u, 0u, 0u, 0u};

// What one count phase adds up across the blocks: the histograms, one per middle rank.
struct PhaseSet {
  uint32_t histogram[2][kBins];
};

// What the blocks share in global memory. The phase sets rotate: a count phase adds into one,
// the next phase reads it, and block 0 clears the one after (read two phases ago), so no set is
// cleared while it is read or counted. The phase carries over from one launch to the next, so
// that the set the next launch counts into first is the one already cleared; the host zeroes
// the sets once, when it makes the workspace.
struct ResidentWorkspace {
  PhaseSet sets[3];
  int phase;
  Control control;  // the loop's state at the end, read back by the host
};

// Device buffers. slots: 3 × grid BlockSums, a set per phase (a block writes the next phase's
// while others may still read the last's). windowValues: per phase set, the window's values by
// bin, kBinRoom a bin, placed by the set's summed histogram as the blocks add to it.
constexpr int kBinRoom = tuning::SigmaClipPolicy::residentBinRoom;
struct ResidentBuffers {
  BlockSums* slots;
  float* windowValues;
};
__host__ __device__ constexpr long long windowValueCount() { return 3ll * kBins * kBinRoom; }
// The most blocks the kernel can take: every block's slot is staged in the room of a block's
// window values.
constexpr int kMostResidentBlocks = kResidentCandidates * sizeof(float) / sizeof(BlockSums);

// The keys an evaluation watches: [low, low + last], in bins of 2^binShift keys.
struct Window {
  uint32_t low, last;
  int binShift;
  bool keep;  // the blocks keep the window's values (not for the whole range)
};

// The kernel's state in each block's shared memory.
struct ResidentState {
  Control control;
  Selection selection;
  BlockSums total;
  Window window;
  StatsResult result;  // the evaluation's statistics but the median
  bool hit;            // the window holds both middle ranks
  bool same;           // both middle ranks still share their prefix: one histogram
  bool haveMedian;
  uint32_t medianKey;                      // the last evaluation's lower middle key
  int halfBits;                            // the last window's half-width (log2 keys)
  unsigned kept;                           // the block's window values
  bool overflow;                           // a warp found more than its room in the list
  uint32_t listed[kResidentThreads / 32];  // each warp's window values
  int phase;                               // grid-wide barriers passed, selecting the phase set
};

__device__ inline PhaseSet& phaseSet(ResidentWorkspace* ws, int phase) {
  return ws->sets[phase % 3];
}

// Adds the block's histograms into the phase's set, clears the set after it (block 0), and waits
// for every block.
__device__ void endPhase(ResidentWorkspace* ws, ResidentState& s, uint32_t (&hist)[2][kBins],
                         int histograms) {
  __syncthreads();
  uint32_t* set = &phaseSet(ws, s.phase).histogram[0][0];
  for (int h = 0; h < histograms; ++h)
    for (int i = threadIdx.x; i < kBins; i += blockDim.x)
      if (hist[h][i]) atomicAdd(&set[h * kBins + i], hist[h][i]);
  if (blockIdx.x == 0) {
    PhaseSet& next = phaseSet(ws, s.phase + 1);
    for (int i = threadIdx.x; i < 2 * kBins; i += blockDim.x) (&next.histogram[0][0])[i] = 0;
  }
  cooperative_groups::this_grid().sync();
  if (threadIdx.x == 0) ++s.phase;
  __syncthreads();
}

// Inclusive sum over the warp's lanes.
__device__ inline uint32_t warpInclusiveSum(uint32_t v) {
  for (int offset = 1; offset < 32; offset *= 2) {
    const uint32_t up = __shfl_up_sync(0xffffffffu, v, offset);
    if (int(threadIdx.x % 32) >= offset) v += up;
  }
  return v;
}

// A thread's two bins of a summed histogram in pickBin: loaded apart, so that the loads can go out
// with others.
struct BinPair {
  uint32_t first, both;
};
__device__ inline BinPair loadBinPair(const uint32_t* hist) {
  static_assert(kBins == 2 * kResidentThreads, "two bins a thread");
  const uint32_t first = __ldcg(hist + 2 * threadIdx.x);
  return {first, first + __ldcg(hist + 2 * threadIdx.x + 1)};
}

// The bin of each middle rank in the summed histograms at `hist` (firstPair: the thread's pair of
// the first): each warp takes a run of kBins / warps bins, two a lane, and sums it; warp 0 scans
// the runs' sums to find the run holding each rank, and the warp that holds that run scans its
// lanes' pairs to find the bin. The bin, shifted by `shift`, is added to the rank's prefix; the
// rank becomes the rank within the bin. Counts fit 32 bits: the values selected among fit in the
// SMs' shared memory. Then every thread sees the new selection.
__device__ void pickBin(const uint32_t* hist, int shift, ResidentState& s, BinPair firstPair) {
  constexpr int kWarps = kResidentThreads / 32, kRun = kBins / kWarps;
  static_assert(kRun == 2 * 32, "each lane takes two bins of its warp's run");
  __shared__ uint32_t runSums[kWarps];
  __shared__ int holder[2];
  __shared__ uint32_t holderStart[2];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  Selection& sel = s.selection;
  const bool same = s.same;
  for (int h = 0; h < (same ? 1 : 2); ++h) {
    const BinPair pair = h == 0 ? firstPair : loadBinPair(hist + kBins);
    const uint32_t first = pair.first, both = pair.both;
    const uint32_t runSum = __reduce_add_sync(0xffffffffu, both);
    const unsigned long long rank[2] = {sel.rank[0], sel.rank[1]};
    if (lane == 0) runSums[warp] = runSum;
    if (threadIdx.x < 2) holder[threadIdx.x] = -1;
    __syncthreads();  // every thread has read the ranks before one is updated
    if (warp == 0) {
      const uint32_t runEnd = warpInclusiveSum(runSums[lane]), runStart = runEnd - runSums[lane];
      for (int r = same ? 0 : h; r <= (same ? 1 : h); ++r)
        if (runStart <= rank[r] && rank[r] < runEnd) {
          holder[r] = lane;
          holderStart[r] = runStart;
        }
    }
    __syncthreads();
    for (int r = same ? 0 : h; r <= (same ? 1 : h); ++r) {
      if (warp != holder[r]) continue;
      const uint32_t end = holderStart[r] + warpInclusiveSum(both), begin = end - both;
      if (begin <= rank[r] && rank[r] < end) {
        const bool inFirst = rank[r] < begin + first;
        sel.prefix[r] += uint32_t(warp * kRun + 2 * lane + (inFirst ? 0 : 1)) << shift;
        sel.rank[r] = rank[r] - (inFirst ? begin : begin + first);
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) s.same = (sel.prefix[0] >> shift) == (sel.prefix[1] >> shift);
  __syncthreads();
}

__device__ void clearHistogram(uint32_t (&hist)[kBins]) {
  for (int i = threadIdx.x; i < kBins; i += blockDim.x) hist[i] = 0;
  __syncthreads();
}

__device__ void clearHistograms(uint32_t (&hist)[2][kBins]) {
  for (int i = threadIdx.x; i < 2 * kBins; i += blockDim.x) (&hist[0][0])[i] = 0;
  __syncthreads();
}

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
  uint32_t uncounted = 0;
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
// many, from counts over the whole share); else from counts over the whole share.
__device__ void selectMedian(ResidentWorkspace* ws, const ResidentBuffers& buffers,
                             const float* mine, int len, float* list, FloatBounds bounds,
                             ResidentState& s, uint32_t (&hist)[2][kBins], BinPair windowPair) {
  const Window w = s.window;
  if (!s.hit) {
    selectRest(ws, mine, len, bounds, s, hist, 32);
    return;
  }
  pickBin(&phaseSet(ws, s.phase - 1).histogram[0][0], w.binShift, s, windowPair);
  unsigned gathered, firstCount;
  if (w.keep && s.total.mostInWindow <= kResidentCandidates &&
      gatherBins(ws, buffers, s, list, gathered, firstCount))
    selectGathered(list, gathered, firstCount, s);
  else if (!w.keep && s.same)
    selectInBin(ws, buffers, mine, len, list, bounds, s, hist);
  else
    selectRest(ws, mine, len, bounds, s, hist, w.binShift);
}

// The window of the next evaluation: around this median, as wide as four times its last move
// (within kLeastHalfBits and kMostHalfBits), narrower after a window that held too many values.
__device__ Window nextWindow(ResidentState& s) {
  const uint32_t key = s.selection.prefix[0];
  int halfBits = kFirstHalfBits;
  if (s.haveMedian) {
    const long long move =
        key > s.medianKey ? (long long)(key - s.medianKey) : (long long)(s.medianKey - key);
    halfBits = kLeastHalfBits;
    while (halfBits < kMostHalfBits && (1ll << halfBits) < 4 * move) ++halfBits;
    if (s.window.keep && s.total.mostInWindow > kResidentCandidates)
      halfBits = min(halfBits, max(kLeastHalfBits, s.halfBits - 4));
  }
  s.halfBits = halfBits;
  s.haveMedian = true;
  s.medianKey = key;
  const long long width = 2ll << halfBits;
  const long long bin = width >> kWindowBinBits;
  long long low = max(0ll, (long long)key - width / 2) / bin * bin;
  low = min(low, (1ll << 32) - width);
  // Not at the key of +0, where -0 (the key before) would be below in key but not in value.
  if (low == 0x80000000ll) low -= bin;
  return Window{uint32_t(low), uint32_t(width - 1), halfBits + 1 - kWindowBinBits, true};
}

// The statistics of the sums (as finishStats), into s.result; run by one thread.
__device__ void momentStats(ResidentState& s) {
  StatsResult r{};
  r.n = static_cast<long long>(s.total.count);
  if (r.n > 0) {
    const double n = double(s.total.count);
    r.mean = s.total.sum / n;
    const double var = s.total.sumSquares / n - r.mean * r.mean;
    r.std = var > 0 ? sqrt(var) : 0.0;
    r.min = keyToFloat(s.total.minKey);
    r.max = keyToFloat(s.total.maxKey);
  }
  s.result = r;
}

// The median from the selected keys (as finishStats), the next window, then astropy's step.
__device__ void finishEvaluation(ResidentState& s) {
  __syncthreads();  // momentStats has written s.result
  if (threadIdx.x == 0) {
    StatsResult r = s.result;
    if (r.n > 0) {
      r.median = 0.5 * (double(keyToFloat(s.selection.prefix[0])) +
                        double(keyToFloat(s.selection.prefix[1])));
      s.window = nextWindow(s);
    }
    s.kept = 0;
    s.overflow = false;
    advance(s.control, r);
  }
  __syncthreads();
}

// The block's share of values[0, n) into shared memory: 16-byte loads where the share is
// aligned for them (every share starts at a multiple of 4 values).
__device__ void loadShare(const float* __restrict__ values, long long begin, int len, float* mine) {
  const float* from = values + begin;
  int head = 0;
  if (reinterpret_cast<uintptr_t>(from) % 16 == 0) {
    head = len / 4 * 4;
    const float4* quads = reinterpret_cast<const float4*>(from);
    float4* to = reinterpret_cast<float4*>(mine);
    for (int q = threadIdx.x; q < head / 4; q += blockDim.x) to[q] = quads[q];
  }
  for (int i = head + threadIdx.x; i < len; i += blockDim.x) mine[i] = from[i];
}

// The whole clipping loop over values[0, n). Launched cooperatively, one block per SM (at most
// kMostResidentBlocks blocks), with residentSharedFloats(n, grid) floats of dynamic shared memory.
__host__ __device__ constexpr long long residentShare(long long n, long long grid) {
  return (n + 4 * grid - 1) / (4 * grid) * 4;
}
__host__ __device__ constexpr long long residentSharedFloats(long long n, long long grid) {
  return residentShare(n, grid) + kResidentCandidates;
}
__global__ void __launch_bounds__(kResidentThreads, 1)
    clipResident(const float* __restrict__ values, long long n, ResidentWorkspace* ws,
                 ResidentBuffers buffers, Control control) {
  extern __shared__ float4 dynamicShared[];
  float* mine = reinterpret_cast<float*>(dynamicShared);
  __shared__ uint32_t hist[2][kBins];
  __shared__ ResidentState s;
  const long long share = residentShare(n, gridDim.x);
  const long long begin = min(n, blockIdx.x * share);
  const int len = int(min(n, begin + share) - begin);
  float* list = mine + share;
  loadShare(values, begin, len, mine);
  if (threadIdx.x == 0) {
    s.control = control;
    s.phase = ws->phase;
    s.window = Window{0u, 0xffffffffu, 32 - kBinBits, false};  // every key: the first digit
    s.haveMedian = false;
    s.medianKey = 0;
    s.halfBits = kFirstHalfBits;
    s.kept = 0;
    s.overflow = false;
  }
  __syncthreads();
  while (!s.control.done) {
    const FloatBounds bounds = floatBounds(s.control);
    clearHistogram(hist[0]);  // hist[1] is the window's cursors: set before they are read
    countMoments(mine, len, bounds, s, hist[0], list, buffers.slots);
    publishWindow(ws, buffers, s, hist[0], hist[1], list);
    endPhase(ws, s, hist, 0);
    // The summed window histogram's loads go out with the slots'.
    const BinPair windowPair = loadBinPair(&phaseSet(ws, s.phase - 1).histogram[0][0]);
    addSlots(buffers.slots, s, reinterpret_cast<BlockSums*>(list));
    // One thread of the last warp, while the others start on the median (their first loads
    // wait for the memory anyway).
    if (threadIdx.x == kResidentThreads - 1) momentStats(s);
    // The same in every block: all take the same barriers.
    if (s.total.count > 0) selectMedian(ws, buffers, mine, len, list, bounds, s, hist, windowPair);
    finishEvaluation(s);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ws->control = s.control;
    ws->phase = s.phase % 3;
  }
}

}  // namespace
}  // namespace stacklens::compute::cuda
