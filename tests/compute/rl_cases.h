// The Richardson–Lucy settings the GPU tests go through: every boundary, each with plain
// iterations, the Biggs–Andrews acceleration and TV regularisation (20 iterations), labelled for
// failure messages.
#pragma once

#include <string>
#include <vector>

#include "compute/params.h"

namespace stacklens::testing {

struct RlCase {
  std::string label;
  compute::DeconvolveParams params;
};

inline std::vector<RlCase> rlBoundaryAndOptionCases() {
  using compute::Boundary;
  std::vector<RlCase> cases;
  for (Boundary b : {Boundary::Reflect, Boundary::Periodic, Boundary::Zero})
    for (int variant = 0; variant < 3; ++variant) {
      compute::DeconvolveParams p;
      p.iterations = 20;
      p.boundary = b;
      p.accelerate = variant == 1;
      p.tvLambda = variant == 2 ? 0.002 : 0.0;
      cases.push_back(
          {"boundary " + std::to_string(int(b)) + " variant " + std::to_string(variant), p});
    }
  return cases;
}

}  // namespace stacklens::testing
