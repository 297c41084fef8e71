// Which PSFs the fused Richardson–Lucy passes treat as having a real OTF
// (compute/cuda/psf_symmetry.h): plain C++, so it runs without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compute/cuda/psf_symmetry.h"

namespace stacklens::compute::cuda {
namespace {

TEST(PsfSymmetry, OddPalindromesArePointSymmetric) {
  EXPECT_TRUE(isPointSymmetric({1.f}, 1, 1, 1));
  EXPECT_TRUE(isPointSymmetric({1, 2, 3, 4, 5, 4, 3, 2, 1}, 1, 3, 3));
  // Mirrored through the centre, not about an axis: (y, x) ↔ (2 − y, 2 − x).
  EXPECT_TRUE(isPointSymmetric({1, 2, 3, 4, 5, 4, 3, 2, 1}, 1, 1, 9));
  std::vector<float> volume(3 * 5 * 7);
  for (size_t i = 0; i < volume.size(); ++i)
    volume[i] = volume[volume.size() - 1 - i] = float(i % 11);
  EXPECT_TRUE(isPointSymmetric(volume, 3, 5, 7));
}

TEST(PsfSymmetry, OthersAreNot) {
  // Symmetric about an axis only: (y, x) ↔ (y, 2 − x).
  EXPECT_FALSE(isPointSymmetric({1, 2, 1, 3, 4, 3, 5, 6, 5}, 1, 3, 3));
  // One value off, by one unit in the last place.
  std::vector<float> off{1, 2, 3, 4, 5, 4, 3, 2, 1};
  off[2] = std::nextafter(3.f, 4.f);
  EXPECT_FALSE(isPointSymmetric(off, 1, 3, 3));
  // Even sides: the centre sample (index size / 2) is not the middle, so a palindrome is not
  // symmetric about it.
  EXPECT_FALSE(isPointSymmetric({1, 2, 2, 1}, 1, 2, 2));
  EXPECT_FALSE(isPointSymmetric({1, 2, 3, 3, 2, 1}, 1, 1, 6));
  // Values that do not match the shape.
  EXPECT_FALSE(isPointSymmetric({1, 2, 1}, 1, 3, 3));
}

}  // namespace
}  // namespace stacklens::compute::cuda
