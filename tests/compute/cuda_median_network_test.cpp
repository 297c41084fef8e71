// The min/max networks of the GPU 5×5 median (compute/cuda/kernels/median_networks.h), checked on
// the CPU against sorting: they run here without a device, so CI exercises the selection logic.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "compute/cuda/kernels/median_networks.h"

namespace stacklens::compute::cuda::networks {
namespace {

TEST(CudaMedianNetwork, SortFiveSortsEveryZeroOneInput) {
  // The 0-1 principle: a comparator network that sorts every 0/1 input sorts every input.
  for (int bits = 0; bits < 32; ++bits) {
    int32_t a[5];
    for (int i = 0; i < 5; ++i) a[i] = (bits >> i) & 1;
    sort5(a);
    EXPECT_TRUE(std::is_sorted(a, a + 5)) << bits;
  }
}

TEST(CudaMedianNetwork, SortFourSortsEveryZeroOneInput) {
  for (int bits = 0; bits < 16; ++bits) {
    int32_t a[4];
    for (int i = 0; i < 4; ++i) a[i] = (bits >> i) & 1;
    sort4(a);
    EXPECT_TRUE(std::is_sorted(a, a + 4)) << bits;
  }
}

// Six keys of a row give the sorted rows of five of two adjacent windows (columns 0–4 and 1–5).
TEST(CudaMedianNetwork, RowPairGivesBothSortedRows) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20000; ++trial) {
    const int32_t range = trial % 2 == 0 ? 3 : INT32_MAX - 1;
    std::uniform_int_distribution<int32_t> key(-range, range);
    int32_t k[6], left[5], right[5];
    for (auto& v : k) v = key(rng);
    sortedRowPair(k, left, right);
    int32_t wantLeft[5], wantRight[5];
    std::copy(k, k + 5, wantLeft);
    std::copy(k + 1, k + 6, wantRight);
    std::sort(wantLeft, wantLeft + 5);
    std::sort(wantRight, wantRight + 5);
    ASSERT_TRUE(std::equal(left, left + 5, wantLeft)) << trial;
    ASSERT_TRUE(std::equal(right, right + 5, wantRight)) << trial;
  }
}

// The keys follow the CPU backend's order (-0 below +0, every NaN above +Inf) and give back the
// float's bits, every NaN as the canonical quiet NaN.
TEST(CudaMedianNetwork, OrderKeysFollowTheTotalOrder) {
  auto bitsOf = [](float f) { return std::bit_cast<int32_t>(f); };
  const float inf = std::numeric_limits<float>::infinity();
  const float denormal = std::numeric_limits<float>::denorm_min();
  // Strictly increasing, every NaN excluded.
  const std::vector<float> ordered = {-inf,
                                      -std::numeric_limits<float>::max(),
                                      -1.5f,
                                      -1.0f,
                                      -std::numeric_limits<float>::min(),
                                      -denormal,
                                      -0.0f,
                                      0.0f,
                                      denormal,
                                      std::numeric_limits<float>::min(),
                                      1.0f,
                                      1.5f,
                                      std::numeric_limits<float>::max(),
                                      inf};
  for (size_t i = 0; i + 1 < ordered.size(); ++i)
    EXPECT_LT(orderKey(bitsOf(ordered[i])), orderKey(bitsOf(ordered[i + 1]))) << i;
  for (float f : ordered) EXPECT_EQ(orderKeyBits(orderKey(bitsOf(f))), bitsOf(f)) << f;
  // Every NaN pattern at the ends of both signs' NaN ranges, and the quiet ones.
  const uint32_t nans[] = {0x7f800001u, 0x7fbfffffu, 0x7fc00000u, 0x7fffffffu,
                           0xff800001u, 0xffbfffffu, 0xffc00000u, 0xffffffffu};
  for (uint32_t n : nans) {
    const int32_t key = orderKey(int32_t(n));
    EXPECT_GT(key, orderKey(bitsOf(inf))) << std::hex << n;
    EXPECT_EQ(orderKeyBits(key), 0x7fc00000) << std::hex << n;
  }
  // Random non-NaN floats: the keys order as the floats do (-0 below +0) and map back.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200000; ++trial) {
    const int32_t a = int32_t(rng()), b = int32_t(rng());
    const float fa = std::bit_cast<float>(a), fb = std::bit_cast<float>(b);
    if (std::isnan(fa) || std::isnan(fb)) continue;
    const bool less = fa < fb || (fa == fb && std::signbit(fa) && !std::signbit(fb));
    ASSERT_EQ(orderKey(a) < orderKey(b), less) << std::hex << a << " " << b;
    ASSERT_EQ(orderKeyBits(orderKey(a)), a);
  }
}

TEST(CudaMedianNetwork, MergeOfTwoSortedListsIsTheirSortedUnion) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> key(-4, 4);  // many ties
  for (int trial = 0; trial < 2000; ++trial) {
    int32_t p[5], q[5], got[10];
    for (auto& v : p) v = key(rng);
    for (auto& v : q) v = key(rng);
    std::sort(p, p + 5);
    std::sort(q, q + 5);
    mergeSorted<8>(p, q, got);
    std::vector<int32_t> want(p, p + 5);
    want.insert(want.end(), q, q + 5);
    std::sort(want.begin(), want.end());
    ASSERT_TRUE(std::equal(want.begin(), want.end(), got)) << trial;
  }
}

// The whole 5×5 scheme for two vertically adjacent windows (six rows) against nth_element.
TEST(CudaMedianNetwork, SharedRowsGiveBothWindowMedians) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20000; ++trial) {
    const int32_t range = trial % 3 == 0 ? 3 : trial % 3 == 1 ? 50 : INT32_MAX - 1;
    std::uniform_int_distribution<int32_t> key(-range, range);
    std::array<std::array<int32_t, 5>, 6> rows;
    for (auto& r : rows)
      for (auto& v : r) v = key(rng);
    int32_t sorted[6][5];
    for (int r = 0; r < 6; ++r) {
      std::copy(rows[r].begin(), rows[r].end(), sorted[r]);
      sort5(sorted[r]);
    }
    int32_t upper[10], lower[10], middle[6];
    mergeSorted<8>(sorted[1], sorted[2], upper);
    mergeSorted<8>(sorted[3], sorted[4], lower);
    sharedMiddle(upper, lower, middle);
    for (int w = 0; w < 2; ++w) {
      std::vector<int32_t> window;
      for (int r = w; r < w + 5; ++r) window.insert(window.end(), rows[r].begin(), rows[r].end());
      std::nth_element(window.begin(), window.begin() + 12, window.end());
      const int32_t got = windowMedian(middle, sorted[w == 0 ? 0 : 5]);
      ASSERT_EQ(got, window[12]) << "trial " << trial << " window " << w;
    }
  }
}

}  // namespace
}  // namespace stacklens::compute::cuda::networks
