// DS9's physical pixels: the pixels of the original file an image was cut or binned from, tied
// to the image's own pixels by the IRAF keywords LTM and LTV.
#pragma once

#include <array>
#include <vector>

namespace stacklens::io {

struct HeaderCard;

// image = ltm · physical + ltv, both 1-based (the FITS keywords LTM1_1, LTM1_2, LTM2_1, LTM2_2,
// LTV1, LTV2); the identity when the header has none, as DS9 takes it.
struct PhysicalToImage {
  std::array<double, 4> ltm{1, 0, 0, 1};  // {LTM1_1, LTM1_2, LTM2_1, LTM2_2}
  std::array<double, 2> ltv{0, 0};
  bool identity() const {
    return ltm == std::array<double, 4>{1, 0, 0, 1} && ltv[0] == 0 && ltv[1] == 0;
  }
  // False when the matrix cannot be inverted (a damaged header): such regions are not placed.
  bool invertible() const;

  // From an image's header cards; missing keywords keep the identity's values. A singular or
  // non-finite LTM is kept as read (invertible() then says so).
  static PhysicalToImage fromHeader(const std::vector<HeaderCard>& cards);
};

}  // namespace stacklens::io
