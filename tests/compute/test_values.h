// Values and data paths that many compute tests use: one definition, so that the test files can
// be compiled together in batches (STACKLENS_UNITY_TESTS).
#pragma once

#include <limits>
#include <string>

namespace stacklens::testing {

inline const float kNaN = std::numeric_limits<float>::quiet_NaN();
inline const float kInf = std::numeric_limits<float>::infinity();

// Reference images and tables computed with SciPy, scikit-image and astropy.
inline const std::string kAnalysisData = std::string(STACKLENS_TEST_DATA) + "/analysis/";

}  // namespace stacklens::testing
