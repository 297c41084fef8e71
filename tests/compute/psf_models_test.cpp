// PSF models: the Gaussian star against its closed form, the Moffat star's half maximum at the
// FWHM, ellipticity and angle; Born & Wolf in focus against the Airy pattern and on the axis
// against its sinc²; Gibson & Lanni at the design conditions in focus against Airy, and with a
// source 5 µm deep in water against a float64 reference computed here pixel by pixel from the
// model's formula (finer Simpson rule, exact radii); confocal as the product; argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "compute/backend.h"
#include "compute/params.h"
#include "compute/psf/psf_models.h"

using namespace stacklens::compute;
using namespace stacklens::compute::psf;

namespace {

double relativeL2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return std::sqrt(num / den);
}

// Plane z of a PSF, scaled to sum 1.
std::vector<double> plane(const Image& im, int64_t z) {
  const int64_t n = im.shape().sliceCount();
  std::vector<double> v(im.slice(z), im.slice(z) + n);
  double sum = 0;
  for (double x : v) sum += x;
  for (double& x : v) x /= sum;
  return v;
}

std::vector<double> normalised(std::vector<double> v) {
  double sum = 0;
  for (double x : v) sum += x;
  for (double& x : v) x /= sum;
  return v;
}

// (2 J1(v) / v)² on the pixels of an n × n plane, v = k NA r.
std::vector<double> airy(int n, double lateral, double na, double wavelength) {
  std::vector<double> v;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const double r = std::hypot(x - n / 2, y - n / 2) * lateral;
      const double a = 2 * std::numbers::pi / wavelength * na * r;
      v.push_back(a == 0 ? 1.0 : std::pow(2 * std::cyl_bessel_j(1.0, a) / a, 2));
    }
  return normalised(v);
}

}  // namespace

TEST(StarPsf, GaussianIsTheClosedForm) {
  StarPsf p;
  p.fwhm = 3.5;
  p.size = 15;
  const Image im = starPsf(p);
  ASSERT_EQ(im.shape(), (Shape{1, 15, 15}));
  const double sigma = 3.5 / (2 * std::sqrt(2 * std::log(2.0)));
  std::vector<double> want;
  for (int y = 0; y < 15; ++y)
    for (int x = 0; x < 15; ++x)
      want.push_back(std::exp(-((x - 7) * (x - 7) + (y - 7) * (y - 7)) / (2 * sigma * sigma)));
  EXPECT_LT(relativeL2(plane(im, 0), normalised(want)), 1e-6);
  EXPECT_EQ(starPsf(StarPsf{}).shape(), (Shape{1, 13, 13}));  // 4 FWHM of 3 px and one, odd
}

TEST(StarPsf, MoffatIsHalfItsPeakAtHalfTheFwhm) {
  StarPsf p;
  p.profile = StarPsf::Profile::Moffat;
  p.fwhm = 8, p.beta = 3, p.size = 41;
  const Image im = starPsf(p);
  // r = 4 px along x from the centre (20, 20): half the peak.
  EXPECT_NEAR(im.at(0, 20, 24) / im.at(0, 20, 20), 0.5, 1e-6);
  EXPECT_NEAR(im.at(0, 16, 20) / im.at(0, 20, 20), 0.5, 1e-6);
}

TEST(StarPsf, EllipticityStretchesAndTheAngleTurns) {
  StarPsf p;
  p.fwhm = 6, p.ellipticity = 0.5, p.size = 31;
  const Image flat = starPsf(p);
  // Half maximum at 3 px along x (the major axis), at 1.5 px along y.
  EXPECT_NEAR(flat.at(0, 15, 18) / flat.at(0, 15, 15), 0.5, 1e-6);
  EXPECT_GT(flat.at(0, 15, 17), flat.at(0, 17, 15));
  p.angle = 90;
  const Image turned = starPsf(p);
  for (int y = 0; y < 31; ++y)
    for (int x = 0; x < 31; ++x) ASSERT_NEAR(turned.at(0, y, x), flat.at(0, x, y), 1e-7);
}

TEST(MicroscopePsf, BornWolfInFocusIsTheAiryPatternAndOnAxisASincSquared) {
  MicroscopePsf p;
  p.model = MicroscopePsf::Model::BornWolf;
  p.na = 1.2, p.wavelength = 0.52, p.ni = p.niDesign = 1.33;
  p.lateral = 0.05, p.axial = 0.1, p.sizeXY = 33, p.sizeZ = 21;
  const Image im = microscopePsf(p);
  ASSERT_EQ(im.shape(), (Shape{21, 33, 33}));
  EXPECT_EQ(im.spacing.z, 0.1);
  EXPECT_LT(relativeL2(plane(im, 10), airy(33, 0.05, 1.2, 0.52)), 1e-4);
  // On the axis: [sin(u/4) / (u/4)]², u = k z NA² / n_i.
  std::vector<double> got, want;
  for (int z = 0; z < 21; ++z) {
    const double u = 2 * std::numbers::pi / 0.52 * (z - 10) * 0.1 * 1.2 * 1.2 / 1.33;
    want.push_back(u == 0 ? 1 : std::pow(std::sin(u / 4) / (u / 4), 2));
    got.push_back(im.at(z, 16, 16) / im.at(10, 16, 16));
  }
  EXPECT_LT(relativeL2(got, want), 1e-4);
}

TEST(MicroscopePsf, GibsonLanniAtTheDesignConditionsIsAiryInFocus) {
  MicroscopePsf p;  // oil, NA 1.4, source at the coverslip: no aberration
  p.sizeXY = 33, p.sizeZ = 5, p.lateral = 0.04;
  const Image im = microscopePsf(p);
  EXPECT_LT(relativeL2(plane(im, 2), airy(33, 0.04, 1.4, 0.53)), 1e-4);
  // Symmetric about focus without aberration.
  for (int i = 0; i < 33 * 33; ++i) ASSERT_NEAR(im.slice(1)[i], im.slice(3)[i], 1e-6);
}

TEST(MicroscopePsf, GibsonLanniFiveMicronsDeepInWaterMatchesAFloat64Reference) {
  MicroscopePsf p;
  p.depth = 5, p.ns = 1.33, p.na = 1.3;
  p.lateral = 0.08, p.axial = 0.25, p.sizeXY = 17, p.sizeZ = 9;
  const Image im = microscopePsf(p);
  // The model's integral per pixel: Simpson's rule on 8001 nodes, at each pixel's own radius.
  const double k = 2 * std::numbers::pi / p.wavelength;
  const int nodes = 8001;
  std::vector<double> want;
  for (int iz = 0; iz < p.sizeZ; ++iz) {
    const double z = (iz - p.sizeZ / 2) * p.axial;
    for (int y = 0; y < p.sizeXY; ++y)
      for (int x = 0; x < p.sizeXY; ++x) {
        const double r = std::hypot(x - p.sizeXY / 2, y - p.sizeXY / 2) * p.lateral;
        std::complex<double> sum = 0;
        for (int j = 0; j < nodes; ++j) {
          const double rho = double(j) / (nodes - 1), s2 = p.na * p.na * rho * rho;
          auto root = [s2](double n) { return std::sqrt(std::complex<double>(n * n - s2, 0)); };
          const std::complex<double> w = (z + p.tiDesign) * root(p.ni) + p.depth * root(p.ns) -
                                         p.tiDesign * root(p.niDesign) + p.tg * root(p.ng) -
                                         p.tgDesign * root(p.ngDesign);
          const double simpson = j == 0 || j == nodes - 1 ? 1 : j % 2 ? 4 : 2;
          sum += simpson * rho * std::cyl_bessel_j(0.0, k * p.na * r * rho) *
                 std::exp(std::complex<double>(0, k) * w);
        }
        want.push_back(std::norm(sum));
      }
  }
  std::vector<double> got(im.data(), im.data() + im.shape().count());
  EXPECT_LT(relativeL2(got, normalised(want)), 1e-4);
  // The aberration moves the brightest plane away from the nominal focus.
  int brightest = 0;
  for (int z = 0; z < p.sizeZ; ++z)
    if (im.at(z, 8, 8) > im.at(brightest, 8, 8)) brightest = z;
  EXPECT_NE(brightest, p.sizeZ / 2);
}

TEST(MicroscopePsf, ConfocalIsTheProductOfEmissionAndExcitation) {
  MicroscopePsf p;
  p.model = MicroscopePsf::Model::BornWolf;
  p.sizeXY = 17, p.sizeZ = 5;
  const Image emission = microscopePsf(p);
  MicroscopePsf e = p;
  e.wavelength = p.excitation;
  const Image excitation = microscopePsf(e);
  p.mode = MicroscopePsf::Mode::Confocal;
  const Image confocal = microscopePsf(p);
  std::vector<double> want, got(confocal.data(), confocal.data() + confocal.shape().count());
  for (int64_t i = 0; i < confocal.shape().count(); ++i)
    want.push_back(double(emission.data()[i]) * excitation.data()[i]);
  EXPECT_LT(relativeL2(got, normalised(want)), 1e-5);
}

TEST(Psf, RejectsWhatTheModelsCannotMake) {
  StarPsf s;
  s.size = 10;
  EXPECT_THROW(starPsf(s), InvalidArgument);
  s.size = 0, s.ellipticity = 1;
  EXPECT_THROW(starPsf(s), InvalidArgument);
  s.ellipticity = 0, s.profile = StarPsf::Profile::Moffat, s.beta = 1;
  EXPECT_THROW(starPsf(s), InvalidArgument);
  MicroscopePsf m;
  m.na = 1.6;
  EXPECT_THROW(microscopePsf(m), InvalidArgument);
  m.na = 1.4, m.lateral = 0;
  EXPECT_THROW(microscopePsf(m), InvalidArgument);
  m.lateral = 0.1, m.sizeXY = 4099;
  EXPECT_THROW(microscopePsf(m), InvalidArgument);
}

// The Gaussian PSF against its closed form, exp(-d²/2σ²) per axis summed to 1 in double, value by
// value (float rounding of the stored values), and gaussianPsfShape against the built shape.
TEST(Psf, GaussianIsTheSampledClosedFormNormalised) {
  const double sz = 1.7, sy = 0.9, sx = 2.2;
  const Image psf = gaussianPsf(sz, sy, sx);
  const Shape s = psf.shape();
  EXPECT_EQ(s.z, 2 * 7 + 1);  // 2·ceil(4σ) + 1
  EXPECT_EQ(s.y, 2 * 4 + 1);
  EXPECT_EQ(s.x, 2 * 9 + 1);
  const Shape predicted = gaussianPsfShape(sz, sy, sx);
  EXPECT_EQ(predicted.z, s.z);
  EXPECT_EQ(predicted.y, s.y);
  EXPECT_EQ(predicted.x, s.x);
  std::vector<double> want;
  double sum = 0;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        const double dz = double(z - s.z / 2), dy = double(y - s.y / 2), dx = double(x - s.x / 2);
        want.push_back(
            std::exp(-dz * dz / (2 * sz * sz) - dy * dy / (2 * sy * sy) - dx * dx / (2 * sx * sx)));
        sum += want.back();
      }
  for (int64_t i = 0; i < s.count(); ++i)
    EXPECT_NEAR(psf.data()[i], want[size_t(i)] / sum, 4e-7 * want[size_t(i)] / sum + 1e-12) << i;
  EXPECT_THROW(gaussianPsfShape(165, 165, 165), InvalidArgument);
  EXPECT_THROW(gaussianPsfShape(0, 600, 1), InvalidArgument);
}

// A Gaussian PSF is refused, not allocated, when its σ or its size is beyond what is made (the
// pipeline fuzzer's σ 4e6 asked for petabytes); the largest σ in 2D is still made.
TEST(Psf, GaussianSigmasBeyondTheLimitAreRefusedBeforeAllocating) {
  EXPECT_THROW(gaussianPsf(0, 4.0e6, 4.0e6), InvalidArgument);
  EXPECT_THROW(gaussianPsf(0, 1e300, 1), InvalidArgument);
  EXPECT_THROW(gaussianPsf(0, std::nan(""), 1), InvalidArgument);
  EXPECT_THROW(gaussianPsf(165, 165, 165), InvalidArgument);  // 1321³ values
  const Image widest = gaussianPsf(0, 512, 1);
  EXPECT_EQ(widest.shape().y, 4097);
  double sum = 0;
  for (int64_t i = 0; i < widest.shape().count(); ++i) sum += widest.data()[i];
  EXPECT_NEAR(sum, 1.0, 1e-4);  // float rounding of 4097 positive terms
}
