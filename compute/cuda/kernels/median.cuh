// The median filter's and outlier removal's kernels (compute/cuda/cuda_median.cu), 2D per slice
// with scipy's reflect boundary: 3×3 and 5×5 windows by min/max networks in registers that share
// the work of overlapping windows (each thread walks down a column, or two: 5×5 always, 3×3 on
// even widths); larger windows by a 32-step radix (bitwise) selection. Keys follow the CPU
// backend's total order, so NaN and -0 rank as they do there. Launch shapes: tuning/median.cuh.
// (For compute/cuda/*.cu only.)
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
constexpr int kMedian5MinBlocks = tuning::MedianPolicy::strip5MinBlocks;

// The sorted rows of five of a 5×5 thread's two columns (x: left, x+1: right) at one row, and two
// of them merged.
struct SortedRowPair {
  int32_t left[5], right[5];
};
struct MergedRowPair {
  int32_t left[10], right[10];
};

// 5×5: each thread walks down two adjacent columns (x, x+1) making four outputs per step. Each row
// of six keys gives both columns' sorted rows of five from one sort of the four keys they share
// (sortedRowPair); down each column the rows are merged pairwise once each; the two windows of a
// step share four rows, whose middle six ranks are found once, and each window's median is then
// rank 5 of those six and its own fifth row (median_networks.h). About 54 min/max per output, and
// three key conversions where a one-column walk needs five. Each step's two new rows are loaded a
// step ahead, so that their latency passes under a step of sorting: the kernel needs about 128
// registers a thread, which leaves too few warps to hide it otherwise. `pairedRows`: rows 8-byte
// aligned (even width, aligned buffers), so that interior threads read a row's six keys as three
// float2 and every thread writes its pair as one.
__global__ void __launch_bounds__(kMedian5Threads, kMedian5MinBlocks)
    median5x5(const float* __restrict__ in, float* __restrict__ out, int ny, int nx, int z0,
              bool pairedRows, OutlierRule rule) {
  using namespace networks;
  const int x = 2 * (blockIdx.x * kMedian5Threads + threadIdx.x);
  if (x >= nx) return;
  const int y0 = blockIdx.y * kMedian5Rows;
  const int64_t z = int64_t(z0) + blockIdx.z;
  const float* slice = in + z * ny * nx;
  float* target = out + z * ny * nx;
  const bool second = x + 1 < nx;  // odd widths: the last thread has one column
  const bool interior = pairedRows && x >= 2 && x + 4 <= nx;
  int cols[6];
#pragma unroll
  for (int d = 0; d < 6; ++d) cols[d] = int(reflectIndex(x + d - 2, nx));
  auto load = [&](int y, float(&raw)[6]) {
    const int yy = (y >= 0 && y < ny) ? y : int(reflectIndex(y, ny));
    const float* row = slice + int64_t(yy) * nx;
    if (interior) {
      const float2 p = __ldg(reinterpret_cast<const float2*>(row + x - 2));
      const float2 q = __ldg(reinterpret_cast<const float2*>(row + x));
      const float2 r = __ldg(reinterpret_cast<const float2*>(row + x + 2));
      raw[0] = p.x, raw[1] = p.y, raw[2] = q.x, raw[3] = q.y, raw[4] = r.x, raw[5] = r.y;
    } else {
#pragma unroll
      for (int d = 0; d < 6; ++d) raw[d] = __ldg(row + cols[d]);
    }
  };
  auto sortRows = [](const float(&raw)[6], SortedRowPair& rows) {
    int32_t k[6];
#pragma unroll
    for (int d = 0; d < 6; ++d) k[d] = orderKey(__float_as_int(raw[d]));
    sortedRowPair(k, rows.left, rows.right);
  };
  auto merge = [](const SortedRowPair& p, const SortedRowPair& q, MergedRowPair& out) {
    mergeSorted<8>(p.left, q.left, out.left);
    mergeSorted<8>(p.right, q.right, out.right);
  };
  auto store = [&](int y, int32_t left, int32_t right) {
    const int64_t at = int64_t(y) * nx + x;
    float l = __int_as_float(orderKeyBits(left)), r = __int_as_float(orderKeyBits(right));
    if (rule.enabled) {
      l = applyRule(slice[at], l, rule);
      if (second) r = applyRule(slice[at + 1], r, rule);
    }
    if (pairedRows) {
      *reinterpret_cast<float2*>(target + at) = make_float2(l, r);
    } else {
      target[at] = l;
      if (second) target[at + 1] = r;
    }
  };
  const int yEnd = min(ny, y0 + kMedian5Rows);
  // One step: the outputs y, y+1 from the sorted rows a (y−2), c (y), d (y+1) and upper =
  // merge(y−1, y); sorts e (y+2) and f (y+3) from the rows loaded a step ago (raw), loads the
  // next step's (next), and leaves lower = merge(d, e). The next step's a, c, d and upper are this
  // step's c, e, f and lower.
  auto step = [&](int y, const SortedRowPair& a, const SortedRowPair& c, const SortedRowPair& d,
                  const MergedRowPair& upper, const float(&rawE)[6], const float(&rawF)[6],
                  SortedRowPair& e, SortedRowPair& f, MergedRowPair& lower, float(&nextE)[6],
                  float(&nextF)[6]) {
    sortRows(rawE, e);
    sortRows(rawF, f);
    load(y + 4, nextE);
    load(y + 5, nextF);
    merge(d, e, lower);
    int32_t middleL[6], middleR[6];
    sharedMiddle(upper.left, lower.left, middleL);
    sharedMiddle(upper.right, lower.right, middleR);
    store(y, windowMedian(middleL, a.left), windowMedian(middleR, a.right));
    if (y + 1 < yEnd) store(y + 1, windowMedian(middleL, f.left), windowMedian(middleR, f.right));
  };
  SortedRowPair rowsA, rowsB, rowsC, rowsD, rowsE, rowsF;
  MergedRowPair upper, lower;
  float raw0[6], raw1[6], raw2[6], raw3[6];
  load(y0 - 2, raw0);
  load(y0 - 1, raw1);
  load(y0, raw2);
  load(y0 + 1, raw3);
  sortRows(raw0, rowsA);
  sortRows(raw1, rowsB);
  sortRows(raw2, rowsC);
  sortRows(raw3, rowsD);
  merge(rowsB, rowsC, upper);
  load(y0 + 2, raw0);
  load(y0 + 3, raw1);
  // Two steps per iteration with the roles passed round, so that only the even rows' three sorted
  // pairs (a, c, e) still need copying at the end; the raw rows alternate between two buffers.
  for (int y = y0; y < yEnd; y += 4) {
    step(y, rowsA, rowsC, rowsD, upper, raw0, raw1, rowsE, rowsF, lower, raw2, raw3);
    if (y + 2 >= yEnd) break;
    step(y + 2, rowsC, rowsE, rowsF, lower, raw2, raw3, rowsA, rowsD, upper, raw0, raw1);
    // Now a = E (row y+2), c = A (row y+4), d = D, upper = upper.
    rowsC = rowsA;
    rowsA = rowsE;
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
