// The on-chip sigma clip's passes over each block's share (kernels/sigma_clip_resident.cuh): the
// kept values' count with the window's histogram and values, each thread's moments, the digit
// counts, and the block's sums in one order. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

// The keys of the kept values, [low, low + span], for the float bounds [lo, hi] (lo <= hi, both
// finite): both zeros inside where a bound is a zero (as the float test has it); NaN and the
// infinities lie outside any finite bounds' keys.
struct KeptKeys {
  uint32_t low, span;
};
__device__ inline KeptKeys keptKeysOf(float lo, float hi) {
  const uint32_t low = lo == 0.f ? orderedKey(-0.f) : orderedKey(lo);
  const uint32_t high = hi == 0.f ? orderedKey(0.f) : orderedKey(hi);
  return {low, high - low};
}

// Each warp's room in the block's list of window values.
constexpr int kWarpRoom = kResidentCandidates / (kResidentThreads / 32);

// A value as the count of a share sees it: its key and whether it is a kept value of the window.
struct Seen {
  float value;
  uint32_t key;
  bool inWindow;
};

// A thread's moments of its kept values, kept from one evaluation to the next: the bounds only
// narrow, so while a thread keeps as many values as before it keeps the same ones, and these
// are still its sums (the same additions in the same order). count: all ones before the first.
struct ThreadMoments {
  double sum, sumSquares;
  uint32_t count, minKey, maxKey;
};
constexpr ThreadMoments kNoThreadMoments{0.0, 0.0, 0xffffffffu, 0xffffffffu, 0u};

// A kept value into the thread's moments (of its values whose keys lie in [keyLo, keyLo + span]):
// countShare adds the thread's values in one order, four rounds at a time from the share's quads
// (loadShare), then the rest of the whole rounds and the last one.
__device__ inline void addIfKept(ThreadMoments& m, float v, uint32_t key, uint32_t keyLo,
                                 uint32_t span) {
  if (key - keyLo <= span) {
    ++m.count;
    m.sum += v;
    m.sumSquares += double(v) * v;
    m.minKey = min(m.minKey, key);
    m.maxKey = max(m.maxKey, key);
  }
}

// Counts the block's share (see countMoments): with Moments into `own`, the thread's sums from
// `cached` (renewed, in the same pass, when the thread keeps another set than theirs); with Keep,
// each warp lists its window values in its part of `list`, as many as it has room for, and returns
// how many it found (the same in every lane).
template <bool Keep, bool Moments = true>
__device__ uint32_t countShare(const float* mine, int len, float lo, float hi, const Window& w,
                               BlockSums& own, ThreadMoments& cached, uint32_t (&hist)[kBins],
                               float* list) {
  const int lane = threadIdx.x % 32;
  float* warpList = list + threadIdx.x / 32 * kWarpRoom;
  const uint32_t lanesBefore = (1u << lane) - 1;
  uint32_t listed = 0;
  // The count as a float, on the float pipes rather than the (half as fast) integer ones: exact,
  // as a thread counts far fewer than 2^24 values.
  float below = 0.f;
  // Below the window in key is below it in value, as the window never starts at the key of +0
  // (nextWindow). The kept keys below the window are those less than belowEnd above keyLo; the
  // kept keys in the window, [first, first + windowSpan] where the two ranges meet: one subtraction
  // and a test each.
  const KeptKeys keptKeys = keptKeysOf(lo, hi);
  const uint32_t keyLo = keptKeys.low, span = keptKeys.span;
  const uint32_t belowEnd = w.low > keyLo ? min(w.low - keyLo, span + 1) : 0u;
  const uint32_t first = max(keyLo, w.low), last = min(keyLo + span, w.low + w.last);
  const bool windowKeepsAny = first <= last;
  const uint32_t windowSpan = last - first;
  // Bounds that hold no float keep nothing (and their keys no range).
  const bool keepsNone = !(lo <= hi);
  if (keepsNone) len = 0;
  // The bounds only narrow (and with them the kept keys), so the thread keeps another set than
  // its sums' exactly when their least or greatest key is no longer kept: no count of the kept
  // values is needed to know when to renew them, and they are renewed in this pass.
  const bool renew = Moments && (cached.count == kNoThreadMoments.count ||
                                 (cached.count != 0 && (keepsNone || cached.minKey - keyLo > span ||
                                                        cached.maxKey - keyLo > span)));
  ThreadMoments m{0.0, 0.0, 0u, 0xffffffffu, 0u};
  // The pass, with the sums of the kept values where a lane of the warp renews them.
  const auto pass = [&](auto withSums) {
    constexpr bool kSums = decltype(withSums)::value;
    const auto visit = [&](float v) {
      const uint32_t key = orderedKey(v);
      if (Moments && key - keyLo < belowEnd) below += 1.f;
      if (kSums && renew) addIfKept(m, v, key, keyLo, span);
      return Seen{v, key, windowKeepsAny && key - first <= windowSpan};
    };
    const auto place = [&](const Seen& x) {
      if (!Keep) {
        if (x.inWindow) atomicAdd(&hist[(x.key - w.low) >> w.binShift], 1u);
        return;
      }
      const unsigned lanes = __ballot_sync(0xffffffffu, x.inWindow);
      if (x.inWindow) {
        atomicAdd(&hist[(x.key - w.low) >> w.binShift], 1u);
        const uint32_t at = listed + __popc(lanes & lanesBefore);
        if (at < kWarpRoom) warpList[at] = x.value;
      }
      listed += __popc(lanes);
    };
    // Whole warps go round together, for the warps' lists: the quads, the rest of the whole
    // rounds, then the last round. Most quads of a narrow window hold none of its values: one
    // vote skips their listing.
    const int rounds = len / kResidentThreads, quads = rounds / 4;
    const float4* quad = reinterpret_cast<const float4*>(mine) + threadIdx.x;
#pragma unroll 2
    for (int j = 0; j < quads; ++j, quad += kResidentThreads) {
      const float4 q = *quad;
      const Seen a = visit(q.x), b = visit(q.y), c = visit(q.z), d = visit(q.w);
      if (__any_sync(0xffffffffu, a.inWindow || b.inWindow || c.inWindow || d.inWindow)) {
        place(a);
        place(b);
        place(c);
        place(d);
      }
    }
    const int whole = rounds * kResidentThreads;
    const float* at = mine + quads * 4 * kResidentThreads + threadIdx.x;
    for (int r = quads * 4; r < rounds; ++r, at += kResidentThreads) place(visit(*at));
    if (whole < len) {
      const int i = whole + int(threadIdx.x);
      place(visit(i < len ? mine[i] : __int_as_float(0x7fffffff)));
    }
  };
  if (Moments && __any_sync(0xffffffffu, renew))
    pass(std::true_type{});
  else
    pass(std::false_type{});
  if (Moments) {
    if (renew) cached = m;
    own.count = cached.count;
    own.sum = cached.sum;
    own.sumSquares = cached.sumSquares;
    own.minKey = cached.minKey;
    own.maxKey = cached.maxKey;
    own.below = uint32_t(below);
  }
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

// The block's sums (in thread 0) of every thread's (whileFolding runs in every thread after
// the block's barrier, before warp 0 adds the warps' sums), in the order of
// cub::BlockReduce<BlockSums>'s warp reductions, which the double sums keep: each warp adds its
// lanes at offsets 1, 2, 4, 8 and 16, then warp 0's first lane adds the warps' sums in warp order.
// The integer fields, whose order does not matter, take one warp-wide reduction each.
template <class WhileFolding>
__device__ BlockSums reduceBlock(const BlockSums& own, uint32_t count, WhileFolding whileFolding) {
  constexpr int kWarps = kResidentThreads / 32;
  __shared__ __align__(16) double warpSum[kWarps], warpSquares[kWarps];
  __shared__ uint32_t warpCount[kWarps], warpMin[kWarps], warpMax[kWarps], warpBelow[kWarps];
  double sum = own.sum, squares = own.sumSquares;
  for (int offset = 1; offset < 32; offset *= 2) {
    const double otherSum = __shfl_down_sync(0xffffffffu, sum, offset),
                 otherSquares = __shfl_down_sync(0xffffffffu, squares, offset);
    sum += otherSum;
    squares += otherSquares;
  }
  const uint32_t warpCounted = __reduce_add_sync(0xffffffffu, count),
                 least = __reduce_min_sync(0xffffffffu, own.minKey),
                 most = __reduce_max_sync(0xffffffffu, own.maxKey),
                 below = __reduce_add_sync(0xffffffffu, own.below);
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) {
    warpSum[warp] = sum;
    warpSquares[warp] = squares;
    warpCount[warp] = warpCounted;
    warpMin[warp] = least;
    warpMax[warp] = most;
    warpBelow[warp] = below;
  }
  __syncthreads();
  whileFolding();
  BlockSums block = kNoSums;
  if (warp == 0) {
    // Lane 0 adds the warps' sums in warp order, lane 1 their sums of squares (the others too,
    // unused); a lane each for the integer fields.
    static_assert(kWarps == 32, "a lane for each warp");
    const int lane = threadIdx.x;
    // The parts are read into registers ahead of the adds, two a load, rather than one shared
    // load before each add; the adds and their order are those of a loop over the warps.
    const double2* parts = reinterpret_cast<const double2*>(lane == 1 ? warpSquares : warpSum);
    double2 part[kWarps / 2];
#pragma unroll
    for (int k = 0; k < kWarps / 2; ++k) part[k] = parts[k];
    double total = part[0].x;
#pragma unroll
    for (int k = 0; k < kWarps / 2; ++k) {
      if (k > 0) total += part[k].x;
      total += part[k].y;
    }
    const double totalSquares = __shfl_sync(0xffffffffu, total, 1);
    const uint32_t blockCount = __reduce_add_sync(0xffffffffu, warpCount[lane]),
                   blockMin = __reduce_min_sync(0xffffffffu, warpMin[lane]),
                   blockMax = __reduce_max_sync(0xffffffffu, warpMax[lane]),
                   blockBelow = __reduce_add_sync(0xffffffffu, warpBelow[lane]);
    block = {blockCount, total, totalSquares, blockMin, blockMax, blockBelow, 0u, 0u};
  }
  return block;
}

}  // namespace
}  // namespace stacklens::compute::cuda
