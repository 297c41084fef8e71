// stacklens-cli measure-psf: on synthetic FITS fields of Gaussian stars (and a TIFF stack of
// beads) written here, the PSF read back has sum 1, an odd side, the data's spacing, a HISTORY
// line and the FWHM of the stars' effective PSF (the Gaussian averaged over a pixel) within 2 %;
// the JSON report counts the stars used and gives the rejected ones' reasons; --stars picks them
// from a segmentation; bad options and unusable stars are usage errors that leave no file, a
// missing input an input/output error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "compute/image.h"
#include "compute/psf/measured_psf.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "temp_folder_test.h"

namespace {

namespace fs = std::filesystem;
constexpr double kFwhmPerSigma = 2.3548200450309493;

double pixelGaussian(double i, double c, double sigma) {
  const double s = sigma * std::numbers::sqrt2;
  return 0.5 * (std::erf((i + 0.5 - c) / s) - std::erf((i - 0.5 - c) / s));
}

// The FWHM of a Gaussian averaged over a pixel: where its pixel mean falls to half, by bisection.
double pixelGaussianFwhm(double fwhm) {
  const double sigma = fwhm / kFwhmPerSigma, half = pixelGaussian(0, 0, sigma) / 2;
  double lo = 0, hi = 20;
  for (int i = 0; i < 100; ++i)
    ((pixelGaussian((lo + hi) / 2, 0, sigma) > half) ? lo : hi) = (lo + hi) / 2;
  return lo + hi;
}

struct Star {
  double x, y, z, flux;
};

// A z × y × x stack of pixel-integrated Gaussians (sigmaZ 0: each star on slice z only) on a
// sky of 100 with photon and read noise.
std::vector<float> field(int64_t nz, int64_t ny, int64_t nx, const std::vector<Star>& stars,
                         double fwhm, double fwhmZ) {
  std::vector<double> v(size_t(nz * ny * nx), 100.0);
  const double s = fwhm / kFwhmPerSigma, sz = fwhmZ / kFwhmPerSigma;
  for (const Star& st : stars)
    for (int64_t z = 0; z < nz; ++z) {
      const double pz =
          fwhmZ > 0 ? pixelGaussian(double(z), st.z, sz) : (z == int64_t(st.z) ? 1 : 0);
      if (pz < 1e-9) continue;
      for (int64_t y = std::max<int64_t>(0, int64_t(st.y) - 12);
           y <= std::min(ny - 1, int64_t(st.y) + 12); ++y)
        for (int64_t x = std::max<int64_t>(0, int64_t(st.x) - 12);
             x <= std::min(nx - 1, int64_t(st.x) + 12); ++x)
          v[size_t((z * ny + y) * nx + x)] +=
              st.flux * pz * pixelGaussian(double(y), st.y, s) * pixelGaussian(double(x), st.x, s);
    }
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0, 1);
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = float(v[i] + normal(rng) * std::sqrt(v[i] + 25));
  return out;
}

// Twelve stars on a jittered 4 × 3 grid of 40 px cells.
std::vector<Star> grid(double z) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> jitter(-6, 6), flux(2e4, 2e5);
  std::vector<Star> stars;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i)
      stars.push_back({20 + 40.0 * i + jitter(rng), 20 + 40.0 * j + jitter(rng), z, flux(rng)});
  return stars;
}

class CliMeasurePsf : public stacklens::testing::TempFolderTest {
 protected:
  CliMeasurePsf() : TempFolderTest("stacklens_cli_measure_psf_") {}
  static stacklens::compute::Image read(const std::string& file, stacklens::io::StackInfo* info) {
    auto r = stacklens::io::openStack(file);
    *info = r->info();
    auto im = stacklens::compute::Image::host({info->z, info->y, info->x});
    for (int64_t z = 0; z < info->z; ++z) r->readSlice(z, im.slice(z));
    return im;
  }
  static bool hasHistory(const stacklens::io::StackInfo& info, const std::string& text) {
    for (const auto& c : info.header)
      if (c.key == "HISTORY" && c.comment.find(text) != std::string::npos) return true;
    return false;
  }
  static double sum(const stacklens::compute::Image& im) {
    double s = 0;
    for (int64_t i = 0; i < im.shape().count(); ++i) s += im.data()[i];
    return s;
  }
};

TEST_F(CliMeasurePsf, StarsAtGivenPositionsGiveTheirFwhmAndTheReport) {
  const auto stars = grid(0);
  const auto pixels = field(1, 120, 160, stars, 3.0, 0);
  stacklens::io::writeStack(path("field.fits"), pixels.data(), 1, 120, 160, {});
  std::string at;
  for (const Star& s : stars)
    at += " --at " + std::to_string(std::lround(s.x)) + "," + std::to_string(std::lround(s.y));
  CliResult r = runCliSeparately("measure-psf " + path("field.fits") + " " + path("psf.fits") + at +
                                 " --at 2,60");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"used\": 12,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"reason\": \"too close to the edge\""), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("star 12 at (2, 60): not used: too close to the edge"), std::string::npos)
      << r.err;
  stacklens::io::StackInfo info;
  const auto psf = read(path("psf.fits"), &info);
  EXPECT_EQ(info.z, 1);
  EXPECT_EQ(info.x % 2, 1);
  EXPECT_EQ(info.y, info.x);
  EXPECT_NEAR(sum(psf), 1.0, 1e-5);
  const auto fwhm = stacklens::compute::psf::psfFwhm(psf);
  const double want = pixelGaussianFwhm(3.0);
  EXPECT_NEAR(fwhm[0], want, 0.02 * want);
  EXPECT_NEAR(fwhm[1], want, 0.02 * want);
  EXPECT_TRUE(hasHistory(info, "measure-psf 2d: 12 of 13 stars")) << "no HISTORY";
  // The FWHM printed is the written PSF's.
  const size_t k = r.out.find("\"fwhm_x\": ");
  ASSERT_NE(k, std::string::npos);
  EXPECT_NEAR(std::stod(r.out.substr(k + 10)), fwhm[0], 1e-3);
}

TEST_F(CliMeasurePsf, StarsPickedFromASegmentation) {
  const auto pixels = field(1, 120, 160, grid(0), 3.0, 0);
  stacklens::io::writeStack(path("field.fits"), pixels.data(), 1, 120, 160, {});
  CliResult r = runCliSeparately("measure-psf " + path("field.fits") + " " + path("psf.tif") +
                                 " --stars 6 --backend cpu --size 13");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"used\": 6,"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("6 of 12 sources picked as PSF stars"), std::string::npos) << r.err;
  stacklens::io::StackInfo info;
  const auto psf = read(path("psf.tif"), &info);
  EXPECT_EQ(info.x, 13);
  const double want = pixelGaussianFwhm(3.0);
  EXPECT_NEAR(stacklens::compute::psf::psfFwhm(psf)[0], want, 0.02 * want);
}

TEST_F(CliMeasurePsf, BeadsInAStackGiveEachAxisAndKeepTheSpacing) {
  std::vector<Star> beads;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i)
      beads.push_back({28.3 + 36 * i, 28.6 + 36 * j, 24.2, 2e5 * (1 + i + j)});
  const auto pixels = field(48, 92, 92, beads, 3.0, 5.0);
  stacklens::io::WriteOptions o;
  o.spacing = {0.25, 0.1, 0.1};
  o.units = {"um", "um", "um"};
  o.spacingKnown = true;
  stacklens::io::writeStack(path("beads.tif"), pixels.data(), 48, 92, 92, o);
  CliResult r = runCliSeparately("measure-psf " + path("beads.tif") + " " + path("psf.fits") +
                                 " --at 28,29,24 --at 64,29,24 --at 28,65,24 --at 64,65,24");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"used\": 4,"), std::string::npos) << r.out;
  stacklens::io::StackInfo info;
  const auto psf = read(path("psf.fits"), &info);
  EXPECT_GT(info.z, 9);
  EXPECT_EQ(info.z % 2, 1);
  EXPECT_TRUE(info.spacingKnown);
  EXPECT_NEAR(info.spacing[0], 0.25, 1e-6);
  EXPECT_NEAR(info.spacing[2], 0.1, 1e-6);
  const auto fwhm = stacklens::compute::psf::psfFwhm(psf);
  EXPECT_NEAR(fwhm[0], pixelGaussianFwhm(3.0), 0.02 * pixelGaussianFwhm(3.0));
  EXPECT_NEAR(fwhm[2], pixelGaussianFwhm(5.0), 0.02 * pixelGaussianFwhm(5.0));
  EXPECT_TRUE(hasHistory(info, "measure-psf 3d: 4 of 4"));
}

TEST_F(CliMeasurePsf, OneSliceOfAStackWithSlice) {
  const auto pixels = field(3, 120, 160, grid(1), 3.0, 0);
  stacklens::io::writeStack(path("stack.fits"), pixels.data(), 3, 120, 160, {});
  CliResult r = runCliSeparately("measure-psf " + path("stack.fits") + " " + path("psf.fits") +
                                 " --slice 1 --stars 5");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"used\": 5,"), std::string::npos) << r.out;
  // Without --slice a 2D measurement on a stack is refused; on slice 0 there are no stars.
  EXPECT_EQ(
      runCli("measure-psf " + path("stack.fits") + " " + path("b.fits") + " --mode 2d --stars 5")
          .code,
      2);
  EXPECT_EQ(
      runCli("measure-psf " + path("stack.fits") + " " + path("b.fits") + " --slice 0 --at 20,20")
          .code,
      2);
  EXPECT_FALSE(fs::exists(path("b.fits")));
}

TEST_F(CliMeasurePsf, BadInputIsAUsageErrorAndWritesNothing) {
  const auto pixels = field(1, 120, 160, grid(0), 3.0, 0);
  stacklens::io::writeStack(path("field.fits"), pixels.data(), 1, 120, 160, {});
  const std::string in = "measure-psf " + path("field.fits") + " " + path("out.fits");
  EXPECT_EQ(runCli(in).code, 2);                 // no stars
  EXPECT_EQ(runCli(in + " --at 20,x").code, 2);  // not a number
  EXPECT_EQ(runCli(in + " --at 20").code, 2);    // one coordinate
  EXPECT_EQ(runCli(in + " --at 20,20 --mode 4d").code, 2);
  EXPECT_EQ(runCli(in + " --at 20,20 --mode 3d").code, 2);  // one image
  EXPECT_EQ(runCli(in + " --at 20,20 --size 10").code, 2);  // even
  EXPECT_EQ(runCli(in + " --stars 0").code, 2);
  const CliResult edge = runCli(in + " --at 2,60");  // no star can be used
  EXPECT_EQ(edge.code, 2);
  EXPECT_NE(edge.out.find("too close to the edge"), std::string::npos) << edge.out;
  EXPECT_EQ(
      runCli("measure-psf " + path("field.fits") + " " + path("out.xyz") + " --at 20,20").code, 2);
  EXPECT_FALSE(fs::exists(path("out.fits")));
  EXPECT_EQ(
      runCli("measure-psf " + path("missing.fits") + " " + path("out.fits") + " --at 20,20").code,
      3);
}

}  // namespace
