// The boundary deconvolution takes when none is named (compute/auto_boundary.h).
#include <gtest/gtest.h>

#include <string>

#include "compute/auto_boundary.h"
#include "compute/backend.h"

namespace stacklens::compute {
namespace {

DeconvolveParams params(bool threeD, double tv = 0) {
  DeconvolveParams p;
  p.threeD = threeD;
  p.tvLambda = tv;
  return p;
}

TEST(AutoBoundary, TakesReflectExactForAMirrorSymmetricPsf) {
  const Image psf = gaussianPsf(2.0, 1.5, 1.0);
  for (bool threeD : {true, false}) {
    const BoundaryChoice c = autoBoundary(psf, params(threeD));
    EXPECT_EQ(c.boundary, Boundary::ReflectExact) << threeD;
    EXPECT_EQ(c.reason, "the PSF is mirror-symmetric");
  }
  // An even side whose unpaired first sample is below rounding (a Gaussian of σ 1 on 16 samples)
  // counts as symmetric, as reflect-exact itself takes it (compute/mirror_psf.h).
  const Image even = gaussianPsf(1.0, 1.0, 1.0, {16, 16, 16});
  EXPECT_EQ(autoBoundary(even, params(true)).boundary, Boundary::ReflectExact);
}

TEST(AutoBoundary, TakesReflectOtherwiseAndSaysWhy) {
  Image psf = gaussianPsf(1.0, 1.0, 1.0);  // 9 × 9 × 9
  const Shape s = psf.shape();
  // A little flux one voxel off the centre along x, on the centre slice.
  psf.data()[((s.z / 2) * s.y + s.y / 2) * s.x + s.x / 2 + 1] += 1e-3f;
  for (bool threeD : {true, false}) {
    const BoundaryChoice c = autoBoundary(psf, params(threeD));
    EXPECT_EQ(c.boundary, Boundary::Reflect) << threeD;
    EXPECT_NE(c.reason.find("differs from its mirror image by"), std::string::npos) << c.reason;
  }
  // TV needs the padded frame whatever the PSF.
  const BoundaryChoice tv = autoBoundary(gaussianPsf(1.0, 1.0, 1.0), params(true, 0.01));
  EXPECT_EQ(tv.boundary, Boundary::Reflect);
  EXPECT_NE(tv.reason.find("TV"), std::string::npos);
}

// The choice made without building the Gaussian is the one checking the built PSF gives, for odd
// and fractional σ, in 2D and 3D, with and without TV.
TEST(AutoBoundary, ForAGaussianItIsTheChoiceItsBuiltPsfGives) {
  for (const double sigma : {0.4, 1.0, 1.3, 2.75})
    for (bool threeD : {true, false})
      for (double tv : {0.0, 0.002}) {
        const Image psf = gaussianPsf(threeD ? sigma : 0.0, sigma * 1.1, sigma);
        const BoundaryChoice built = autoBoundary(psf, params(threeD, tv));
        const BoundaryChoice unbuilt = autoBoundaryForGaussian(params(threeD, tv));
        EXPECT_EQ(built.boundary, unbuilt.boundary) << sigma << " " << threeD << " " << tv;
        EXPECT_EQ(built.reason, unbuilt.reason);
      }
}

TEST(AutoBoundary, In2dOnlyTheCentreSliceCounts) {
  // Symmetric in y and x on every slice, but its slices differ along z without mirror symmetry.
  Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const Shape s = psf.shape();
  for (int64_t i = 0; i < s.y * s.x; ++i) psf.data()[i] *= 3.f;  // the first slice only
  EXPECT_EQ(autoBoundary(psf, params(true)).boundary, Boundary::Reflect);
  EXPECT_EQ(autoBoundary(psf, params(false)).boundary, Boundary::ReflectExact);
}

}  // namespace
}  // namespace stacklens::compute
