// Min/max networks and keys for the GPU 5×5 median (shared-row merging); plain C++ so that the
// CPU tests can check them without a device (tests/compute/cuda_median_network_test.cpp).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define SL_HOST_DEVICE __host__ __device__
#else
#define SL_HOST_DEVICE
#endif
#ifdef __CUDA_ARCH__
#define SL_UNROLL _Pragma("unroll")
#else
#define SL_UNROLL
#endif

namespace stacklens::compute::cuda::networks {

// Padding: no key that orderKey makes is larger (one NaN's equals it, which changes no value).
constexpr int32_t kPad = INT32_MAX;

SL_HOST_DEVICE inline int32_t minKey(int32_t a, int32_t b) { return a < b ? a : b; }
SL_HOST_DEVICE inline int32_t maxKey(int32_t a, int32_t b) { return a < b ? b : a; }
SL_HOST_DEVICE inline void exchange(int32_t& a, int32_t& b) {
  const int32_t lo = minKey(a, b), hi = maxKey(a, b);
  a = lo;
  b = hi;
}

// Sorts five keys (the optimal 9-comparator network).
SL_HOST_DEVICE inline void sort5(int32_t (&a)[5]) {
  exchange(a[0], a[3]);
  exchange(a[1], a[4]);
  exchange(a[0], a[2]);
  exchange(a[1], a[3]);
  exchange(a[0], a[1]);
  exchange(a[2], a[4]);
  exchange(a[1], a[2]);
  exchange(a[3], a[4]);
  exchange(a[2], a[3]);
}

// Sorts four keys (the optimal 5-comparator network).
SL_HOST_DEVICE inline void sort4(int32_t (&a)[4]) {
  exchange(a[0], a[1]);
  exchange(a[2], a[3]);
  exchange(a[0], a[2]);
  exchange(a[1], a[3]);
  exchange(a[1], a[2]);
}

// Four sorted keys and one more, sorted: each place takes the larger of its own key and the new
// one's lower neighbour, capped by its own key (a linear insertion, four comparators).
SL_HOST_DEVICE inline void insertSorted(const int32_t (&s)[4], int32_t k, int32_t (&out)[5]) {
  out[0] = minKey(s[0], k);
  out[1] = minKey(s[1], maxKey(s[0], k));
  out[2] = minKey(s[2], maxKey(s[1], k));
  out[3] = minKey(s[3], maxKey(s[2], k));
  out[4] = maxKey(s[3], k);
}

// The two sorted rows of five in six adjacent keys of a row (columns x−2 … x+3), for the windows
// of columns x and x+1: the four keys they share are sorted once.
SL_HOST_DEVICE inline void sortedRowPair(const int32_t (&k)[6], int32_t (&left)[5],
                                         int32_t (&right)[5]) {
  int32_t shared[4] = {k[1], k[2], k[3], k[4]};
  sort4(shared);
  insertSorted(shared, k[0], left);
  insertSorted(shared, k[5], right);
}

// Batcher's odd–even merge of a[Lo..Hi] (inclusive) whose two halves are sorted, comparing
// elements R apart. Every index is a compile-time constant, so the arrays stay in registers and
// the compiler drops the comparators whose results are never used (only a few ranks are).
template <int Lo, int Hi, int R, int N>
SL_HOST_DEVICE inline void oddEvenMerge(int32_t (&a)[N]) {
  constexpr int Step = R * 2;
  if constexpr (Step < Hi - Lo) {
    oddEvenMerge<Lo, Hi, Step>(a);
    oddEvenMerge<Lo + R, Hi, Step>(a);
    SL_UNROLL
    for (int i = Lo + R; i < Hi - R; i += Step) exchange(a[i], a[i + R]);
  } else {
    exchange(a[Lo], a[Lo + R]);
  }
}

// The sorted union of two sorted lists of P and Q keys (P, Q ≤ Half), through a merge of
// 2·Half (a power of two) with padding above every key.
template <int Half, int P, int Q>
SL_HOST_DEVICE inline void mergeSorted(const int32_t (&p)[P], const int32_t (&q)[Q],
                                       int32_t (&out)[P + Q]) {
  int32_t a[2 * Half];
  SL_UNROLL
  for (int i = 0; i < Half; ++i) {
    a[i] = i < P ? p[i < P ? i : 0] : kPad;
    a[Half + i] = i < Q ? q[i < Q ? i : 0] : kPad;
  }
  oddEvenMerge<0, 2 * Half - 1, 1>(a);
  SL_UNROLL
  for (int i = 0; i < P + Q; ++i) out[i] = a[i];
}

// Two vertically adjacent 5×5 windows share four rows (20 keys). Of those, only ranks 7..12 can
// be the median (rank 12) of a window: the window adds five keys, so a shared key of rank r ends
// at a rank in [r, r+5]. `upper` and `lower` are the shared rows merged pairwise (sorted, 10
// each); the result is shared ranks 7..12, sorted.
SL_HOST_DEVICE inline void sharedMiddle(const int32_t (&upper)[10], const int32_t (&lower)[10],
                                        int32_t (&middle)[6]) {
  int32_t all[20];
  mergeSorted<16>(upper, lower, all);
  SL_UNROLL
  for (int i = 0; i < 6; ++i) middle[i] = all[7 + i];
}

// The median of a window: rank 5 of the shared middle six and the window's own sorted row.
SL_HOST_DEVICE inline int32_t windowMedian(const int32_t (&middle)[6], const int32_t (&row)[5]) {
  int32_t all[11];
  mergeSorted<8>(middle, row, all);
  return all[5];
}

// Keys of float bits in the CPU backend's total order (-0 just below +0, NaN above +Inf), in three
// integer operations: the usual sign-magnitude flip, then a shift down by 2^23 − 1 that wraps the
// negative NaNs (below −Inf after the flip) round to the top, beside the positive NaNs. Which NaN
// a key stands for is lost to the order but not to the result: a NaN median is written as the
// canonical quiet NaN, as the CPU backend writes it.
constexpr int32_t kNanWrap = 0x7fffff;
SL_HOST_DEVICE inline int32_t orderKey(int32_t bits) {
  const int32_t flipped = bits ^ ((bits >> 31) & 0x7fffffff);
  return int32_t(uint32_t(flipped) - uint32_t(kNanWrap));
}
// +Inf's key; every key above it is a NaN's.
constexpr int32_t kInfKey = 0x7f800000 - kNanWrap;
// The float bits of a key, every NaN as the canonical quiet NaN 0x7fc00000.
SL_HOST_DEVICE inline int32_t orderKeyBits(int32_t key) {
  if (key > kInfKey) return 0x7fc00000;
  const int32_t flipped = int32_t(uint32_t(key) + uint32_t(kNanWrap));
  return flipped ^ ((flipped >> 31) & 0x7fffffff);
}

}  // namespace stacklens::compute::cuda::networks
