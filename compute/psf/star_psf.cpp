// Gaussian and Moffat stars (compute/psf/psf_models.h), each pixel the profile's mean over
// oversampling² points spread evenly across it.
#include <cmath>
#include <numbers>

#include "compute/params.h"
#include "compute/psf/psf_models.h"

namespace stacklens::compute::psf {

Image starPsf(const StarPsf& p) {
  const bool moffat = p.profile == StarPsf::Profile::Moffat;
  if (!(p.fwhm > 0) || !std::isfinite(p.fwhm)) throw InvalidArgument("the FWHM must be positive");
  if (!(p.ellipticity >= 0 && p.ellipticity < 1))
    throw InvalidArgument("the ellipticity must be in [0, 1)");
  if (moffat && !(p.beta > 1)) throw InvalidArgument("Moffat's beta must be above 1");
  if (p.size < 0 || (p.size > 0 && p.size % 2 == 0))
    throw InvalidArgument("the PSF's size must be odd");
  if (p.oversampling < 1 || p.oversampling > 16)
    throw InvalidArgument("the oversampling must be 1..16");
  const int n = p.size > 0 ? p.size : std::max(9, 2 * int(std::ceil(2 * p.fwhm)) + 1);
  const double sigma = p.fwhm / (2 * std::sqrt(2 * std::numbers::ln2));
  const double alpha = p.fwhm / (2 * std::sqrt(std::pow(2.0, 1 / p.beta) - 1));
  const double a = p.angle * std::numbers::pi / 180, c = std::cos(a), s = std::sin(a);
  const double q = 1 - p.ellipticity;
  auto profile = [&](double dx, double dy) {
    const double u = dx * c + dy * s, v = (-dx * s + dy * c) / q;
    const double r2 = u * u + v * v;
    return moffat ? std::pow(1 + r2 / (alpha * alpha), -p.beta)
                  : std::exp(-r2 / (2 * sigma * sigma));
  };
  Image out = Image::host({1, n, n});
  const int k = p.oversampling;
  double sum = 0;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      double v = 0;
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < k; ++i)
          v += profile(x - n / 2 + (i + 0.5) / k - 0.5, y - n / 2 + (j + 0.5) / k - 0.5);
      out.at(0, y, x) = float(v);
      sum += v;
    }
  for (int64_t i = 0; i < out.shape().count(); ++i) out.data()[i] = float(out.data()[i] / sum);
  return out;
}

}  // namespace stacklens::compute::psf
