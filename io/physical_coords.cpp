// Reading LTM/LTV from header cards.
#include "io/physical_coords.h"

#include <cmath>

#include "io/stack.h"
#include "io/text_fields.h"

namespace stacklens::io {

bool PhysicalToImage::invertible() const {
  const double det = ltm[0] * ltm[3] - ltm[1] * ltm[2];
  return std::isfinite(det) && det != 0 && std::isfinite(ltv[0]) && std::isfinite(ltv[1]);
}

PhysicalToImage PhysicalToImage::fromHeader(const std::vector<HeaderCard>& cards) {
  PhysicalToImage t;
  const std::pair<const char*, double*> keys[] = {{"LTM1_1", &t.ltm[0]}, {"LTM1_2", &t.ltm[1]},
                                                  {"LTM2_1", &t.ltm[2]}, {"LTM2_2", &t.ltm[3]},
                                                  {"LTV1", &t.ltv[0]},   {"LTV2", &t.ltv[1]}};
  for (const HeaderCard& card : cards)
    for (const auto& [key, value] : keys)
      if (trimmed(card.key) == key) {
        double v = 0;
        if (parseNumber(trimmed(card.value), v)) *value = v;
      }
  return t;
}

}  // namespace stacklens::io
