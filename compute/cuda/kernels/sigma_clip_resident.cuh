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
// ranks them on its own. The first evaluation's window is around the last run's first median
// (the workspace keeps it), or in the first run every key (its bins are the first radix digit;
// the bin found then becomes a window of its own, counted in one more pass and barrier). Only
// when a window misses a middle rank or holds more values than there is room for do digit counts
// over the whole shares follow, each with a barrier. The sums of each thread are kept while its
// count of kept values stays the same (so do its values). The loop ends without the evaluation
// that would find the last one's count (the same set): the next bounds keep the least and the
// greatest kept value. The selection and the statistics are those of kernels/statistics.cuh, whose
// helpers this uses. The parts: what the blocks keep and share (sigma_clip_resident_state.cuh), the
// passes over their shares (_count.cuh), what they exchange around the grid barrier
// (_exchange.cuh), the median (_median.cuh); here the evaluation's end and the kernel. Launch shape
// and sizes: tuning/statistics.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

#include "compute/cuda/kernels/sigma_clip_resident_count.cuh"
#include "compute/cuda/kernels/sigma_clip_resident_exchange.cuh"
#include "compute/cuda/kernels/sigma_clip_resident_median.cuh"
#include "compute/cuda/kernels/sigma_clip_resident_state.cuh"
#include "compute/cuda/kernels/statistics.cuh"
#include "compute/cuda/tuning/statistics.cuh"

namespace stacklens::compute::cuda {
namespace {

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

// Whether the bounds keep every value between the keys minKey and maxKey of the sums (as the
// count of a share tests them).
__device__ bool keepsAll(FloatBounds bounds, const BlockSums& sums) {
  const float lo = fmaxf(bounds.lo, -FLT_MAX), hi = fminf(bounds.hi, FLT_MAX);
  if (!(lo <= hi)) return false;
  const KeptKeys kept = keptKeysOf(lo, hi);
  return sums.minKey - kept.low <= kept.span && sums.maxKey - kept.low <= kept.span;
}

// The median from the selected keys (as finishStats) and astropy's step (thread 0), the next
// window (thread 32, at the same time). The selection and momentStats are done (a barrier since).
__device__ void finishEvaluation(ResidentState& s) {
  if (threadIdx.x == 0) {
    StatsResult r = s.result;
    if (r.n > 0) {
      r.median = 0.5 * (double(keyToFloat(s.selection.prefix[0])) +
                        double(keyToFloat(s.selection.prefix[1])));
    }
    advance(s.control, r);
    // The bounds only narrow, so the next evaluation would keep the same set exactly when these
    // bounds keep this one's least and greatest value: then it would find the same statistics
    // and end the loop (advance on an unchanged count), which it does here instead.
    if (!s.control.done && r.n > 0 && keepsAll(floatBounds(s.control), s.total)) s.control.done = 1;
  } else if (threadIdx.x == 32) {
    if (s.result.n > 0) {
      if (!s.haveMedian) s.firstKey = s.selection.prefix[0];
      s.window = nextWindow(s);
    }
    s.kept = 0;
    s.overflow = false;
  }
  __syncthreads();
}

// The block's share of values[0, n) into shared memory. The counting passes take their values
// round by round (a round: a value a thread, in order); each four whole rounds of the start are
// kept as quads, a thread's four values of those rounds side by side, so that a thread reads them
// with one 16-byte load (countShare). The rest stays in order: 16-byte loads where the share is
// aligned for them (every share starts at a multiple of 4 values).
__device__ void loadShare(const float* __restrict__ values, long long begin, int len, float* mine) {
  const float* from = values + begin;
  const int quads = len / kResidentThreads / 4;
  float4* to = reinterpret_cast<float4*>(mine);
#pragma unroll 2
  for (int j = 0; j < quads; ++j) {
    const float* round = from + 4 * j * kResidentThreads + threadIdx.x;
    to[j * kResidentThreads + threadIdx.x] =
        make_float4(round[0], round[kResidentThreads], round[2 * kResidentThreads],
                    round[3 * kResidentThreads]);
  }
  const int start = 4 * quads * kResidentThreads;
  int head = start;
  if (reinterpret_cast<uintptr_t>(from) % 16 == 0) {
    head = start + (len - start) / 4 * 4;
    const float4* rest = reinterpret_cast<const float4*>(from + start);
    for (int q = threadIdx.x; q < (head - start) / 4; q += blockDim.x) to[start / 4 + q] = rest[q];
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
// The loop's state at the end goes to `result`: the workspace's, or mapped page-locked host memory
// that the host reads without a copy, once it sees `done` set (written last, so the host need not
// wait for the kernel's end).
__global__ void __launch_bounds__(kResidentThreads, 1)
    clipResident(const float* __restrict__ values, long long n, ResidentWorkspace* ws,
                 ResidentBuffers buffers, Control control, Control* result) {
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
    // Around the last run's first median (a run on like values starts there), else every key
    // (the first digit).
    s.window = ws->haveFirstMedian ? windowAround(ws->firstMedianKey, ws->firstHalfBits)
                                   : Window{0u, 0xffffffffu, 32 - kBinBits, false};
    s.haveMedian = false;
    s.medianKey = 0;
    s.halfBits = kFirstHalfBits;
    s.kept = 0;
    s.overflow = false;
  }
  __syncthreads();
  clearHistogram(hist[0]);
  ThreadMoments cached = kNoThreadMoments;
  while (!s.control.done) {
    const FloatBounds bounds = floatBounds(s.control);
    // hist[0] is clear; hist[1] is the window's cursors: set before they are read.
    countMoments(ws, mine, len, bounds, s, hist[0], hist[1], list, buffers.slots, cached);
    placeWindowValues(buffers, s, hist[1], list);
    endPhase(ws, s, hist, 0);
    // The summed window histogram's loads go out with the slots'.
    const BinPair windowPair = loadBinPair(&phaseSet(ws, s.phase - 1).histogram[0][0]);
    // hist[0] for the next evaluation (the barriers to come order this before its counts).
    for (int i = threadIdx.x; i < kBins; i += blockDim.x) hist[0][i] = 0;
    addSlots(buffers.slots, s, windowPair, reinterpret_cast<double2*>(list));
    // One thread of the last warp, while the others start on the median (their first loads
    // wait for the memory anyway).
    if (threadIdx.x == kResidentThreads - 1) momentStats(s);
    // The same in every block: all take the same barriers. (No evaluation keeps the last one's
    // count: finishEvaluation ends the loop before one would.)
    if (s.total.count > 0) {
      selectMedian(ws, buffers, mine, len, list, bounds, s, hist, windowPair);
    } else {
      __syncthreads();
    }
    finishEvaluation(s);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    Control last = s.control;
    last.done = 0;
    *result = last;
    __threadfence_system();
    *reinterpret_cast<volatile int*>(&result->done) = s.control.done;  // non-zero: the loop ended
    ws->phase = s.phase % 3;
    if (s.haveMedian) {
      ws->firstHalfBits = ws->haveFirstMedian
                              ? halfBitsFor(ws->firstMedianKey, s.firstKey, kFirstHalfBits)
                              : kFirstHalfBits;
      ws->firstMedianKey = s.firstKey;
      ws->haveFirstMedian = 1;
    }
  }
}

}  // namespace
}  // namespace stacklens::compute::cuda
