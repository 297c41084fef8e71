// Connected-component labelling written out directly, the reference for every backend: a flood
// fill from each unvisited pixel above the threshold in raster order (which numbers components
// like scipy.ndimage.label), slice by slice, then small components dropped and the rest renumbered.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compute/image.h"

namespace stacklens::testing {

inline std::vector<int32_t> labelReference(const compute::Image& im, double threshold,
                                           int connectivity, int64_t minPixels) {
  const compute::Shape s = im.shape();
  std::vector<int32_t> lab(static_cast<size_t>(s.count()), 0);
  std::vector<int64_t> sizes{0};
  int32_t next = 0;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        const int64_t i = (z * s.y + y) * s.x + x;
        if (lab[i] || !(im.data()[i] > threshold)) continue;
        lab[i] = ++next;
        sizes.push_back(0);
        std::vector<std::pair<int64_t, int64_t>> stack{{y, x}};
        while (!stack.empty()) {
          auto [cy, cx] = stack.back();
          stack.pop_back();
          ++sizes[next];
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              if ((dy == 0 && dx == 0) || (connectivity == 4 && dy != 0 && dx != 0)) continue;
              const int64_t ny = cy + dy, nx = cx + dx;
              if (ny < 0 || nx < 0 || ny >= s.y || nx >= s.x) continue;
              const int64_t j = (z * s.y + ny) * s.x + nx;
              if (lab[j] || !(im.data()[j] > threshold)) continue;
              lab[j] = next;
              stack.push_back({ny, nx});
            }
        }
      }
  std::vector<int32_t> renumber(sizes.size(), 0);
  int32_t kept = 0;
  for (size_t l = 1; l < sizes.size(); ++l)
    if (sizes[l] >= minPixels) renumber[l] = ++kept;
  for (auto& l : lab) l = renumber[l];
  return lab;
}

// Every label equal; the first difference and how many there are reported.
inline void expectLabels(const compute::LabelImage& got, const std::vector<int32_t>& want,
                         const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.shape().count()), want.size()) << what;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got.data()[i] != want[i] && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << what << ": first difference at index " << first << " got "
                     << got.data()[first] << " want " << want[first];
}

}  // namespace stacklens::testing
