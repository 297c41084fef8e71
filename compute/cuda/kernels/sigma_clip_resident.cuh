// Sigma clipping of values that fit in the GPU's shared memory (compute/cuda/cuda_statistics.cu):
// one cooperative kernel runs astropy's whole loop. Each block copies its share of the values
// into shared memory once; every evaluation then counts them there and the blocks meet at a
// grid-wide barrier after each count. Every block reads the same summed counts and so takes the
// same decisions (digits, statistics, next bounds, done) itself: nothing waits for the host or
// for another launch.
//
// An evaluation counts the moments and the first radix digit of the median's two middle ranks,
// then two more digits, each count summed across the blocks at a barrier. The median's first
// digit rarely changes between evaluations, so the first count also keeps, in each block, the
// values whose first digit is the last median's: when the new first digit is that one again, the
// later counts read only those few values, not the whole share. The selection and the
// statistics are those of kernels/statistics.cuh, whose helpers this uses. Launch shape and
// sizes: tuning/statistics.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/statistics.cuh"
#include "compute/cuda/tuning/statistics.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr int kResidentThreads = tuning::SigmaClipPolicy::residentThreads;
constexpr int kResidentCandidates = tuning::SigmaClipPolicy::residentCandidates;

// One block's moments of the kept values.
struct BlockSums {
  unsigned long long count;
  double sum, sumSquares;
  uint32_t minKey, maxKey;
};
struct AddBlockSums {
  __device__ BlockSums operator()(const BlockSums& a, const BlockSums& b) const {
    return {a.count + b.count, a.sum + b.sum, a.sumSquares + b.sumSquares, min(a.minKey, b.minKey),
            max(a.maxKey, b.maxKey)};
  }
};
constexpr BlockSums kNoSums{0, 0.0, 0.0, 0xffffffffu, 0u};

// What one count phase adds up across the blocks: the digit histograms, one per middle rank.
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

// The kernel's state in each block's shared memory.
struct ResidentState {
  Control control;
  Selection selection;
  BlockSums total;
  bool same;       // both middle ranks still share their digits so far: one histogram
  bool haveGuess;  // the last evaluation's median gave a first digit to guess
  uint32_t guess;
  unsigned binCount;  // the block's kept values in the guessed bin (kept up to the buffer's room)
  int phase;          // grid-wide barriers passed, selecting the phase set
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

// The digit (pass Pass) of each middle rank from the histograms summed at `sums`: each warp takes a
// run of kBins / warps bins, two a lane, and sums it; warp 0 scans the runs' sums to find the run
// holding each rank, and the warp that holds that run scans its lanes' pairs to find the bin.
// Counts fit 32 bits: the values selected among fit in the SMs' shared memory. Then every thread
// sees the new selection.
template <int Pass>
__device__ void pickDigit(const uint32_t* sums, ResidentState& s) {
  constexpr int kWarps = kResidentThreads / 32, kRun = kBins / kWarps;
  static_assert(kRun == 2 * 32, "each lane takes two bins of its warp's run");
  __shared__ uint32_t runSums[kWarps];
  __shared__ int holder[2];
  __shared__ uint32_t holderStart[2];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  Selection& sel = s.selection;
  const bool same = s.same;
  for (int h = 0; h < (same ? 1 : 2); ++h) {
    const uint32_t* pair = sums + h * kBins + warp * kRun + 2 * lane;
    const uint32_t first = __ldcg(pair), both = first + __ldcg(pair + 1);
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
        sel.prefix[r] |= uint32_t(warp * kRun + 2 * lane + (inFirst ? 0 : 1)) << digitShift(Pass);
        sel.rank[r] = rank[r] - (inFirst ? begin : begin + first);
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0 && Pass < 2)
    s.same = (sel.prefix[0] >> digitShift(Pass)) == (sel.prefix[1] >> digitShift(Pass));
  __syncthreads();
}

__device__ void clearHistograms(uint32_t (&hist)[2][kBins]) {
  for (int i = threadIdx.x; i < 2 * kBins; i += blockDim.x) (&hist[0][0])[i] = 0;
  __syncthreads();
}

// Counts the digit of pass Pass (1 or 2) of the kept values among values[0, len) that share
// each rank's prefix, into the block's histograms.
template <int Pass>
__device__ void countDigit(const float* values, int len, FloatBounds bounds, const ResidentState& s,
                           uint32_t (&hist)[2][kBins]) {
  constexpr int matchShift = digitShift(Pass - 1), shift = digitShift(Pass);
  constexpr uint32_t mask = (1u << digitBits(Pass)) - 1;
  const uint32_t prefix0 = s.selection.prefix[0] >> matchShift,
                 prefix1 = s.selection.prefix[1] >> matchShift;
  const bool same = s.same;
  for (int i = threadIdx.x; i < len; i += blockDim.x) {
    const float v = values[i];
    if (!inBounds(v, bounds)) continue;
    const uint32_t key = orderedKey(v), high = key >> matchShift, digit = (key >> shift) & mask;
    if (high == prefix0) atomicAdd(&hist[0][digit], 1u);
    if (!same && high == prefix1) atomicAdd(&hist[1][digit], 1u);
  }
  __syncthreads();
}

// The moments of the kept values and their first digits, over the block's share; with a guess,
// the kept values of the guessed bin are also copied to `bin` (up to kResidentCandidates). The
// block's sums go to its slot; after the barrier every block adds all slots in one order.
__device__ void countMoments(const float* mine, int len, FloatBounds bounds, ResidentState& s,
                             uint32_t (&hist)[2][kBins], float* bin, BlockSums* slots) {
  using Reduce = cub::BlockReduce<BlockSums, kResidentThreads>;
  __shared__ typename Reduce::TempStorage temp;
  constexpr uint32_t mask = (1u << digitBits(0)) - 1;
  const bool haveGuess = s.haveGuess;
  const uint32_t guess = s.guess;
  BlockSums own = kNoSums;
  for (int i = threadIdx.x; i < len; i += blockDim.x) {
    const float v = mine[i];
    if (!inBounds(v, bounds)) continue;
    const uint32_t key = orderedKey(v), digit = (key >> digitShift(0)) & mask;
    atomicAdd(&hist[0][digit], 1u);
    ++own.count;
    own.sum += v;
    own.sumSquares += double(v) * v;
    own.minKey = min(own.minKey, key);
    own.maxKey = max(own.maxKey, key);
    if (haveGuess && digit == guess) {  // few values: one shared atomic each
      const unsigned at = atomicAdd(&s.binCount, 1u);
      if (at < kResidentCandidates) bin[at] = v;
    }
  }
  const BlockSums block = Reduce(temp).Reduce(own, AddBlockSums{});
  if (threadIdx.x == 0) slots[(s.phase % 3) * gridDim.x + blockIdx.x] = block;
}

// Every block's slot of the last phase added in one order (so every block gets the same sums), by
// one warp while the others wait, and the ranks.
__device__ void addSlots(const BlockSums* allSlots, ResidentState& s) {
  if (threadIdx.x < 32) {
    const BlockSums* slots = allSlots + ((s.phase - 1) % 3) * gridDim.x;
    BlockSums own = kNoSums;
    for (int b = threadIdx.x; b < int(gridDim.x); b += 32) {
      const BlockSums* slot = slots + b;
      own = AddBlockSums{}(
          own, BlockSums{__ldcg(&slot->count), __ldcg(&slot->sum), __ldcg(&slot->sumSquares),
                         __ldcg(&slot->minKey), __ldcg(&slot->maxKey)});
    }
    for (int offset = 16; offset > 0; offset /= 2)
      own = AddBlockSums{}(own, BlockSums{__shfl_down_sync(0xffffffffu, own.count, offset),
                                          __shfl_down_sync(0xffffffffu, own.sum, offset),
                                          __shfl_down_sync(0xffffffffu, own.sumSquares, offset),
                                          __shfl_down_sync(0xffffffffu, own.minKey, offset),
                                          __shfl_down_sync(0xffffffffu, own.maxKey, offset)});
    if (threadIdx.x == 0) {
      s.total = own;
      const unsigned long long n = own.count;
      s.selection.rank[0] = n > 0 ? (n - 1) / 2 : 0;
      s.selection.rank[1] = n / 2;
      s.selection.prefix[0] = s.selection.prefix[1] = 0;
      s.same = true;
    }
  }
  __syncthreads();
}

// The median's three digits: the first from the summed histograms of the moments count, then two
// more counts, each summed across the blocks. Those counts need only values with the first digit
// found: when that is the guessed one and the block kept all of its values, just those.
__device__ void selectMedian(ResidentWorkspace* ws, const float* mine, int len, const float* bin,
                             FloatBounds bounds, ResidentState& s, uint32_t (&hist)[2][kBins]) {
  pickDigit<0>(&phaseSet(ws, s.phase - 1).histogram[0][0], s);
  const uint32_t first0 = s.selection.prefix[0] >> digitShift(0),
                 first1 = s.selection.prefix[1] >> digitShift(0);
  if (s.haveGuess && first0 == s.guess && first1 == s.guess && s.binCount <= kResidentCandidates) {
    mine = bin;
    len = int(s.binCount);
  }
  clearHistograms(hist);
  countDigit<1>(mine, len, bounds, s, hist);
  endPhase(ws, s, hist, s.same ? 1 : 2);
  pickDigit<1>(&phaseSet(ws, s.phase - 1).histogram[0][0], s);
  clearHistograms(hist);
  countDigit<2>(mine, len, bounds, s, hist);
  endPhase(ws, s, hist, s.same ? 1 : 2);
  pickDigit<2>(&phaseSet(ws, s.phase - 1).histogram[0][0], s);
}

// The statistics from the sums and the selected keys (as finishStats), the next guess, then
// astropy's step.
__device__ void finishEvaluation(ResidentState& s) {
  if (threadIdx.x == 0) {
    StatsResult r{};
    r.n = static_cast<long long>(s.total.count);
    if (r.n > 0) {
      const double n = double(s.total.count);
      r.mean = s.total.sum / n;
      const double var = s.total.sumSquares / n - r.mean * r.mean;
      r.std = var > 0 ? sqrt(var) : 0.0;
      r.median = 0.5 * (double(keyToFloat(s.selection.prefix[0])) +
                        double(keyToFloat(s.selection.prefix[1])));
      r.min = keyToFloat(s.total.minKey);
      r.max = keyToFloat(s.total.maxKey);
    }
    s.guess = s.selection.prefix[1] >> digitShift(0);
    s.haveGuess = r.n > 0;
    s.binCount = 0;
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

// The whole clipping loop over values[0, n). Launched cooperatively, one block per SM, with
// residentSharedFloats(n, grid) floats of dynamic shared memory; slots holds 3 × grid BlockSums
// (a set per phase, rotating as the phase sets do: a block writes the next phase's while others
// may still read the last's).
__host__ __device__ constexpr long long residentShare(long long n, long long grid) {
  return (n + 4 * grid - 1) / (4 * grid) * 4;
}
__host__ __device__ constexpr long long residentSharedFloats(long long n, long long grid) {
  return residentShare(n, grid) + kResidentCandidates;
}
__global__ void __launch_bounds__(kResidentThreads, 1)
    clipResident(const float* __restrict__ values, long long n, ResidentWorkspace* ws,
                 BlockSums* slots, Control control) {
  extern __shared__ float4 dynamicShared[];
  float* mine = reinterpret_cast<float*>(dynamicShared);
  __shared__ uint32_t hist[2][kBins];
  __shared__ ResidentState s;
  const long long share = residentShare(n, gridDim.x);
  const long long begin = min(n, blockIdx.x * share);
  const int len = int(min(n, begin + share) - begin);
  float* guessedBin = mine + share;
  loadShare(values, begin, len, mine);
  if (threadIdx.x == 0) {
    s.control = control;
    s.phase = ws->phase;
    s.haveGuess = false;
    s.guess = 0;
    s.binCount = 0;
  }
  __syncthreads();
  while (!s.control.done) {
    const FloatBounds bounds = floatBounds(s.control);
    clearHistograms(hist);
    countMoments(mine, len, bounds, s, hist, guessedBin, slots);
    endPhase(ws, s, hist, 1);
    addSlots(slots, s);
    // The same in every block: all take the same barriers.
    if (s.total.count > 0) selectMedian(ws, mine, len, guessedBin, bounds, s, hist);
    finishEvaluation(s);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ws->control = s.control;
    ws->phase = s.phase % 3;
  }
}

}  // namespace
}  // namespace stacklens::compute::cuda
