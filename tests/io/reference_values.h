// The values a reference reader (astropy, libtiff's tiff2rgba) read from the files under
// data/reference_agreement/, stored by the script there.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "test_support.h"

namespace stacklens::io::test {

inline const std::string kReferenceAgreement =
    std::string(STACKLENS_TEST_DATA) + "/reference_agreement/";

// Plane `plane` of the file, z, y, x order.
inline std::vector<float> referenceValues(const std::string& name, int plane = 0) {
  const std::string bytes =
      readBytes(kReferenceAgreement + name + ".p" + std::to_string(plane) + ".f32");
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

}  // namespace stacklens::io::test
