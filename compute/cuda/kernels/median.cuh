// The median filter's and outlier removal's kernels (compute/cuda/cuda_median.cu), 2D per slice
// with scipy's reflect boundary: 3×3 and 5×5 windows by min/max networks in registers that share
// the work of overlapping windows (each thread walks down a column, or two for 3×3 on even
// widths); larger windows by a 32-step radix (bitwise) selection. Keys follow the CPU backend's
// total order, so NaN and -0 rank as they do there. Launch shapes: tuning/median.cuh. (For
// compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/kernels/median_networks.h"
#include "compute/cuda/tuning/median.cuh"
#include "compute/params.h"

namespace stacklens::compute::cuda {
namespace {

constexpr int kTileX = tuning::MedianPolicy::largeTileX;
constexpr int kTileY = tuning::MedianPolicy::largeTileY;

// What happens to the median at each pixel: kept as is (median filter) or used to replace the
// pixel only where it deviates by more than the threshold (outlier removal).
struct OutlierRule {
  bool enabled = false;
  int mode = 0;  // OutlierMode
  double threshold = 0;
};

__device__ inline float applyRule(float value, float median, const OutlierRule& rule) {
  if (!rule.enabled) return median;
  double d = static_cast<double>(value) - static_cast<double>(median);
  bool replace = rule.mode == static_cast<int>(OutlierMode::Bright) ? d > rule.threshold
                 : rule.mode == static_cast<int>(OutlierMode::Dark)
                     ? -d > rule.threshold
                     : (d > rule.threshold || -d > rule.threshold);
  return replace ? median : value;
}

// Signed keys in the CPU backend's total order: -0 just below +0, every NaN made the canonical
// quiet NaN, which ranks above +Inf. The map is its own inverse.
__device__ inline int32_t totalOrderKey(float v) {
  int32_t b = isnan(v) ? 0x7fc00000 : __float_as_int(v);
  return b ^ ((b >> 31) & 0x7fffffff);
}
__device__ inline float totalOrderValue(int32_t k) {
  return __int_as_float(k ^ ((k >> 31) & 0x7fffffff));
}

constexpr int kMedian5Threads = tuning::MedianPolicy::strip5Threads;
constexpr int kMedian5Rows = tuning::MedianPolicy::strip5Rows;  // rows per thread

// 5×5: each thread walks down a column making two outputs per step. The rows of five keys are
// sorted once each (as they enter) and merged pairwise once each; the two windows of a step share
// four rows, whose middle six ranks are found once, and each window's median is then rank 5 of
// those six and its own fifth row (median_networks.h). About 60 min/max per output instead of
// about 340 for a forgetful selection over each window's 25 keys.
__global__ void __launch_bounds__(kMedian5Threads)
    median5x5(const float* __restrict__ in, float* __restrict__ out, int ny, int nx, int z0,
              OutlierRule rule) {
  using namespace networks;
  const int x = blockIdx.x * kMedian5Threads + threadIdx.x;
  if (x >= nx) return;
  const int y0 = blockIdx.y * kMedian5Rows;
  const int64_t z = int64_t(z0) + blockIdx.z;
  const float* slice = in + z * ny * nx;
  float* target = out + z * ny * nx;
  int cols[5];
#pragma unroll
  for (int d = 0; d < 5; ++d) cols[d] = int(reflectIndex(x + d - 2, nx));
  auto sortedRow = [&](int y, int32_t(&r)[5]) {
    const int yy = (y >= 0 && y < ny) ? y : int(reflectIndex(y, ny));
    const float* row = slice + int64_t(yy) * nx;
#pragma unroll
    for (int d = 0; d < 5; ++d) r[d] = totalOrderKey(__ldg(row + cols[d]));
    sort5(r);
  };
  // Rows y−2 … y+3 around the outputs y, y+1 are a, b, c, d, e, f; upper = merge(b, c),
  // lower = merge(d, e). The next step's a, c, d and upper are this step's c, e, f and lower, so
  // each step sorts two new rows and merges one pair.
  int32_t a[5], b[5], c[5], d[5], e[5], f[5], upper[10], lower[10], middle[6];
  sortedRow(y0 - 2, a);
  sortedRow(y0 - 1, b);
  sortedRow(y0, c);
  mergeSorted<8>(b, c, upper);
  sortedRow(y0 + 1, d);
  const int yEnd = min(ny, y0 + kMedian5Rows);
  for (int y = y0; y < yEnd; y += 2) {
    sortedRow(y + 2, e);
    sortedRow(y + 3, f);
    mergeSorted<8>(d, e, lower);
    sharedMiddle(upper, lower, middle);
    const int64_t at = int64_t(y) * nx + x;
    const float m0 = totalOrderValue(windowMedian(middle, a));
    target[at] = rule.enabled ? applyRule(slice[at], m0, rule) : m0;
    if (y + 1 < yEnd) {
      const float m1 = totalOrderValue(windowMedian(middle, f));
      target[at + nx] = rule.enabled ? applyRule(slice[at + nx], m1, rule) : m1;
    }
#pragma unroll
    for (int i = 0; i < 5; ++i) {
      a[i] = c[i];
      c[i] = e[i];
      d[i] = f[i];
    }
#pragma unroll
    for (int i = 0; i < 10; ++i) upper[i] = lower[i];
  }
}

// orderedKey with every NaN made the canonical quiet NaN (the same total order as above).
__device__ inline uint32_t canonicalKey(float v) {
  return orderedKey(isnan(v) ? __int_as_float(0x7fc00000) : v);
}

__device__ inline void sort3(int32_t& a, int32_t& b, int32_t& c) {
  int32_t lo = min(a, b), hi = max(a, b);
  a = min(lo, c);
  int32_t t = max(lo, c);
  b = min(t, hi);
  c = max(t, hi);
}
__device__ inline int32_t median3(int32_t a, int32_t b, int32_t c) {
  return max(min(a, b), min(max(a, b), c));
}

constexpr int kStripThreads = tuning::MedianPolicy::strip3Threads;
constexpr int kStripRows = tuning::MedianPolicy::strip3Rows;

// 3×3: each thread walks down a column, keeping the sorted row triples of the last three rows;
// the median of nine is med3(max of the lows, med3 of the middles, min of the highs), so each
// output costs one new triple sort and a few min/max.
__global__ void median3x3(const float* __restrict__ in, float* __restrict__ out, int ny, int nx,
                          int z0, OutlierRule rule) {
  int x = blockIdx.x * kStripThreads + threadIdx.x;
  if (x >= nx) return;
  int y0 = blockIdx.y * kStripRows;
  int64_t z = int64_t(z0) + blockIdx.z;
  const float* slice = in + z * ny * nx;
  int xl = x > 0 ? x - 1 : int(reflectIndex(x - 1, nx));
  int xr = x + 1 < nx ? x + 1 : int(reflectIndex(x + 1, nx));
  auto triple = [&](int y, int32_t& lo, int32_t& mid, int32_t& hi) {
    int yy = (y >= 0 && y < ny) ? y : int(reflectIndex(y, ny));
    const float* row = slice + int64_t(yy) * nx;
    lo = totalOrderKey(__ldg(row + xl));
    mid = totalOrderKey(__ldg(row + x));
    hi = totalOrderKey(__ldg(row + xr));
    sort3(lo, mid, hi);
  };
  int32_t l0, m0, h0, l1, m1, h1, l2, m2, h2;
  triple(y0 - 1, l0, m0, h0);
  triple(y0, l1, m1, h1);
  int yEnd = min(ny, y0 + kStripRows);
  for (int y = y0; y < yEnd; ++y) {
    triple(y + 1, l2, m2, h2);
    int32_t m = median3(max(max(l0, l1), l2), median3(m0, m1, m2), min(min(h0, h1), h2));
    int64_t at = int64_t(y) * nx + x;
    out[z * ny * nx + at] = applyRule(slice[at], totalOrderValue(m), rule);
    l0 = l1, m0 = m1, h0 = h1;
    l1 = l2, m1 = m2, h1 = h2;
  }
}

// 3×3 on slices of even width, two adjacent columns per thread: one 8-byte load and two
// neighbours per row instead of three loads per column, one 8-byte store.
__global__ void median3x3Pairs(const float* __restrict__ in, float* __restrict__ out, int ny,
                               int nx, int z0, OutlierRule rule) {
  int x = 2 * (blockIdx.x * kStripThreads + threadIdx.x);
  if (x >= nx) return;
  int y0 = blockIdx.y * kStripRows;
  int64_t z = int64_t(z0) + blockIdx.z;
  const float* slice = in + z * ny * nx;
  int xl = x > 0 ? x - 1 : int(reflectIndex(x - 1, nx));
  int xr = x + 2 < nx ? x + 2 : int(reflectIndex(x + 2, nx));
  // Sorted triples of the row's columns (x−1, x, x+1) and (x, x+1, x+2).
  auto triples = [&](int y, int32_t(&a)[3], int32_t(&b)[3]) {
    int yy = (y >= 0 && y < ny) ? y : int(reflectIndex(y, ny));
    const float* row = slice + int64_t(yy) * nx;
    const float2 c = __ldg(reinterpret_cast<const float2*>(row + x));
    const int32_t l = totalOrderKey(__ldg(row + xl)), m0 = totalOrderKey(c.x),
                  m1 = totalOrderKey(c.y), r = totalOrderKey(__ldg(row + xr));
    a[0] = l, a[1] = m0, a[2] = m1;
    b[0] = m0, b[1] = m1, b[2] = r;
    sort3(a[0], a[1], a[2]);
    sort3(b[0], b[1], b[2]);
  };
  int32_t a0[3], b0[3], a1[3], b1[3], a2[3], b2[3];
  triples(y0 - 1, a0, b0);
  triples(y0, a1, b1);
  int yEnd = min(ny, y0 + kStripRows);
  for (int y = y0; y < yEnd; ++y) {
    triples(y + 1, a2, b2);
    auto median9 = [](const int32_t(&p)[3], const int32_t(&q)[3], const int32_t(&r)[3]) {
      return median3(max(max(p[0], q[0]), r[0]), median3(p[1], q[1], r[1]),
                     min(min(p[2], q[2]), r[2]));
    };
    int64_t at = int64_t(y) * nx + x;
    float2 value = rule.enabled ? *reinterpret_cast<const float2*>(slice + at) : float2{};
    float2 result = make_float2(applyRule(value.x, totalOrderValue(median9(a0, a1, a2)), rule),
                                applyRule(value.y, totalOrderValue(median9(b0, b1, b2)), rule));
    *reinterpret_cast<float2*>(out + z * ny * nx + at) = result;
#pragma unroll
    for (int i = 0; i < 3; ++i) {
      a0[i] = a1[i], b0[i] = b1[i];
      a1[i] = a2[i], b1[i] = b2[i];
    }
  }
}

// Any odd window: the rank-m key found bit by bit (count of window keys below each candidate).
__global__ void medianLarge(const float* __restrict__ in, float* __restrict__ out, int64_t ny,
                            int64_t nx, int64_t z0, int half, OutlierRule rule) {
  int64_t z = z0 + blockIdx.z;
  int64_t x = int64_t(blockIdx.x) * kTileX + threadIdx.x;
  int64_t y = int64_t(blockIdx.y) * kTileY + threadIdx.y;
  if (x >= nx || y >= ny) return;
  const float* slice = in + z * ny * nx;
  int w = 2 * half + 1;
  int rank = (w * w) / 2;
  uint32_t prefix = 0;
  for (int bit = 31; bit >= 0; --bit) {
    uint32_t candidate = prefix | (1u << bit);
    int below = 0;
    for (int dy = -half; dy <= half; ++dy) {
      const float* row = slice + reflectIndex(y + dy, ny) * nx;
      for (int dx = -half; dx <= half; ++dx)
        below += canonicalKey(row[reflectIndex(x + dx, nx)]) < candidate;
    }
    if (below <= rank) prefix = candidate;
  }
  int64_t at = z * ny * nx + y * nx + x;
  out[at] = applyRule(in[at], keyToFloat(prefix), rule);
}

}  // namespace
}  // namespace stacklens::compute::cuda
