// The volume renderer on every backend against references computed here (a view along an axis
// with one output pixel per voxel and one sample per voxel is a z-projection, brute force over
// the voxels; a view from the side is a projection along x), the true voxel aspect, a sphere's
// iso-surface against its closed-form disc, attenuation hiding what lies behind, the argument
// checks; the view's rotation; CUDA against the CPU on fresh random volumes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "compute/backend.h"
#include "compute/volume_render.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;

namespace {

float at(const Image& im, int64_t z, int64_t y, int64_t x) {
  return im.data()[(z * im.shape().y + y) * im.shape().x + x];
}

// The zoom at which one output pixel is one voxel of side `voxel` (model units) on a
// width × height output: pixel = 2 · radius / (zoom · min side).
double zoomForPixel(const Shape& s, double voxel, int width, int height) {
  const double longest = double(std::max({s.x, s.y, s.z}));
  const double hx = s.x / longest / 2, hy = s.y / longest / 2, hz = s.z / longest / 2;
  const double radius = std::sqrt(hx * hx + hy * hy + hz * hz);
  return 2 * radius / (voxel * std::min(width, height));
}

VolumeRenderParams alongZ(const Shape& s, VolumeMode mode) {
  VolumeRenderParams p;
  p.mode = mode;
  p.width = int(s.x), p.height = int(s.y);
  p.zoom = zoomForPixel(s, 1.0 / double(std::max({s.x, s.y, s.z})), p.width, p.height);
  return p;
}

int64_t hitCount(const Image& im) {
  int64_t n = 0;
  for (int64_t i = 0; i < im.shape().count(); ++i) n += !std::isnan(im.data()[i]);
  return n;
}

class VolumeRender : public stacklens::testing::OnEachBackend {
 protected:
  // CUDA's texture unit interpolates with 8-bit fractions: a sample between two voxels may be off
  // by 1/256 of the step between them, here at most `range`.
  double tolerance(double onCpu, double range) const {
    return GetParam() == "cuda" ? std::max(onCpu, range / 256) : onCpu;
  }
};
STACKLENS_ON_EACH_BACKEND(VolumeRender);

TEST_P(VolumeRender, AlongZWithOneSamplePerVoxelIsTheZProjection) {
  // Prepare
  const Shape s{12, 20, 16};
  const Image vol = stacklens::testing::randomImage(s, 3, -1.f, 4.f);
  const double tol = tolerance(1e-4, 5.0);

  // Run
  const Image mip = onHost(backend->renderVolume(vol, alongZ(s, VolumeMode::Mip)));
  const Image mean = onHost(backend->renderVolume(vol, alongZ(s, VolumeMode::Average)));

  // Verify
  ASSERT_EQ(mip.shape(), (Shape{1, 20, 16}));
  for (int64_t y = 0; y < s.y; ++y)
    for (int64_t x = 0; x < s.x; ++x) {
      double most = -1e30, sum = 0;
      for (int64_t z = 0; z < s.z; ++z)
        most = std::max(most, double(at(vol, z, y, x))), sum += at(vol, z, y, x);
      ASSERT_NEAR(at(mip, 0, y, x), most, tol) << y << "," << x;
      ASSERT_NEAR(at(mean, 0, y, x), sum / double(s.z), tol) << y << "," << x;
    }
}

TEST_P(VolumeRender, TurnedAQuarterAboutYItIsTheProjectionAlongX) {
  // Prepare
  const Shape s{12, 20, 16};
  const Image vol = stacklens::testing::randomImage(s, 4, 0.f, 1.f);
  VolumeRenderParams p;
  orbitRotation(90, 0, p.rotation);  // the view's x is the volume's z, looking along −x
  p.width = int(s.z), p.height = int(s.y);
  p.zoom = zoomForPixel(s, 1.0 / 20, p.width, p.height);

  // Run
  const Image mip = onHost(backend->renderVolume(vol, p));

  // Verify
  for (int64_t y = 0; y < s.y; ++y)
    for (int64_t z = 0; z < s.z; ++z) {
      float most = -1;
      for (int64_t x = 0; x < s.x; ++x) most = std::max(most, at(vol, z, y, x));
      ASSERT_NEAR(at(mip, 0, y, z), most, tolerance(1e-4, 1.0)) << y << "," << z;
    }
}

TEST_P(VolumeRender, KeepsTheVoxelsTrueAspect) {
  // Prepare: 6 slices 2 apart by 20 × 20 pixels 1 apart; from the side the volume is 12 pixels
  // wide.
  Image vol = Image::host({6, 20, 20});
  std::fill_n(vol.data(), vol.shape().count(), 1.f);
  vol.spacing = {2.0, 1.0, 1.0, true, "um"};
  VolumeRenderParams p;
  orbitRotation(90, 0, p.rotation);
  p.width = p.height = 40;
  p.zoom = zoomForPixel({12, 20, 20}, 1.0 / 20, p.width, p.height);

  // Run
  const Image side = onHost(backend->renderVolume(vol, p));

  // Verify
  int64_t columns = 0, rows = 0;
  for (int64_t i = 0; i < 40; ++i) {
    columns += !std::isnan(at(side, 0, 20, i));
    rows += !std::isnan(at(side, 0, i, 20));
  }
  EXPECT_EQ(columns, 12);
  EXPECT_EQ(rows, 20);
}

TEST_P(VolumeRender, TheIsoSurfaceOfABallIsAShadedDisc) {
  // Prepare: values fall off linearly from the centre; the level 10 voxels out is a ball of
  // radius 10.
  const int n = 41;
  Image vol = Image::host({n, n, n});
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        vol.data()[(int64_t(z) * n + y) * n + x] = float(
            20 -
            std::sqrt(double((x - 20) * (x - 20) + (y - 20) * (y - 20) + (z - 20) * (z - 20))));
  VolumeRenderParams p = alongZ({n, n, n}, VolumeMode::IsoSurface);
  orbitRotation(35, -20, p.rotation);  // a ball looks the same from everywhere
  p.isoLevel = 10, p.low = 0, p.high = 1;

  // Run
  const Image im = onHost(backend->renderVolume(vol, p));

  // Verify
  EXPECT_NEAR(double(hitCount(im)), std::numbers::pi * 100, 0.05 * std::numbers::pi * 100);
  EXPECT_NEAR(at(im, 0, 20, 20), 1.0, 0.01);  // facing the light: fully lit
  EXPECT_LT(at(im, 0, 20, 29), 0.75);         // near the rim: turned away, darker
  EXPECT_GE(at(im, 0, 20, 29), 0.2);
  EXPECT_TRUE(std::isnan(at(im, 0, 20, 32)));  // outside the disc
}

TEST_P(VolumeRender, AttenuationHidesWhatLiesBehindBrightMatter) {
  // Prepare: along one ray a wall of 1 in front (z 2..5), a brighter voxel of 2 behind it (z 10).
  Image vol = Image::host({16, 4, 4});
  for (int z = 2; z < 6; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) vol.data()[(z * 4 + y) * 4 + x] = 1.f;
  vol.data()[(10 * 4 + 1) * 4 + 1] = 2.f;
  VolumeRenderParams p = alongZ(vol.shape(), VolumeMode::AttenuatedMip);
  p.low = 0, p.high = 2;
  VolumeRenderParams plain = p, attenuated = p;
  plain.attenuation = 0;
  attenuated.attenuation = 2;
  const double tol = tolerance(1e-5, 2.0);

  // Run
  const Image seen = onHost(backend->renderVolume(vol, plain));
  const Image hidden = onHost(backend->renderVolume(vol, attenuated));

  // Verify
  EXPECT_NEAR(at(seen, 0, 1, 1), 2.0, tol);    // no attenuation: the MIP
  EXPECT_NEAR(at(hidden, 0, 1, 1), 1.0, tol);  // the wall (its first voxel passes unweakened)
  EXPECT_NEAR(at(hidden, 0, 0, 0), 1.0, tol);
}

TEST_P(VolumeRender, RaysThatMissOrMeetOnlyNaNAreNaN) {
  // Prepare
  Image vol = stacklens::testing::randomImage({8, 8, 8}, 5, 0.f, 1.f);
  for (int64_t z = 0; z < 8; ++z)
    vol.data()[(z * 8 + 2) * 8 + 2] = std::numeric_limits<float>::quiet_NaN();
  VolumeRenderParams p = alongZ(vol.shape(), VolumeMode::Mip);
  VolumeRenderParams wideView = p;
  wideView.width = wideView.height = 64, wideView.zoom = 1;

  // Run
  const Image along = onHost(backend->renderVolume(vol, p));
  const Image wide = onHost(backend->renderVolume(vol, wideView));

  // Verify
  EXPECT_TRUE(std::isnan(at(along, 0, 2, 2)));  // every sample of its ray is NaN
  EXPECT_FALSE(std::isnan(at(along, 0, 5, 5)));
  EXPECT_TRUE(std::isnan(at(wide, 0, 0, 0)));  // a corner of the output lies outside the cube
}

TEST_P(VolumeRender, RejectsWhatItCannotDraw) {
  // Prepare
  const Image vol = Image::host({4, 4, 4});
  VolumeRenderParams p;

  // Run, Verify
  p.width = 0;
  EXPECT_THROW(backend->renderVolume(vol, p), InvalidArgument);
  p.width = 16, p.zoom = 0;
  EXPECT_THROW(backend->renderVolume(vol, p), InvalidArgument);
  p.zoom = 1;
  EXPECT_THROW(backend->renderVolume(Image::host({0, 4, 4}), p), InvalidArgument);
  EXPECT_THROW(parseVolumeMode("mips"), InvalidArgument);
  EXPECT_EQ(parseVolumeMode("attenuated-mip"), VolumeMode::AttenuatedMip);
}

TEST(VolumeView, TurningKeepsTheRotationOrthonormal) {
  // Prepare
  double r[9];
  orbitRotation(0, 0, r);

  // Run
  for (int k = 0; k < 500; ++k) turnView(r, 0.7, -1.3, r);

  // Verify
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double dot =
          r[3 * i] * r[3 * j] + r[3 * i + 1] * r[3 * j + 1] + r[3 * i + 2] * r[3 * j + 2];
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-9);
    }
}

// The CUDA backend against the CPU backend on a fresh random volume in every mode. The texture
// unit interpolates with 8-bit fractions: pictures agree to a small part of the range.
class VolumeRenderCudaAndCpu : public stacklens::testing::GpuTest {};

TEST_F(VolumeRenderCudaAndCpu, AgreeOnFreshRandomVolumes) {
  // Prepare
  std::random_device seed;
  const Shape s{37, 53, 61};
  Image vol = stacklens::testing::randomImage(s, seed(), 0.f, 1.f);
  vol.spacing = {1.7, 1.0, 1.0, true, "um"};

  for (VolumeMode mode :
       {VolumeMode::Mip, VolumeMode::AttenuatedMip, VolumeMode::Average, VolumeMode::IsoSurface}) {
    VolumeRenderParams p;
    p.mode = mode;
    p.width = 96, p.height = 80;
    p.isoLevel = 0.8, p.attenuation = 0.3;
    orbitRotation(27, 41, p.rotation);

    // Run
    const Image want = cpu->renderVolume(vol, p);
    const Image got = gpu->download(gpu->renderVolume(vol, p));

    // Verify
    double diff = 0;
    int64_t n = 0, disagree = 0;
    for (int64_t i = 0; i < want.shape().count(); ++i) {
      const float a = want.data()[i], b = got.data()[i];
      if (std::isnan(a) != std::isnan(b)) {
        ++disagree;
        continue;
      }
      if (!std::isnan(a)) diff += std::fabs(double(a) - b), ++n;
    }
    EXPECT_LT(diff / double(std::max<int64_t>(n, 1)), 0.01) << volumeModeName(mode);
    EXPECT_LT(disagree, want.shape().count() / 100) << volumeModeName(mode);  // rims only
  }
}

}  // namespace
