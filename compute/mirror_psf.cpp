// mirrorSymmetricPsf: drop the unpaired first samples of even sides, average the mirror images,
// and refuse a PSF whose dropped and asymmetric parts are more than rounding.
#include "compute/mirror_psf.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "compute/params.h"

namespace stacklens::compute {

MirrorSymmetricPart mirrorSymmetricPart(const float* psf, Shape in) {
  // An even side's centre is its sample n / 2: samples 1 … n − 1 pair about it, sample 0 has no
  // partner. Odd sides keep every sample.
  const Shape out{in.z - (1 - in.z % 2), in.y - (1 - in.y % 2), in.x - (1 - in.x % 2)};
  const int64_t from[3] = {in.z - out.z, in.y - out.y, in.x - out.x};
  auto at = [&](int64_t z, int64_t y, int64_t x) {
    return double(psf[((z + from[0]) * in.y + y + from[1]) * in.x + x + from[2]]);
  };
  double total = 0, kept = 0, asymmetric = 0;
  for (int64_t i = 0; i < in.count(); ++i) total += std::fabs(double(psf[i]));
  Image symmetric = Image::host(out);
  for (int64_t z = 0; z < out.z; ++z)
    for (int64_t y = 0; y < out.y; ++y)
      for (int64_t x = 0; x < out.x; ++x) {
        const int64_t zs[2] = {z, out.z - 1 - z}, ys[2] = {y, out.y - 1 - y},
                      xs[2] = {x, out.x - 1 - x};
        double sum = 0;
        for (int64_t a : zs)
          for (int64_t b : ys)
            for (int64_t c : xs) sum += at(a, b, c);
        const double mean = sum / 8, value = at(z, y, x);
        kept += std::fabs(value);
        asymmetric += std::fabs(value - mean);
        symmetric.data()[(z * out.y + y) * out.x + x] = static_cast<float>(mean);
      }
  return {std::move(symmetric), (total - kept + asymmetric) / total};
}

MirrorSymmetricPart symmetrizedPsf(const float* psf, Shape shape, double limit) {
  MirrorSymmetricPart part = mirrorSymmetricPart(psf, shape);
  if (!(part.differs <= limit)) {
    char amounts[160];
    std::snprintf(amounts, sizeof amounts,
                  "the PSF differs from its mirror-symmetric part by %.2g of its sum, more than "
                  "the %.2g up to which that part may stand in for it",
                  part.differs, limit);
    throw InvalidArgument(std::string(amounts) +
                          ": it is off-centre or asymmetric (coma, astigmatism); recentre it, or "
                          "deconvolve with the reflect boundary, which takes any PSF");
  }
  return part;
}

Image mirrorSymmetricPsf(const float* psf, Shape shape) {
  MirrorSymmetricPart part = mirrorSymmetricPart(psf, shape);
  const double off = part.differs;
  if (!(off <= kMirrorTolerance)) {
    char amounts[96];
    std::snprintf(amounts, sizeof amounts, "%.2g of its sum (at most %.0e is taken as rounding)",
                  off, kMirrorTolerance);
    throw InvalidArgument(
        "richardson_lucy: the reflect-exact boundary needs a PSF symmetric along x, y and z "
        "(equal to its mirror image about its centre sample); this one differs from that by " +
        std::string(amounts) +
        "; its mirror-symmetric part may be taken instead (--symmetrize-psf)");
  }
  return std::move(part.psf);
}

}  // namespace stacklens::compute
