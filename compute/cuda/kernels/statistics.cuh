// The sigma-clipped statistics' kernels (compute/cuda/cuda_statistics.cu) and the device state
// they share with the host: each evaluation is the moments pass (count, sum, sum of squares, min,
// max) fused with the first digit of an exact radix selection of the median's two middle ranks,
// then two more digit passes; the last block of each pass finishes it on the device (picks the
// digit, and after the last one the statistics and the next bounds, astropy's sigma_clip loop),
// so the host reads the state back once, at the end. Launch shapes and buffer sizes:
// tuning/statistics.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/tuning/statistics.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr int kThreads = tuning::SigmaClipPolicy::threads;
constexpr int kBins = 2048;  // 11-bit digits: bits 31..21, 20..10, then 10 bits 9..0
constexpr int kCandidates = tuning::SigmaClipPolicy::candidates;
constexpr int kBlockCandidates = tuning::SigmaClipPolicy::blockCandidates;
static_assert(kBins % kThreads == 0, "chooseDigit scans kBins / kThreads bins a thread");
__host__ __device__ constexpr int digitShift(int pass) {
  return pass == 0 ? 21 : pass == 1 ? 10 : 0;
}
__host__ __device__ constexpr int digitBits(int pass) { return pass == 2 ? 10 : 11; }

struct Moments {
  unsigned long long count;
  double sum, sumSquares;
  uint32_t minKey, maxKey;
};

// Two order statistics found at once: rank[0] = (n−1)/2 and rank[1] = n/2 (equal for odd n).
struct Selection {
  uint32_t prefix[2];
  unsigned long long rank[2];  // rank still to find among values sharing the prefix
};

struct StatsResult {
  long long n;
  double mean, std, median, min, max;
};

// The clipping loop's state, kept on the device so that iterations need no host round trip: the
// last block of each evaluation's final pass advances it (advance()) and sets the graph loop's
// condition; the host reads it back once the loop has ended.
struct Control {
  int done, iterations, haveAll, maxIterations;
  int matchAny;  // how the histograms are counted (addToBin)
  double lower, upper, kappaLower, kappaUpper;
  StatsResult all, current;
};

struct Workspace {
  // The call's input: the values (16-byte aligned) and their count; and room for the candidates
  // below. Kept here so that one graph serves every call.
  const float* values;
  long long count;
  float* candidates;
  Control control;
  unsigned blocksDone;  // blocks of the running pass that have finished
  // The median's top digit rarely changes between iterations: the first pass guesses it (the last
  // call's) and only counts the values below it and in it; a full first-digit histogram runs only
  // when the guess misses.
  int haveGuess, needFull;
  uint32_t guessDigit;
  unsigned long long below, inBin;
  // The guessed bin's values, appended by the moments pass (up to kCandidates): when the guess
  // hits, the two later digit passes read only them (fromCandidates), not the whole data.
  unsigned long long candidateCount;
  int fromCandidates;
  Moments moments;
  Selection selection;
  uint32_t histogram[2][kBins];
};

// True in every thread of the last block of the grid to get here; the fences publish every
// block's atomics to it. The pass that ends resets *blocksDone.
__device__ inline bool lastBlockToFinish(unsigned* blocksDone) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(blocksDone, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last) __threadfence();
  return last;
}

// The bounds as the floats [lo, hi] that hold exactly the floats inside them (lower rounded up,
// upper down), so that testing a value needs no conversion to double.
struct FloatBounds {
  float lo, hi;
};
__device__ inline FloatBounds floatBounds(const Control& c) {
  return {__double2float_ru(c.lower), __double2float_rd(c.upper)};
}
// Kept: finite and inside the bounds (the first evaluation's bounds are infinite).
__device__ inline bool inBounds(float v, FloatBounds b) {
  return isfinite(v) && v >= b.lo && v <= b.hi;
}

// One shared atomic per value (the default, tuning::SigmaClipPolicy::matchAnyBinning), or with
// matchAny the lanes with the same bin add together first (STACKLENS_CLIP_BINNING=match, kept to
// compare the two).
__device__ inline void addToBin(uint32_t* hist, bool valid, uint32_t digit, bool matchAny) {
  if (!matchAny) {
    if (valid) atomicAdd(&hist[digit], 1u);
    return;
  }
  uint32_t tag = valid ? digit : 0xffffffffu;
  unsigned peers = __match_any_sync(0xffffffffu, tag);
  if (valid && int(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&hist[digit], __popc(peers));
}

// The last block of a pass (found by a counter) finishes it: it picks the digit whose bin holds
// each rank, narrows the prefixes, and clears the histograms for the next pass; after the last
// digit it also turns the sums into the statistics. This saves a launch per step.
template <int Pass>
__device__ void chooseDigit(Workspace* ws) {
  constexpr int kItems = kBins / kThreads;
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ bool same;
  Selection& sel = ws->selection;
  if (threadIdx.x == 0) {
    if (Pass == 0) {
      unsigned long long n = __ldcg(&ws->moments.count);
      sel.rank[0] = n > 0 ? (n - 1) / 2 : 0;
      sel.rank[1] = n / 2;
      sel.prefix[0] = sel.prefix[1] = 0;
    }
    constexpr int matchShift = Pass == 0 ? 0 : digitShift(Pass - 1);
    same = Pass == 0 || (sel.prefix[0] >> matchShift) == (sel.prefix[1] >> matchShift);
  }
  __syncthreads();
  // Both ranks in one histogram (they share the prefix so far): one scan places both.
  for (int s = 0; s < (same ? 1 : 2); ++s) {
    const uint32_t* hist = ws->histogram[s];
    const unsigned long long rank[2] = {sel.rank[0], sel.rank[1]};  // read before any update
    unsigned long long items[kItems], inclusive[kItems];
    for (int k = 0; k < kItems; ++k) items[k] = __ldcg(&hist[threadIdx.x * kItems + k]);
    Scan(temp).InclusiveSum(items, inclusive);
    __syncthreads();
    for (int r = same ? 0 : s; r <= (same ? 1 : s); ++r)
      for (int k = 0; k < kItems; ++k) {
        unsigned long long before = inclusive[k] - items[k];
        if (items[k] > 0 && before <= rank[r] && rank[r] < inclusive[k]) {
          uint32_t digit = threadIdx.x * kItems + k;
          sel.prefix[r] |= digit << digitShift(Pass);
          sel.rank[r] = rank[r] - before;
        }
      }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < 2 * kBins; i += blockDim.x) (&ws->histogram[0][0])[i] = 0;
}

// After the last digit: the statistics of the set, and empty sums for the next call.
// The host loop of sigmaClipValues (as astropy), run on the device between evaluations: takes the
// statistics just computed and either sets the next bounds or marks the loop done.
__device__ void advance(Control& c, const StatsResult& r) {
  if (!c.haveAll) {
    c.haveAll = 1;
    c.all = r;
    c.current = r;
  } else {
    const bool changed = r.n != c.current.n;
    c.current = r;
    if (!changed) {
      c.done = 1;
      return;
    }
  }
  for (;;) {
    if (c.maxIterations > 0 && c.iterations >= c.maxIterations) {
      c.done = 1;
      return;
    }
    ++c.iterations;
    if (c.current.n == 0) {
      c.done = 1;
      return;
    }
    c.lower = fmax(c.lower, c.current.median - c.kappaLower * c.current.std);
    c.upper = fmin(c.upper, c.current.median + c.kappaUpper * c.current.std);
    if (c.lower <= c.upper) return;  // the next evaluation runs with these bounds
    c.current = StatsResult{};       // nothing can be kept: an empty set (which changed)
  }
}

// Run by one thread: every input is read before anything is written, so that the loads go out
// together rather than one L2 round trip after each store.
__device__ void finishStats(Workspace* ws) {
  Moments& m = ws->moments;
  const unsigned long long count = __ldcg(&m.count);
  const double sum = __ldcg(&m.sum), sumSquares = __ldcg(&m.sumSquares);
  const uint32_t minKey = __ldcg(&m.minKey), maxKey = __ldcg(&m.maxKey);
  const uint32_t prefix0 = ws->selection.prefix[0], prefix1 = ws->selection.prefix[1];
  Control control = ws->control;
  StatsResult r{};
  r.n = static_cast<long long>(count);
  if (count > 0) {
    double n = double(count);
    r.mean = sum / n;
    double var = sumSquares / n - r.mean * r.mean;
    r.std = var > 0 ? sqrt(var) : 0.0;
    r.median = 0.5 * (double(keyToFloat(prefix0)) + double(keyToFloat(prefix1)));
    r.min = keyToFloat(minKey);
    r.max = keyToFloat(maxKey);
  }
  ws->guessDigit = prefix1 >> digitShift(0);
  ws->haveGuess = count > 0;
  m.count = 0;
  m.sum = m.sumSquares = 0;
  m.minKey = 0xffffffffu;
  m.maxKey = 0;
  advance(control, r);
  ws->control = control;
}

// A block's share of the moments pass, reduced in one go.
struct BlockMoments {
  unsigned long long count, below, inBin;
  double sum, sumSquares;
  uint32_t minKey, maxKey;
};
struct CombineMoments {
  __device__ BlockMoments operator()(const BlockMoments& a, const BlockMoments& b) const {
    return {a.count + b.count,      a.below + b.below,           a.inBin + b.inBin,
            a.sum + b.sum,          a.sumSquares + b.sumSquares, min(a.minKey, b.minKey),
            max(a.maxKey, b.maxKey)};
  }
};

// Calls visit(value, valid) for every value, warp-synchronously (whole warps go round together,
// as the bins are counted with warp-aggregated atomics), with two 16-byte loads in flight per
// thread: a pass is bandwidth-bound, not latency-bound. values must be 16-byte aligned.
template <class Visit>
__device__ inline void forEachValue(const float* __restrict__ values, int64_t n, Visit visit) {
  const float4* quads = reinterpret_cast<const float4*>(values);
  const int64_t nq = n / 4;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t base = int64_t(blockIdx.x) * blockDim.x; base < nq; base += 2 * stride) {
    const int64_t q0 = base + threadIdx.x, q1 = q0 + stride;
    const bool ok0 = q0 < nq, ok1 = q1 < nq;
    const float4 a = ok0 ? quads[q0] : make_float4(0.f, 0.f, 0.f, 0.f);
    const float4 b = ok1 ? quads[q1] : make_float4(0.f, 0.f, 0.f, 0.f);
    visit(a.x, ok0);
    visit(a.y, ok0);
    visit(a.z, ok0);
    visit(a.w, ok0);
    if (__any_sync(0xffffffffu, ok1)) {
      visit(b.x, ok1);
      visit(b.y, ok1);
      visit(b.z, ok1);
      visit(b.w, ok1);
    }
  }
  if (blockIdx.x == 0 && threadIdx.x < 32) {  // the last n % 4 values: one warp
    const int64_t i = 4 * nq + threadIdx.x;
    const bool ok = i < n;
    visit(ok ? values[i] : 0.f, ok);
  }
}

template <int Pass>
__global__ void __launch_bounds__(kThreads)
    countPass(Workspace* ws, cudaGraphConditionalHandle loop) {
  const bool matchAny = ws->control.matchAny;
  float* __restrict__ candidates = ws->candidates;
  // After a hit of the guess the last two digits come from the guessed bin's values alone.
  const bool fromCandidates = Pass > 0 && ws->fromCandidates;
  const float* __restrict__ values = fromCandidates ? candidates : ws->values;
  const int64_t n = fromCandidates ? static_cast<int64_t>(ws->candidateCount) : ws->count;
  const FloatBounds bounds = floatBounds(ws->control);
  __shared__ uint32_t hist[2][kBins];
  for (int i = threadIdx.x; i < 2 * kBins; i += blockDim.x) (&hist[0][0])[i] = 0;
  // The guessed bin's values this block finds, gathered here first: appending each warp's
  // straight to the global list made every warp with one wait on the same counter.
  __shared__ float blockCandidates[kBlockCandidates];
  __shared__ unsigned blockCandidateCount;
  if (threadIdx.x == 0) blockCandidateCount = 0;
  __syncthreads();
  constexpr int shift = digitShift(Pass);
  constexpr int matchShift = Pass == 0 ? 0 : digitShift(Pass - 1);
  uint32_t prefix0 = 0, prefix1 = 0;
  bool same = true;
  if constexpr (Pass > 0) {
    prefix0 = ws->selection.prefix[0] >> matchShift;
    prefix1 = ws->selection.prefix[1] >> matchShift;
    same = prefix0 == prefix1;
  }
  constexpr uint32_t digitMask = (1u << digitBits(Pass)) - 1;
  bool useGuess = false;
  uint32_t guess = 0;
  if constexpr (Pass == 0) {
    useGuess = ws->haveGuess;
    guess = ws->guessDigit;
  }
  // Per-thread counts fit 32 bits (a thread sees n / (grid · 512) values).
  unsigned below = 0, inBin = 0, count = 0;
  double sum = 0, sumSquares = 0;
  uint32_t minKey = 0xffffffffu, maxKey = 0;
  forEachValue(values, n, [&](float v, bool ok) {
    const bool valid = ok && inBounds(v, bounds);
    const uint32_t key = orderedKey(v);
    uint32_t digit = (key >> shift) & digitMask;
    if constexpr (Pass == 0) {
      if (useGuess) {
        below += valid && digit < guess;
        const bool mine = valid && digit == guess;
        inBin += mine;
        // Warp-aggregated append of the bin's values to the block's list; beyond its room,
        // straight to the global list (dropped beyond that one's: then a miss).
        const unsigned lanes = __ballot_sync(0xffffffffu, mine);
        if (lanes) {
          const int lane = threadIdx.x & 31, leader = __ffs(lanes) - 1;
          unsigned base = 0;
          if (lane == leader) base = atomicAdd(&blockCandidateCount, unsigned(__popc(lanes)));
          base = __shfl_sync(0xffffffffu, base, leader);
          const unsigned at = base + __popc(lanes & ((1u << lane) - 1));
          if (mine && at < kBlockCandidates) {
            blockCandidates[at] = v;
          } else if (mine) {
            const unsigned long long g = atomicAdd(&ws->candidateCount, 1ull);
            if (g < kCandidates) candidates[g] = v;
          }
        }
      } else {
        addToBin(hist[0], valid, digit, matchAny);
      }
      if (valid) {
        ++count;
        sum += v;
        sumSquares += double(v) * v;
        minKey = min(minKey, key);
        maxKey = max(maxKey, key);
      }
    } else {
      // Few values share the prefixes: skip the warp vote when no lane has one.
      uint32_t high = key >> matchShift;
      bool in0 = valid && high == prefix0, in1 = !same && valid && high == prefix1;
      if (__any_sync(0xffffffffu, in0)) addToBin(hist[0], in0, digit, matchAny);
      if (__any_sync(0xffffffffu, in1)) addToBin(hist[1], in1, digit, matchAny);
    }
  });
  __syncthreads();
  if (Pass == 0 && useGuess) {  // the block's list, appended to the global one at once
    const unsigned kept = min(blockCandidateCount, unsigned(kBlockCandidates));
    __shared__ unsigned long long globalBase;
    if (threadIdx.x == 0 && kept > 0) globalBase = atomicAdd(&ws->candidateCount, kept);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < kept; i += blockDim.x)
      if (globalBase + i < kCandidates) candidates[globalBase + i] = blockCandidates[i];
  }
  int histograms = (Pass == 0 || same) ? 1 : 2;
  for (int h = 0; h < histograms; ++h)
    for (int i = threadIdx.x; i < kBins; i += blockDim.x)
      if (hist[h][i]) atomicAdd(&ws->histogram[h][i], hist[h][i]);
  if constexpr (Pass == 0) {
    // One block reduction of all the sums (the same tree for each as a reduction of its own).
    using Reduce = cub::BlockReduce<BlockMoments, kThreads>;
    __shared__ typename Reduce::TempStorage temp;
    const BlockMoments total = Reduce(temp).Reduce(
        BlockMoments{count, below, inBin, sum, sumSquares, minKey, maxKey}, CombineMoments{});
    const unsigned long long c = total.count, b = total.below, in = total.inBin;
    const double s = total.sum, s2 = total.sumSquares;
    const uint32_t mn = total.minKey, mx = total.maxKey;
    if (threadIdx.x == 0 && useGuess) {
      atomicAdd(&ws->below, b);
      atomicAdd(&ws->inBin, in);
    }
    if (threadIdx.x == 0 && c > 0) {
      atomicAdd(&ws->moments.count, c);
      atomicAdd(&ws->moments.sum, s);
      atomicAdd(&ws->moments.sumSquares, s2);
      atomicMin(&ws->moments.minKey, mn);
      atomicMax(&ws->moments.maxKey, mx);
    }
  }
  // The last block to finish completes the step.
  if (!lastBlockToFinish(&ws->blocksDone)) return;
  if (Pass == 0 && useGuess) {
    // Both middle ranks inside the guessed bin: the first digit is known without a histogram.
    if (threadIdx.x == 0) {
      unsigned long long n = __ldcg(&ws->moments.count), b = __ldcg(&ws->below),
                         in = __ldcg(&ws->inBin);
      unsigned long long r0 = n > 0 ? (n - 1) / 2 : 0, r1 = n / 2;
      bool hit = n > 0 && b <= r0 && r1 < b + in && in <= kCandidates;
      if (hit) {
        Selection& sel = ws->selection;
        sel.prefix[0] = sel.prefix[1] = guess << digitShift(0);
        sel.rank[0] = r0 - b;
        sel.rank[1] = r1 - b;
      }
      ws->needFull = hit ? 0 : 1;
      if (!hit) ws->candidateCount = 0;
      ws->fromCandidates = hit ? 1 : 0;
      ws->below = ws->inBin = 0;
      ws->blocksDone = 0;
    }
    return;
  }
  chooseDigit<Pass>(ws);
  if (threadIdx.x == 0) {
    ws->blocksDone = 0;
    if (Pass == 0) {
      ws->needFull = 0;
      ws->fromCandidates = 0;
    }
    if (Pass == 2) {
      finishStats(ws);
      ws->candidateCount = 0;
      cudaGraphSetConditional(loop, ws->control.done ? 0u : 1u);  // the graph's WHILE
    }
  }
}

// The first digit's full histogram, when the guess of the moments pass missed (else nothing).
__global__ void __launch_bounds__(kThreads) digit0Fallback(Workspace* ws) {
  // The same for every block: written by the previous kernel.
  if (!ws->needFull) return;
  const bool matchAny = ws->control.matchAny;
  const float* __restrict__ values = ws->values;
  const int64_t n = ws->count;
  const FloatBounds bounds = floatBounds(ws->control);
  __shared__ uint32_t hist[kBins];
  for (int i = threadIdx.x; i < kBins; i += blockDim.x) hist[i] = 0;
  __syncthreads();
  constexpr uint32_t digitMask = (1u << digitBits(0)) - 1;
  forEachValue(values, n, [&](float v, bool ok) {
    const bool valid = ok && inBounds(v, bounds);
    addToBin(hist, valid, (orderedKey(v) >> digitShift(0)) & digitMask, matchAny);
  });
  __syncthreads();
  for (int i = threadIdx.x; i < kBins; i += blockDim.x)
    if (hist[i]) atomicAdd(&ws->histogram[0][i], hist[i]);
  if (!lastBlockToFinish(&ws->blocksDone)) return;
  chooseDigit<0>(ws);
  if (threadIdx.x == 0) {
    ws->blocksDone = 0;
    ws->needFull = 0;
  }
}

__global__ void resetWorkspace(Workspace* ws, Control control, const float* values,
                               const long long* selected, long long count, float* candidates) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 2 * kBins) (&ws->histogram[0][0])[i] = 0;
  if (i == 0) {
    ws->values = values;
    ws->count = selected ? *selected : count;  // selected: the compaction's count
    ws->candidates = candidates;
    ws->control = control;
    ws->moments.count = 0;
    ws->moments.sum = ws->moments.sumSquares = 0;
    ws->moments.minKey = 0xffffffffu;
    ws->moments.maxKey = 0;
    ws->blocksDone = 0;
    ws->haveGuess = ws->needFull = 0;
    ws->guessDigit = 0;  // read (unused) by the first evaluation
    ws->below = ws->inBin = 0;
    ws->candidateCount = 0;
    ws->fromCandidates = 0;
  }
}

}  // namespace
}  // namespace stacklens::compute::cuda
