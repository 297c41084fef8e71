// The projections and spectral moments along z (compute/cuda/cuda_projection.cu): one thread per
// pixel walks its column in slice order, so each step of a warp reads consecutive x; sums are in
// double in the same order as the CPU twin's (compute/cpu/projection.cpp). The median is an exact
// radix selection of the two middle ranks on order-preserving keys: 32 passes over the column,
// each counting the values under a bit, nothing sorted or stored. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/params.h"

namespace stacklens::compute::cuda {
namespace {

struct Column {
  const float* first;  // the pixel in the first slice of the range
  int64_t plane;       // the step from one slice to the next
  int64_t count;
  __device__ float operator[](int64_t k) const { return first[k * plane]; }
};

__global__ void projectColumns(const float* __restrict__ in, float* __restrict__ out, int64_t plane,
                               int64_t begin, int64_t count, Projection op) {
  const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= plane) return;
  const Column c{in + begin * plane + p, plane, count};
  const bool extreme = op == Projection::Max || op == Projection::Min;
  double a = op == Projection::Max ? -INFINITY : op == Projection::Min ? INFINITY : 0.0;
  int64_t n = 0;
  for (int64_t k = 0; k < c.count; ++k) {
    const float v = c[k];
    if (isnan(v)) continue;
    ++n;
    a = op == Projection::Max   ? fmax(a, double(v))
        : op == Projection::Min ? fmin(a, double(v))
                                : a + double(v);
  }
  float result;
  if (n == 0) {
    result = NAN;
  } else if (extreme || op == Projection::Sum) {
    result = float(a);
  } else if (op == Projection::Mean) {
    result = float(a / double(n));
  } else {  // Std, about the mean in a second pass
    double second = 0;
    for (int64_t k = 0; k < c.count; ++k) {
      const float v = c[k];
      if (isnan(v)) continue;
      const double d = double(v) - a / double(n);
      second += d * d;
    }
    result = float(sqrt(second / double(n)));
  }
  out[p] = result;
}

__global__ void medianColumns(const float* __restrict__ in, float* __restrict__ out, int64_t plane,
                              int64_t begin, int64_t count) {
  const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= plane) return;
  const Column c{in + begin * plane + p, plane, count};
  int64_t n = 0;
  for (int64_t k = 0; k < c.count; ++k) n += !isnan(c[k]);
  if (n == 0) {
    out[p] = NAN;
    return;
  }
  // Ranks (n − 1) / 2 and n / 2 among the finite values, found bit by bit from the top: at each
  // bit, the values that share the prefix found so far and have a 0 there come first.
  int64_t rank[2] = {(n - 1) / 2, n / 2};
  uint32_t prefix[2] = {0, 0};
  for (int bit = 31; bit >= 0; --bit) {
    const uint32_t high = bit == 31 ? 0u : ~0u << (bit + 1);
    int64_t zeros[2] = {0, 0};
    for (int64_t k = 0; k < c.count; ++k) {
      const float v = c[k];
      if (isnan(v)) continue;
      const uint32_t key = orderedKey(v);
      for (int i = 0; i < 2; ++i) zeros[i] += (key & high) == prefix[i] && !((key >> bit) & 1u);
    }
    for (int i = 0; i < 2; ++i)
      if (rank[i] >= zeros[i]) {
        rank[i] -= zeros[i];
        prefix[i] |= 1u << bit;
      }
  }
  const double lower = keyToFloat(prefix[0]), upper = keyToFloat(prefix[1]);
  out[p] = n % 2 ? float(upper) : float((lower + upper) / 2.0);
}

__global__ void momentColumns(const float* __restrict__ in, float* __restrict__ out, int64_t plane,
                              int64_t begin, int64_t count, const double* __restrict__ value,
                              const double* __restrict__ width, int order, double clip) {
  const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= plane) return;
  const Column c{in + begin * plane + p, plane, count};
  double weight = 0, first = 0;
  int64_t n = 0;
  for (int64_t k = 0; k < c.count; ++k) {
    const float v = c[k];
    if (isnan(v) || double(v) < clip) continue;
    ++n;
    weight += double(v) * (order == 0 ? width[k] : 1.0);
    first += double(v) * value[k];
  }
  float result;
  if (n == 0 || (order > 0 && weight == 0)) {
    result = NAN;
  } else if (order == 0) {
    result = float(weight);
  } else if (order == 1) {
    result = float(first / weight);
  } else {
    double spread = 0;
    for (int64_t k = 0; k < c.count; ++k) {
      const float v = c[k];
      if (isnan(v) || double(v) < clip) continue;
      const double d = value[k] - first / weight;
      spread += double(v) * d * d;
    }
    const double variance = spread / weight;
    result = variance >= 0 ? float(sqrt(variance)) : NAN;
  }
  out[p] = result;
}

}  // namespace
}  // namespace stacklens::compute::cuda
