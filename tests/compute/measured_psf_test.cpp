// The PSF measured from the data: synthetic fields of Gaussian, Moffat and elliptical stars and
// of 3D Gaussian beads, drawn here integrated over each pixel (erf for a Gaussian, 8 × 8 points
// for a Moffat) with a sloped background and photon noise, give back the effective PSF (the
// profile convolved with the pixel) whose FWHM, computed here from the profile's formula, is
// recovered within 2 %; point-sampled stars give back the FWHM itself; the Moffat PSF matches
// starPsf's pixel-integrated model; a star off the grid by 0.37 px is centred to 0.02 px; stars
// at an edge, next to a brighter one, on empty sky or on NaNs are rejected with their reasons;
// pickPsfStars keeps isolated stars away from the edges, brightest first.
#include "compute/psf/measured_psf.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <numbers>
#include <random>
#include <vector>

#include "compute/backend.h"
#include "compute/params.h"
#include "compute/psf/psf_models.h"

using namespace stacklens::compute;
using namespace stacklens::compute::psf;

namespace {

constexpr double kFwhmPerSigma = 2.3548200450309493;

// The mean of a unit-area 1D Gaussian centred at c over the pixel [i − ½, i + ½].
double pixelGaussian(double i, double c, double sigma) {
  const double s = sigma * std::numbers::sqrt2;
  return 0.5 * (std::erf((i + 0.5 - c) / s) - std::erf((i - 0.5 - c) / s));
}

// A Gaussian star (or bead, with sigmaZ > 0) of total flux `flux` added to im, each pixel its
// integral over the pixel (integrate) or the profile at the pixel's centre.
void addGaussian(Image& im, double z, double y, double x, double flux, double sigmaZ, double sigmaY,
                 double sigmaX, bool integrate = true) {
  const Shape s = im.shape();
  const int64_t rz = sigmaZ > 0 ? int64_t(std::ceil(7 * sigmaZ)) : 0;
  const int64_t ry = int64_t(std::ceil(7 * sigmaY)), rx = int64_t(std::ceil(7 * sigmaX));
  auto point = [](double i, double c, double sigma) {
    return std::exp(-(i - c) * (i - c) / (2 * sigma * sigma)) /
           (sigma * std::sqrt(2 * std::numbers::pi));
  };
  auto profile = [&](double i, double c, double sigma) {
    return integrate ? pixelGaussian(i, c, sigma) : point(i, c, sigma);
  };
  for (int64_t k = std::max<int64_t>(0, int64_t(z) - rz); k <= std::min(s.z - 1, int64_t(z) + rz);
       ++k)
    for (int64_t j = std::max<int64_t>(0, int64_t(y) - ry); j <= std::min(s.y - 1, int64_t(y) + ry);
         ++j)
      for (int64_t i = std::max<int64_t>(0, int64_t(x) - rx);
           i <= std::min(s.x - 1, int64_t(x) + rx); ++i) {
        const double pz = sigmaZ > 0 ? profile(double(k), z, sigmaZ) : 1.0;
        im.at(k, j, i) +=
            float(flux * pz * profile(double(j), y, sigmaY) * profile(double(i), x, sigmaX));
      }
}

// A Moffat star of total flux `flux` (I ∝ (1 + r²/α²)^−β), each pixel the mean of 8 × 8 points.
void addMoffat(Image& im, double y, double x, double flux, double fwhm, double beta) {
  const double alpha = fwhm / (2 * std::sqrt(std::pow(2.0, 1 / beta) - 1));
  const double peak = flux * (beta - 1) / (std::numbers::pi * alpha * alpha);
  const int64_t r = 40;
  const int k = 8;
  for (int64_t j = std::max<int64_t>(0, int64_t(y) - r);
       j <= std::min(im.shape().y - 1, int64_t(y) + r); ++j)
    for (int64_t i = std::max<int64_t>(0, int64_t(x) - r);
         i <= std::min(im.shape().x - 1, int64_t(x) + r); ++i) {
      double v = 0;
      for (int b = 0; b < k; ++b)
        for (int a = 0; a < k; ++a) {
          const double dx = double(i) - 0.5 + (a + 0.5) / k - x,
                       dy = double(j) - 0.5 + (b + 0.5) / k - y;
          v += std::pow(1 + (dx * dx + dy * dy) / (alpha * alpha), -beta);
        }
      im.at(0, j, i) += float(peak * v / (k * k));
    }
}

// Sky 200 + a slope, then photon noise (Gaussian of σ √value) and read noise of 5.
void addSkyAndNoise(Image& im, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  const Shape s = im.shape();
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        const double v = im.at(z, y, x) + 200 + 0.3 * double(x) + 0.2 * double(y);
        im.at(z, y, x) = float(v + normal(rng) * std::sqrt(v + 25));
      }
}

// The half-maximum width of a symmetric profile f (f(0) its peak), by bisection.
double halfWidth(const std::function<double(double)>& f) {
  const double half = f(0) / 2;
  double lo = 0, hi = 50;
  for (int i = 0; i < 100; ++i) ((f((lo + hi) / 2) > half) ? lo : hi) = (lo + hi) / 2;
  return lo + hi;  // twice the crossing
}

// The FWHM of a Gaussian of this FWHM averaged over a pixel (the effective PSF's).
double pixelGaussianFwhm(double fwhm) {
  return halfWidth([&](double x) { return pixelGaussian(x, 0, fwhm / kFwhmPerSigma); });
}

// The same for a Moffat: its profile through the centre after averaging over a pixel's square.
double pixelMoffatFwhm(double fwhm, double beta) {
  const double alpha = fwhm / (2 * std::sqrt(std::pow(2.0, 1 / beta) - 1));
  return halfWidth([&](double x) {
    const int k = 64;
    double v = 0;
    for (int b = 0; b < k; ++b)
      for (int a = 0; a < k; ++a) {
        const double dx = x - 0.5 + (a + 0.5) / k, dy = -0.5 + (b + 0.5) / k;
        v += std::pow(1 + (dx * dx + dy * dy) / (alpha * alpha), -beta);
      }
    return v;
  });
}

struct Placed {
  double x, y, flux;
};

// Twenty stars on a jittered 5 × 4 grid of 48 px cells, at random sub-pixel positions, with
// fluxes spread over a factor of ten.
std::vector<Placed> starField(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-8, 8), logFlux(std::log(2e4), std::log(2e5));
  std::vector<Placed> stars;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 5; ++i)
      stars.push_back(
          {24 + 48.0 * i + jitter(rng), 24 + 48.0 * j + jitter(rng), std::exp(logFlux(rng))});
  return stars;
}

// The positions a user would click: the true ones off by up to a pixel.
std::vector<PsfStar> clicks(const std::vector<Placed>& stars, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> off(-1, 1);
  std::vector<PsfStar> out;
  for (const Placed& s : stars)
    out.push_back({std::round(s.x + off(rng)), std::round(s.y + off(rng)), 0});
  return out;
}

double relativeError(double got, double want) { return std::abs(got - want) / want; }

std::array<double, 3> centroid(const Image& psf) {
  std::array<double, 3> c{0, 0, 0};
  double sum = 0;
  const Shape s = psf.shape();
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        const double v = psf.at(z, y, x);
        c[0] += v * double(x), c[1] += v * double(y), c[2] += v * double(z), sum += v;
      }
  for (double& v : c) v /= sum;
  return c;
}

double sumOf(const Image& im) {
  double sum = 0;
  for (int64_t i = 0; i < im.shape().count(); ++i) sum += im.data()[i];
  return sum;
}

}  // namespace

TEST(MeasuredPsf, FwhmOfSampledGaussiansAndMoffatsIsTheirs) {
  Image g = Image::host({1, 41, 41});
  addGaussian(g, 0, 20, 20, 1, 0, 5.0 / kFwhmPerSigma, 3.0 / kFwhmPerSigma, false);
  const auto f = psfFwhm(g);
  EXPECT_NEAR(f[0], 3.0, 0.003);
  EXPECT_NEAR(f[1], 5.0, 0.005);
  EXPECT_EQ(f[2], 0.0);
  Image v = Image::host({31, 21, 21});
  addGaussian(v, 15, 10, 10, 1, 6.0 / kFwhmPerSigma, 3.0 / kFwhmPerSigma, 3.0 / kFwhmPerSigma,
              false);
  EXPECT_NEAR(psfFwhm(v)[2], 6.0, 0.006);
  StarPsf m;  // point-sampled Moffat: its half maximum lies at FWHM / 2 exactly
  m.profile = StarPsf::Profile::Moffat, m.fwhm = 3.5, m.beta = 2.5, m.size = 31;
  EXPECT_NEAR(psfFwhm(starPsf(m))[0], 3.5, 0.01);
}

TEST(MeasuredPsf, GaussianStarsGiveTheEffectivePsfsFwhmWithinTwoPercent) {
  Image field = Image::host({1, 200, 248});
  const auto stars = starField(1);
  const double sigma = 3.0 / kFwhmPerSigma;
  for (const Placed& s : stars) addGaussian(field, 0, s.y, s.x, s.flux, 0, sigma, sigma);
  addSkyAndNoise(field, 2);
  const MeasuredPsf r = measurePsf(field, clicks(stars, 3), {});
  const double want = pixelGaussianFwhm(3.0);  // 3.076: the pixel adds 1/12 px² of variance
  std::printf("Gaussian FWHM 3: measured %.4f x %.4f, effective %.4f, %d stars, %lld px\n", r.fwhmX,
              r.fwhmY, want, r.used, static_cast<long long>(r.psf.shape().x));
  EXPECT_GE(r.used, 18);
  EXPECT_LT(relativeError(r.fwhmX, want), 0.02);
  EXPECT_LT(relativeError(r.fwhmY, want), 0.02);
  EXPECT_EQ(r.fwhmZ, 0.0);
  EXPECT_NEAR(sumOf(r.psf), 1.0, 1e-5);
  EXPECT_EQ(r.psf.shape().x % 2, 1);
  EXPECT_EQ(r.psf.shape().y, r.psf.shape().x);
  EXPECT_GE(r.psf.shape().x, 13);  // about 4.5 FWHM
  EXPECT_LE(r.psf.shape().x, 17);
  const auto c = centroid(r.psf);
  EXPECT_NEAR(c[0], double(r.psf.shape().x / 2), 0.05);
  EXPECT_NEAR(c[1], double(r.psf.shape().y / 2), 0.05);
  for (size_t i = 0; i < stars.size(); ++i)
    if (r.stars[i].used) {
      EXPECT_NEAR(r.stars[i].refined.x, stars[i].x, 0.1) << i;
      EXPECT_NEAR(r.stars[i].refined.y, stars[i].y, 0.1) << i;
    }
}

TEST(MeasuredPsf, PointSampledGaussianStarsGiveTheirFwhmWithinTwoPercent) {
  Image field = Image::host({1, 200, 248});
  const auto stars = starField(4);
  const double sigma = 3.0 / kFwhmPerSigma;
  for (const Placed& s : stars) addGaussian(field, 0, s.y, s.x, s.flux, 0, sigma, sigma, false);
  addSkyAndNoise(field, 5);
  const MeasuredPsf r = measurePsf(field, clicks(stars, 6), {});
  std::printf("point-sampled Gaussian FWHM 3: measured %.4f x %.4f\n", r.fwhmX, r.fwhmY);
  EXPECT_LT(relativeError(r.fwhmX, 3.0), 0.02);
  EXPECT_LT(relativeError(r.fwhmY, 3.0), 0.02);
}

TEST(MeasuredPsf, MoffatStarsGiveTheirFwhmAndProfile) {
  for (double beta : {2.5, 4.0}) {
    Image field = Image::host({1, 200, 248});
    const auto stars = starField(7);
    for (const Placed& s : stars) addMoffat(field, s.y, s.x, s.flux, 3.5, beta);
    addSkyAndNoise(field, 8);
    MeasuredPsfParams p;
    const MeasuredPsf r = measurePsf(field, clicks(stars, 9), p);
    const double want = pixelMoffatFwhm(3.5, beta);
    StarPsf model;
    model.profile = StarPsf::Profile::Moffat;
    model.fwhm = 3.5, model.beta = beta, model.size = int(r.psf.shape().x), model.oversampling = 8;
    const Image reference = starPsf(model);
    double num = 0, den = 0;
    for (int64_t i = 0; i < reference.shape().count(); ++i) {
      const double d = r.psf.data()[i] - reference.data()[i];
      num += d * d, den += double(reference.data()[i]) * reference.data()[i];
    }
    const double l2 = std::sqrt(num / den);
    std::printf(
        "Moffat FWHM 3.5 beta %.1f: measured %.4f x %.4f, effective %.4f, L2 %.4f, %lld px\n", beta,
        r.fwhmX, r.fwhmY, want, l2, static_cast<long long>(r.psf.shape().x));
    EXPECT_GE(r.used, 18) << beta;
    EXPECT_LT(relativeError(r.fwhmX, want), 0.02) << beta;
    EXPECT_LT(relativeError(r.fwhmY, want), 0.02) << beta;
    EXPECT_LT(l2, 0.03) << beta;
  }
}

TEST(MeasuredPsf, EllipticalStarsGiveEachAxissFwhm) {
  Image field = Image::host({1, 200, 248});
  const auto stars = starField(10);
  for (const Placed& s : stars)
    addGaussian(field, 0, s.y, s.x, s.flux, 0, 4.5 / kFwhmPerSigma, 2.8 / kFwhmPerSigma);
  addSkyAndNoise(field, 11);
  const MeasuredPsf r = measurePsf(field, clicks(stars, 12), {});
  std::printf("elliptical Gaussian 2.8 x 4.5: measured %.4f x %.4f, effective %.4f x %.4f\n",
              r.fwhmX, r.fwhmY, pixelGaussianFwhm(2.8), pixelGaussianFwhm(4.5));
  EXPECT_LT(relativeError(r.fwhmX, pixelGaussianFwhm(2.8)), 0.02);
  EXPECT_LT(relativeError(r.fwhmY, pixelGaussianFwhm(4.5)), 0.02);
}

TEST(MeasuredPsf, GaussianBeadsGiveEachAxissFwhm) {
  Image volume = Image::host({64, 112, 112});
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> jitter(-3, 3), logFlux(std::log(2e5), std::log(1e6));
  std::vector<Placed> placed;
  std::vector<double> zs;
  std::vector<PsfStar> beads;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) {
      const double x = 28 + 28.0 * i + jitter(rng), y = 28 + 28.0 * j + jitter(rng);
      const double z = 32 + jitter(rng) / 3, flux = std::exp(logFlux(rng));
      addGaussian(volume, z, y, x, flux, 6.0 / kFwhmPerSigma, 3.0 / kFwhmPerSigma,
                  3.0 / kFwhmPerSigma);
      beads.push_back({std::round(x), std::round(y), std::round(z)});
    }
  addSkyAndNoise(volume, 14);
  volume.spacing = {0.3, 0.1, 0.1, true, "um"};
  MeasuredPsfParams p;
  p.threeD = true;
  const MeasuredPsf r = measurePsf(volume, beads, p);
  std::printf(
      "beads 3 x 3 x 6: measured %.4f x %.4f x %.4f, effective %.4f and %.4f, %lld x %lld px\n",
      r.fwhmX, r.fwhmY, r.fwhmZ, pixelGaussianFwhm(3.0), pixelGaussianFwhm(6.0),
      static_cast<long long>(r.psf.shape().x), static_cast<long long>(r.psf.shape().z));
  EXPECT_EQ(r.used, 9);
  EXPECT_LT(relativeError(r.fwhmX, pixelGaussianFwhm(3.0)), 0.02);
  EXPECT_LT(relativeError(r.fwhmY, pixelGaussianFwhm(3.0)), 0.02);
  EXPECT_LT(relativeError(r.fwhmZ, pixelGaussianFwhm(6.0)), 0.02);
  EXPECT_GT(r.psf.shape().z, r.psf.shape().x);  // the axial size follows the axial FWHM
  EXPECT_EQ(r.psf.shape().z % 2, 1);
  EXPECT_NEAR(sumOf(r.psf), 1.0, 1e-5);
  EXPECT_TRUE(r.psf.spacing.known);
  EXPECT_DOUBLE_EQ(r.psf.spacing.z, 0.3);
  const auto c = centroid(r.psf);
  EXPECT_NEAR(c[2], double(r.psf.shape().z / 2), 0.1);
}

TEST(MeasuredPsf, AStarOffTheGridIsCentredToAFiftiethOfAPixel) {
  Image field = Image::host({1, 81, 81});
  addGaussian(field, 0, 40.21, 40.37, 1e5, 0, 3.0 / kFwhmPerSigma, 3.0 / kFwhmPerSigma);
  for (int64_t i = 0; i < field.shape().count(); ++i) field.data()[i] += 10;
  MeasuredPsfParams p;
  p.size = 15;
  const MeasuredPsf r = measurePsf(field, {{41, 40, 0}}, p);
  ASSERT_EQ(r.used, 1);
  EXPECT_NEAR(r.stars[0].refined.x, 40.37, 0.02);
  EXPECT_NEAR(r.stars[0].refined.y, 40.21, 0.02);
  const auto c = centroid(r.psf);
  EXPECT_NEAR(c[0], 7.0, 0.02);
  EXPECT_NEAR(c[1], 7.0, 0.02);
  EXPECT_EQ(r.psf.shape().x, 15);
}

TEST(MeasuredPsf, RejectsEdgesBrighterNeighboursEmptySkyAndNaNs) {
  Image field = Image::host({1, 120, 160});
  const double sigma = 3.0 / kFwhmPerSigma;
  const std::vector<std::array<double, 3>> good{
      {30.2, 30.4, 5e4}, {80.6, 30.1, 6e4}, {130.3, 30.7, 7e4}, {30.5, 90.2, 5e4}};
  for (const auto& s : good) addGaussian(field, 0, s[1], s[0], s[2], 0, sigma, sigma);
  addGaussian(field, 0, 60.0, 3.3, 5e4, 0, sigma, sigma);    // 4: at the edge
  addGaussian(field, 0, 90.3, 80.2, 2e4, 0, sigma, sigma);   // 5: next to a brighter star
  addGaussian(field, 0, 91.1, 86.0, 1e5, 0, sigma, sigma);   // 6: the brighter one, used
  addGaussian(field, 0, 90.4, 130.1, 5e4, 0, sigma, sigma);  // 8: NaNs nearby
  addSkyAndNoise(field, 15);
  field.at(0, 95, 133) = std::numeric_limits<float>::quiet_NaN();
  const std::vector<PsfStar> at{{30, 30, 0},  {81, 30, 0},  {130, 31, 0},   {30, 90, 0},
                                {3, 60, 0},   {80, 90, 0},  {86, 91, 0},    {110, 60, 0},
                                {130, 90, 0}, {500, 10, 0}, {30.4, 30.6, 0}};
  const MeasuredPsf r = measurePsf(field, at, {});
  ASSERT_EQ(r.stars.size(), at.size());
  for (int i : {0, 1, 2, 3, 6})
    EXPECT_TRUE(r.stars[size_t(i)].used) << i << r.stars[size_t(i)].reason;
  EXPECT_EQ(r.used, 5);
  EXPECT_EQ(r.stars[4].reason, "too close to the edge");
  EXPECT_EQ(r.stars[5].reason, "overlaps a brighter source");
  EXPECT_EQ(r.stars[7].reason, "not a peak");
  EXPECT_EQ(r.stars[8].reason, "saturated/non-finite");
  EXPECT_EQ(r.stars[9].reason, "outside the image");
  EXPECT_EQ(r.stars[10].reason, "duplicate of star 0");
  EXPECT_LT(relativeError(r.fwhmX, pixelGaussianFwhm(3.0)), 0.03);
  // A saturation level below the stars' peaks rejects them all.
  MeasuredPsfParams saturated;
  saturated.saturation = 1000;
  EXPECT_THROW(measurePsf(field, {at[0], at[1]}, saturated), InvalidArgument);
  try {
    measurePsf(field, {at[4]}, {});
    ADD_FAILURE() << "no star could be used, yet no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("too close to the edge"), std::string::npos) << e.what();
  }
}

TEST(MeasuredPsf, BadArgumentsAreInvalid) {
  Image field = Image::host({1, 64, 64});
  addGaussian(field, 0, 32, 32, 1e4, 0, 1.3, 1.3);
  EXPECT_THROW(measurePsf(field, {}, {}), InvalidArgument);
  MeasuredPsfParams even;
  even.size = 10;
  EXPECT_THROW(measurePsf(field, {{32, 32, 0}}, even), InvalidArgument);
  MeasuredPsfParams threeD;
  threeD.threeD = true;
  EXPECT_THROW(measurePsf(field, {{32, 32, 0}}, threeD), InvalidArgument);
  Image stack = Image::host({3, 64, 64});
  EXPECT_THROW(measurePsf(stack, {{32, 32, 0}}, {}), InvalidArgument);
  MeasuredPsfParams clip;
  clip.clipSigma = 0;
  EXPECT_THROW(measurePsf(field, {{32, 32, 0}}, clip), InvalidArgument);
  EXPECT_THROW(psfFwhm(Image()), InvalidArgument);
  EXPECT_THROW(pickPsfStars({}, {1, 10, 10}, -1), InvalidArgument);
}

TEST(MeasuredPsf, CancelledBetweenStars) {
  Image field = Image::host({1, 64, 64});
  addGaussian(field, 0, 32, 32, 1e4, 0, 1.3, 1.3);
  std::atomic<bool> cancel{true};
  EXPECT_THROW(measurePsf(field, {{32, 32, 0}}, {}, Job(&cancel)), Cancelled);
}

TEST(MeasuredPsf, PickSkipsClosePairsEdgesAndHotPixelsBrightestFirst) {
  auto source = [](double x, double y, double flux, double sigma) {
    Source s;
    s.centroidX = x, s.centroidY = y, s.flux = flux;
    s.peak = float(flux / (2 * std::numbers::pi * sigma * sigma));
    s.peakX = std::lround(x), s.peakY = std::lround(y);
    s.xMin = s.peakX - 3, s.xMax = s.peakX + 3, s.yMin = s.peakY - 3, s.yMax = s.peakY + 3;
    return s;
  };
  const std::vector<Source> sources{
      source(100, 100, 5e4, 1.3),                            // isolated
      source(200, 150, 1e5, 1.3),                            // isolated, brightest
      source(150, 60, 8e4, 1.3),                             // a pair 6 px apart
      source(156, 62, 3e4, 1.3),  source(5, 100, 9e4, 1.3),  // at the edge
      source(60, 200, 2e5, 0.3),   // a hot pixel: far sharper than the rest
      source(240, 40, 4e4, 1.25),  // isolated, faintest
  };
  const Shape shape{1, 256, 256};
  const auto picked = pickPsfStars(sources, shape, 10);
  ASSERT_EQ(picked.size(), 3u);
  EXPECT_DOUBLE_EQ(picked[0].x, 200);
  EXPECT_DOUBLE_EQ(picked[1].x, 100);
  EXPECT_DOUBLE_EQ(picked[2].x, 240);
  EXPECT_EQ(pickPsfStars(sources, shape, 1).size(), 1u);
  EXPECT_TRUE(pickPsfStars(sources, shape, 0).empty());
  // A saturation level at the brightest's peak leaves the other two.
  const auto unsaturated = pickPsfStars(sources, shape, 10, sources[1].peak);
  ASSERT_EQ(unsaturated.size(), 2u);
  EXPECT_DOUBLE_EQ(unsaturated[0].x, 100);
}

TEST(MeasuredPsf, PickedFromASegmentationGivesTheFwhm) {
  Image field = Image::host({1, 200, 248});
  const auto stars = starField(16);
  const double sigma = 3.0 / kFwhmPerSigma;
  for (const Placed& s : stars) addGaussian(field, 0, s.y, s.x, s.flux, 0, sigma, sigma);
  addGaussian(field, 0, 100.3, 3.2, 1e5, 0, sigma, sigma);  // at the edge: not picked
  addSkyAndNoise(field, 17);
  auto backend = makeBackend("cpu");
  SegmentParams sp;
  sp.nSigma = 5;
  const Segmentation seg = backend->segment(backend->upload(field), sp);
  const auto picked = pickPsfStars(seg.sources, field.shape(), 15);
  ASSERT_EQ(picked.size(), 15u);
  for (const PsfStar& s : picked) EXPECT_GT(s.x, 8.0);
  const MeasuredPsf r = measurePsf(field, picked, {});
  EXPECT_EQ(r.used, 15);
  EXPECT_LT(relativeError(r.fwhmX, pixelGaussianFwhm(3.0)), 0.02);
}

TEST(MeasuredPsf, BeadsArePickedFromASegmentationSliceBySlice) {
  Image volume = Image::host({40, 96, 96});
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i)
      addGaussian(volume, 20.3, 30.2 + 36 * j, 30.6 + 36 * i, 3e5 * (1 + i + 2 * j),
                  4.0 / kFwhmPerSigma, 3.0 / kFwhmPerSigma, 3.0 / kFwhmPerSigma);
  addSkyAndNoise(volume, 18);
  auto backend = makeBackend("cpu");
  SegmentParams sp;
  sp.nSigma = 5;
  const Segmentation seg = backend->segment(backend->upload(volume), sp);
  const auto picked = pickPsfStars(seg.sources, volume.shape(), 10);
  ASSERT_EQ(picked.size(), 4u);         // one per bead, not one per slice
  EXPECT_NEAR(picked[0].x, 66.6, 0.5);  // the brightest
  EXPECT_NEAR(picked[0].y, 66.2, 0.5);
  EXPECT_NEAR(picked[0].z, 20, 1);
}
