// Point-spread functions made from parameters (a sampled Gaussian, normalised to sum 1).
#include <cmath>
#include <string>
#include <vector>

#include "compute/backend.h"

namespace stacklens::compute {

// The largest Gaussian PSF made here: 4σ each side of the centre, so σ up to 512 pixels gives
// at most 4097 an axis, and 2^26 values (256 MiB of floats) in all. A σ beyond is refused before
// anything is allocated (a typed σ of 4e6 asked for petabytes).
constexpr double kMaxPsfSigma = 512;
constexpr int64_t kMaxPsfValues = int64_t(1) << 26;

static int64_t defaultPsfSize(double sigma) {
  return sigma > 0 ? 2 * static_cast<int64_t>(std::ceil(4.0 * sigma)) + 1 : 1;
}

Shape gaussianPsfShape(double sigmaZ, double sigmaY, double sigmaX, Shape size) {
  if (!(sigmaY > 0) || !(sigmaX > 0) || !(sigmaZ >= 0))
    throw InvalidArgument("PSF sigma must be positive (z may be 0 for a 2D PSF)");
  if (sigmaZ > kMaxPsfSigma || sigmaY > kMaxPsfSigma || sigmaX > kMaxPsfSigma)
    throw InvalidArgument("PSF sigma must be at most 512 pixels, got " + std::to_string(sigmaZ) +
                          "," + std::to_string(sigmaY) + "," + std::to_string(sigmaX));
  Shape s{size.z > 0 ? size.z : defaultPsfSize(sigmaZ),
          size.y > 0 ? size.y : defaultPsfSize(sigmaY),
          size.x > 0 ? size.x : defaultPsfSize(sigmaX)};
  if (double(s.z) * double(s.y) * double(s.x) > double(kMaxPsfValues))
    throw InvalidArgument("a Gaussian PSF of " + std::to_string(s.z) + " x " + std::to_string(s.y) +
                          " x " + std::to_string(s.x) +
                          " values is more than StackLens makes (2^26); give smaller sigmas");
  return s;
}

// The unnormalised weights along one axis of n samples, centred on sample n / 2.
static std::vector<double> axisWeights(int64_t n, double sigma) {
  std::vector<double> w(static_cast<size_t>(n), 1.0);
  if (sigma <= 0) return w;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(i - n / 2);
    w[static_cast<size_t>(i)] = std::exp(-0.5 * d * d / (sigma * sigma));
  }
  return w;
}

Image gaussianPsf(double sigmaZ, double sigmaY, double sigmaX, Shape size) {
  const Shape s = gaussianPsfShape(sigmaZ, sigmaY, sigmaX, size);
  Image psf = Image::host(s);
  // Separable: each axis's weights once, their product per value.
  const std::vector<double> wz = axisWeights(s.z, sigmaZ), wy = axisWeights(s.y, sigmaY),
                            wx = axisWeights(s.x, sigmaX);
  double sum = 0;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y) {
      const double wzy = wz[static_cast<size_t>(z)] * wy[static_cast<size_t>(y)];
      float* row = &psf.at(z, y, 0);
      for (int64_t x = 0; x < s.x; ++x) {
        const double w = wzy * wx[static_cast<size_t>(x)];
        row[x] = static_cast<float>(w);
        sum += w;
      }
    }
  for (int64_t i = 0; i < s.count(); ++i) psf.data()[i] = static_cast<float>(psf.data()[i] / sum);
  return psf;
}

Image gaussianPsfFromSigmas(const std::vector<double>& sigma, bool threeD) {
  const Sigmas s = sigmasFromList(sigma, OneSigma::EveryAxis);
  if (s.y <= 0 || s.x <= 0 || s.z < 0) throw InvalidArgument("sigmas must be positive");
  return gaussianPsf(threeD ? s.z : 0.0, s.y, s.x);
}

}  // namespace stacklens::compute
