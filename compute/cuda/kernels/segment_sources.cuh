// The segmentation's source table (compute/cuda/cuda_segment.cu): each source's sums, cleared by
// the labelling and added to by the measuring (kernels/segment_measure.cuh); the table entries
// made from them and published into mapped host memory; and the dropping of sources below the
// minimum size. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cuda/atomic>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/kernels/dependent_launch.cuh"
#include "compute/params.h"

namespace stacklens::compute::cuda {
namespace {

// One source's sums, as the measuring adds them up.
struct SourceSums {
  unsigned long long npix;
  double flux, fluxX, fluxY, sumX, sumY;
  unsigned long long peak;  // ordered value key << 32 | (~raster index): max = brightest, first
  int32_t xMin, xMax, yMin, yMax;
};

__device__ inline void clearSums(SourceSums& sums) {
  SourceSums s{};
  s.xMin = s.yMin = INT32_MAX;
  s.xMax = s.yMax = -1;
  sums = s;
}

// Source k's table entry (label k + 1) from its sums in slices of ny × nx, as the CPU backend
// gives it.
__device__ inline Source finishedSource(const SourceSums& h, int64_t k, int64_t ny, int64_t nx) {
  Source src;
  src.label = static_cast<int32_t>(k + 1);
  src.npix = static_cast<int64_t>(h.npix);
  src.flux = h.flux;
  if (h.flux > 0) {  // else the unweighted mean position (as the CPU backend)
    src.centroidX = h.fluxX / h.flux;
    src.centroidY = h.fluxY / h.flux;
  } else {
    src.centroidX = h.sumX / double(h.npix);
    src.centroidY = h.sumY / double(h.npix);
  }
  src.peak = keyToFloat(static_cast<uint32_t>(h.peak >> 32));
  const int64_t peakIndex = int64_t(0xffffffffull - (h.peak & 0xffffffffull));
  src.peakX = peakIndex % nx;
  src.peakY = (peakIndex / nx) % ny;
  src.z = peakIndex / (nx * ny);  // components never cross slices
  src.xMin = h.xMin;
  src.xMax = h.xMax;
  src.yMin = h.yMin;
  src.yMax = h.yMax;
  return src;
}

// A block publishes a group of kPublishGroup sources, kPublishThreads threads writing its words:
// small groups spread the table's words over many blocks.
constexpr int kPublishGroup = 32, kPublishThreads = 128;
static_assert(sizeof(Source) % sizeof(unsigned long long) == 0, "entries copy as whole words");
constexpr int kSourceWords = sizeof(Source) / sizeof(unsigned long long);

// The table entries of sources first … first + here − 1 (here ≤ kPublishGroup) into `out`, by
// the whole block (at least kPublishGroup threads, their 1D index `thread`; `mine`: thread t's
// source first + t's sums, for t < here). `out` may be host memory mapped for the device, so
// that one synchronisation brings the table back: the entries are staged in shared memory, and
// consecutive threads write consecutive 8-byte words (an entry a thread would scatter each store
// across the bus).
__device__ inline void publishGroup(const SourceSums& mine, int64_t first, int64_t here, int64_t ny,
                                    int64_t nx, Source* out, int thread, int threads) {
  // Raw words: a __shared__ Source would need its default member initializers run.
  __shared__ unsigned long long words[kPublishGroup * kSourceWords];
  auto* staged = reinterpret_cast<Source*>(words);
  if (thread < here) staged[thread] = finishedSource(mine, first + thread, ny, nx);
  __syncthreads();
  auto* to = reinterpret_cast<unsigned long long*>(out + first);
  for (int64_t w = thread; w < here * kSourceWords; w += threads) to[w] = words[w];
  __syncthreads();  // before the words are staged again
}

// Writes the first min(n, limit) sources' table entries (n = *found) to `out`, and n to `count`
// unless it is null. Where groupsDone is given (in mapped host memory, 0 before the launch), each
// block sets groupsDone[its index] once its group's entries (block 0: also the count) are
// written, so that the host copies each group as soon as it is there, while the others are still
// being written, and sees the table without waiting for the stream; blocks past the table set
// nothing.
__global__ void __launch_bounds__(kPublishThreads)
    publishSources(const SourceSums* __restrict__ sums, const int32_t* __restrict__ found,
                   int64_t limit, int64_t ny, int64_t nx, long long* count, Source* out,
                   volatile int* groupsDone) {
  waitForPrevious();
  const int64_t first = int64_t(blockIdx.x) * kPublishGroup;
  // The group's sums (those below `limit`, which `sums` has room for) are loaded with the count,
  // not after it.
  SourceSums mine{};
  if (threadIdx.x < kPublishGroup && first + threadIdx.x < limit) mine = sums[first + threadIdx.x];
  const int64_t n = *found;
  if (count && blockIdx.x == 0 && threadIdx.x == 0) *count = n;
  const int64_t here = min(min(n, limit) - first, int64_t(kPublishGroup));
  if (here > 0)  // the same for the whole block
    publishGroup(mine, first, here, ny, nx, out, threadIdx.x, kPublishThreads);
  // The same for the whole block:
  if (!groupsDone || (here <= 0 && blockIdx.x != 0)) return;
  __syncthreads();  // the block's entries are written
  if (threadIdx.x != 0) return;
  // The block's entries (seen through the barrier) and the count before the flag.
  ::cuda::atomic_thread_fence(::cuda::std::memory_order_release, ::cuda::thread_scope_system);
  groupsDone[blockIdx.x] = 1;
}

// Dropping the sources below the minimum size: kept[k] = 1 for a kept source, else 0.
__global__ void markKeptSources(const SourceSums* __restrict__ sums, int32_t* kept, int64_t n,
                                int64_t minPixels) {
  const int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (k < n) kept[k] = sums[k].npix >= static_cast<unsigned long long>(minPixels) ? 1 : 0;
}

// Renumbers the kept sources' pixels consecutively (keptEnds: the inclusive scan of kept) and
// clears the dropped ones'.
__global__ void renumberKept(int32_t* labels, const int32_t* __restrict__ kept,
                             const int32_t* __restrict__ keptEnds, int64_t count) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const int32_t label = labels[i];
  if (label > 0) labels[i] = kept[label - 1] ? keptEnds[label - 1] : 0;
}

__global__ void compactKept(const SourceSums* __restrict__ sums, SourceSums* __restrict__ out,
                            const int32_t* __restrict__ kept, const int32_t* __restrict__ keptEnds,
                            int64_t n) {
  const int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (k < n && kept[k]) out[keptEnds[k] - 1] = sums[k];
}

}  // namespace
}  // namespace stacklens::compute::cuda
