// The min/max networks of the GPU 5×5 median (compute/cuda/kernels/median_networks.h), checked on
// the CPU against sorting: they run here without a device, so CI exercises the selection logic.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
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
