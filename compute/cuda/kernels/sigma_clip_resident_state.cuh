// What the on-chip sigma clip (kernels/sigma_clip_resident.cuh) keeps and shares: its constants,
// each block's state in shared memory, the workspace the blocks share in global memory, the
// phases that add the blocks' histograms together at a grid barrier, and the reading of such a
// summed histogram: the bin of each middle rank. (For compute/cuda/*.cu only.)
#pragma once

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
  // The grid barrier's counter (gridSyncToNextPhase): its top bit flips as the last block
  // arrives, and the rest comes back to where it was, so it carries over from launch to launch.
  unsigned barrier;
  // The last run's first evaluation's lower middle key: this run's first window is around it,
  // 2^(firstHalfBits + 1) keys wide (four times that key's last move between runs).
  uint32_t firstMedianKey;
  int haveFirstMedian, firstHalfBits;
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
// The most blocks the kernel can take: addSlots stages their sums in the room of a block's
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
  uint32_t firstKey;                       // the first evaluation's lower middle key
  int halfBits;                            // the last window's half-width (log2 keys)
  unsigned kept;                           // the block's window values
  bool overflow;                           // a warp found more than its room in the list
  uint32_t listed[kResidentThreads / 32];  // each warp's window values
  // The summed window histogram's runs (each warp's kBins / warps bins) and the middle ranks
  // within the window, as addSlots leaves them for pickWindowBin.
  uint32_t runSums[kResidentThreads / 32];
  unsigned long long windowRank[2];
  int phase;  // grid-wide barriers passed, selecting the phase set
};

__device__ inline PhaseSet& phaseSet(ResidentWorkspace* ws, int phase) {
  return ws->sets[phase % 3];
}

// The grid-wide barrier as cooperative groups' (one thread of each block arrives with a release
// add and polls with acquire loads), which also moves the block to the next phase between the
// block's barriers around it. Block 0 adds 2^31 - (blocks - 1), the others 1: the counter's top
// bit flips once all have arrived.
__device__ void gridSyncToNextPhase(ResidentWorkspace* ws, ResidentState& s) {
  __syncthreads();
  if (threadIdx.x == 0) {
    ++s.phase;
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
    unsigned arrived, now;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;"
                 : "=r"(arrived)
                 : "l"(&ws->barrier), "r"(add)
                 : "memory");
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(&ws->barrier) : "memory");
    } while (((arrived ^ now) & 0x80000000u) == 0);
  }
  __syncthreads();
}

// Adds the block's histograms into the phase's set, clears the set after it (block 0), and waits
// for every block.
__device__ void endPhase(ResidentWorkspace* ws, ResidentState& s, uint32_t (&hist)[2][kBins],
                         int histograms) {
  const int phase = s.phase;
  if (histograms > 0) {
    __syncthreads();  // the histograms are complete
    uint32_t* set = &phaseSet(ws, phase).histogram[0][0];
    for (int h = 0; h < histograms; ++h)
      for (int i = threadIdx.x; i < kBins; i += blockDim.x)
        if (hist[h][i]) atomicAdd(&set[h * kBins + i], hist[h][i]);
  }
  if (blockIdx.x == 0) {
    PhaseSet& next = phaseSet(ws, phase + 1);
    for (int i = threadIdx.x; i < 2 * kBins; i += blockDim.x) (&next.histogram[0][0])[i] = 0;
  }
  gridSyncToNextPhase(ws, s);
}

// Inclusive sum over the warp's lanes.
__device__ inline uint32_t warpInclusiveSum(uint32_t v) {
  for (int offset = 1; offset < 32; offset *= 2) {
    const uint32_t up = __shfl_up_sync(0xffffffffu, v, offset);
    if (int(threadIdx.x % 32) >= offset) v += up;
  }
  return v;
}

// A thread's two bins of a summed histogram in pickBin: loaded apart, so that the load can go out
// with others; one 8-byte load, as every block reads the histogram at once.
struct BinPair {
  uint32_t first, both;
};
__device__ inline BinPair loadBinPair(const uint32_t* hist) {
  static_assert(kBins == 2 * kResidentThreads, "two bins a thread");
  const uint2 pair = __ldcg(reinterpret_cast<const uint2*>(hist) + threadIdx.x);
  return {pair.x, pair.x + pair.y};
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

// The bin of each middle rank in the summed window histogram, as pickBin for both ranks in one
// histogram, with one barrier of the block: addSlots has left the runs' sums and the ranks, so
// every warp scans the runs itself and the warp whose run holds a rank scans its lanes' pairs.
__device__ void pickWindowBin(int shift, ResidentState& s, BinPair pair) {
  constexpr int kWarps = kResidentThreads / 32, kRun = kBins / kWarps;
  static_assert(kWarps == 32, "a lane for each warp's run");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t runEnd = warpInclusiveSum(s.runSums[lane]), runStart = runEnd - s.runSums[lane];
  for (int r = 0; r < 2; ++r) {
    const unsigned long long rank = s.windowRank[r];
    const unsigned holders = __ballot_sync(0xffffffffu, runStart <= rank && rank < runEnd);
    if (holders == 0 || warp != __ffs(holders) - 1) continue;
    const uint32_t end = __shfl_sync(0xffffffffu, runStart, warp) + warpInclusiveSum(pair.both),
                   begin = end - pair.both;
    if (begin <= rank && rank < end) {
      const bool inFirst = rank < begin + pair.first;
      s.selection.prefix[r] += uint32_t(warp * kRun + 2 * lane + (inFirst ? 0 : 1)) << shift;
      s.selection.rank[r] = rank - (inFirst ? begin : begin + pair.first);
    }
  }
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

}  // namespace
}  // namespace stacklens::compute::cuda
