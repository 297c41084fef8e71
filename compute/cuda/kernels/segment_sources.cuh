// The segmentation's source table (compute/cuda/cuda_segment.cu): each source's sums, cleared by
// the labelling and added to by the measuring (kernels/segment_measure.cuh); their publication
// into mapped host memory; and the dropping of sources below the minimum size. (For
// compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"

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

__global__ void initSums(SourceSums* sums, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) clearSums(sums[i]);
}

// Copies the sources' number and the first `limit` sources' sums into host memory mapped for
// the device, so that one synchronisation brings the table back. Consecutive threads write
// consecutive 8-byte words (a source's sums at once would scatter each store across the bus).
static_assert(sizeof(SourceSums) % sizeof(unsigned long long) == 0, "sums copy as whole words");
constexpr int kSumsWords = sizeof(SourceSums) / sizeof(unsigned long long);
__global__ void publishSources(const SourceSums* __restrict__ sums,
                               const int32_t* __restrict__ found, int64_t limit,
                               long long* hostCount, SourceSums* hostSums) {
  const int64_t w = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int32_t n = *found;
  if (w == 0) *hostCount = n;
  if (w < min(int64_t(n), limit) * kSumsWords)
    reinterpret_cast<unsigned long long*>(hostSums)[w] =
        reinterpret_cast<const unsigned long long*>(sums)[w];
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
