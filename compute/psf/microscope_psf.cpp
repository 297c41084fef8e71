// Born & Wolf and Gibson & Lanni PSFs (compute/psf/psf_models.h). Per plane, the pupil integral
// is evaluated on a fine radial grid (1/64 of a pixel) by Simpson's rule, each Bessel value made
// once for every plane; pixels take the profile at their radius by linear interpolation (the
// approach of Li, Xue and Blu, 2017, without their Bessel-series speed-up).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "compute/cpu/thread_pool.h"
#include "compute/params.h"
#include "compute/psf/psf_models.h"

namespace stacklens::compute::psf {
namespace {

using Complex = std::complex<double>;
constexpr int kRadialSteps = 64;  // radial samples per pixel

void check(const MicroscopePsf& p) {
  auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  if (!positive(p.na) || !positive(p.wavelength) || !positive(p.lateral) || !positive(p.axial))
    throw InvalidArgument("NA, wavelength and voxel size must be positive");
  if (p.mode != MicroscopePsf::Mode::Widefield && !positive(p.excitation))
    throw InvalidArgument("the excitation wavelength must be positive");
  if (!(p.na < p.ni) || !(p.na < p.niDesign))
    throw InvalidArgument("the NA must be below the immersion medium's index");
  for (double n : {p.ns, p.ng, p.ngDesign, p.ni, p.niDesign})
    if (!positive(n)) throw InvalidArgument("refractive indices must be positive");
  if (p.sizeXY < 1 || p.sizeZ < 1 || p.sizeXY > 4097 || p.sizeZ > 4097)
    throw InvalidArgument("the PSF's size must be 1..4097 voxels a side");
  if (p.oversampling < 1 || p.oversampling > 8)
    throw InvalidArgument("the oversampling must be 1..8");
  if (p.tg < 0 || p.tgDesign < 0 || p.tiDesign < 0 || p.depth < 0)
    throw InvalidArgument("thicknesses and the depth cannot be negative");
}

// The optical path difference W(ρ, z) of the model, in µm (complex past an index's cut-off).
Complex pathDifference(const MicroscopePsf& p, double rho, double z) {
  const double s2 = p.na * p.na * rho * rho;
  if (p.model == MicroscopePsf::Model::BornWolf) return -z * s2 / (2 * p.ni);
  auto root = [s2](double n) { return std::sqrt(Complex(n * n - s2, 0)); };
  return (z + p.tiDesign) * root(p.ni) + p.depth * root(p.ns) - p.tiDesign * root(p.niDesign) +
         p.tg * root(p.ng) - p.tgDesign * root(p.ngDesign);
}

// The widefield PSF at one wavelength, unnormalised, as (z, y, x) doubles.
std::vector<double> widefield(const MicroscopePsf& p, double wavelength, const Job& job,
                              cpu::ThreadPool& pool) {
  const double k = 2 * std::numbers::pi / wavelength;
  const int nxy = p.sizeXY, nz = p.sizeZ;
  const double reach = std::sqrt(2.0) * (nxy / 2 + 1) * p.lateral;  // the farthest sample
  // Simpson nodes: about 16 per period of the fastest oscillation, the Bessel function's or the
  // phase's where it turns fastest (near the pupil's edge when NA nears the specimen's index).
  // Where NA exceeds an index the phase's slope is unbounded at the cut-off (and the pupil
  // beyond it evanescent): the probe's spacing bounds the slope it sees, and kMostHalf the cost.
  double rate = k * p.na * reach;  // radians per unit of ρ
  constexpr int kProbe = 1024, kMostHalf = 4096;
  for (int iz = 0; iz < nz; ++iz) {
    const double z = (iz - nz / 2) * p.axial;
    Complex before = pathDifference(p, 0, z);
    for (int j = 1; j <= kProbe; ++j) {
      const Complex w = pathDifference(p, double(j) / kProbe, z);
      rate = std::max(rate, k * std::abs((w - before).real()) * kProbe + k * p.na * reach);
      before = w;
    }
  }
  const int half =
      std::clamp(int(std::ceil(8 * rate / (2 * std::numbers::pi))) * 2, 100, kMostHalf);
  const int nodes = 2 * half + 1;
  std::vector<double> rho(static_cast<size_t>(nodes)), weight(static_cast<size_t>(nodes));
  for (int j = 0; j < nodes; ++j) {
    rho[size_t(j)] = double(j) / (nodes - 1);
    const double w = j == 0 || j == nodes - 1 ? 1 : j % 2 ? 4 : 2;
    weight[size_t(j)] = w / (3.0 * (nodes - 1)) * rho[size_t(j)];
  }
  const double dr = p.lateral / kRadialSteps;
  const int radii = int(std::ceil(reach / dr)) + 2;
  // Every plane's pupil (weights and phase), then the profiles by bands of radii: each band's
  // Bessel rows are made once and serve every plane (a whole table would grow with the PSF's
  // width squared).
  std::vector<Complex> pupils(static_cast<size_t>(nz) * nodes);
  for (int iz = 0; iz < nz; ++iz) {
    const double z = (iz - nz / 2) * p.axial;
    for (int j = 0; j < nodes; ++j)
      pupils[size_t(iz) * nodes + j] =
          weight[size_t(j)] * std::exp(Complex(0, k) * pathDifference(p, rho[size_t(j)], z));
  }
  std::vector<double> profiles(static_cast<size_t>(nz) * radii);
  constexpr int kBand = 64;
  const int bands = (radii + kBand - 1) / kBand;
  std::atomic<int> done{0};
  pool.parallelFor(bands, [&](int64_t b0, int64_t b1) {
    std::vector<double> rows(static_cast<size_t>(kBand) * nodes);
    for (int64_t band = b0; band < b1; ++band) {
      job.checkCancelled();
      const int i0 = int(band) * kBand, i1 = std::min(radii, i0 + kBand);
      for (int i = i0; i < i1; ++i)
        for (int j = 0; j < nodes; ++j)
          rows[size_t(i - i0) * nodes + j] =
              std::cyl_bessel_j(0.0, k * p.na * double(i) * dr * rho[size_t(j)]);
      for (int iz = 0; iz < nz; ++iz) {
        // A band of a deep, oversampled PSF is long: a cancel is seen between planes too.
        if (iz % 64 == 63) job.checkCancelled();
        const Complex* pupil = pupils.data() + size_t(iz) * nodes;
        for (int i = i0; i < i1; ++i) {
          Complex a = 0;
          const double* row = rows.data() + size_t(i - i0) * nodes;
          for (int j = 0; j < nodes; ++j) a += row[j] * pupil[j];
          profiles[size_t(iz) * radii + i] = std::norm(a);
        }
      }
      if (b0 == 0) job.report(0.95 * double(++done) / double(b1));  // the calling thread's share
    }
  });

  std::vector<double> out(static_cast<size_t>(nz) * nxy * nxy);
  const int s = p.oversampling;
  pool.parallelFor(nz, [&](int64_t z0, int64_t z1) {
    for (int64_t iz = z0; iz < z1; ++iz) {
      const double* profile = profiles.data() + size_t(iz) * radii;
      double* plane = out.data() + size_t(iz) * nxy * nxy;
      for (int y = 0; y < nxy; ++y)
        for (int x = 0; x < nxy; ++x) {
          double v = 0;
          for (int b = 0; b < s; ++b)
            for (int a = 0; a < s; ++a) {
              const double dx = x - nxy / 2 + (a + 0.5) / s - 0.5;
              const double dy = y - nxy / 2 + (b + 0.5) / s - 0.5;
              const double at = std::hypot(dx, dy) * kRadialSteps;
              const int i = std::min(int(at), radii - 2);
              const double f = at - i;
              v += profile[i] + f * (profile[i + 1] - profile[i]);
            }
          plane[size_t(y) * nxy + x] = v / (s * s);
        }
    }
  });
  job.report(1.0);
  return out;
}

}  // namespace

Image microscopePsf(const MicroscopePsf& p, const Job& job) {
  check(p);
  cpu::ThreadPool pool;
  using Mode = MicroscopePsf::Mode;
  std::vector<double> v =
      widefield(p, p.mode == Mode::TwoPhoton ? p.excitation : p.wavelength, job, pool);
  if (p.mode == Mode::TwoPhoton) {
    for (double& x : v) x *= x;
  } else if (p.mode == Mode::Confocal) {
    const std::vector<double> ex = widefield(p, p.excitation, job, pool);
    for (size_t i = 0; i < v.size(); ++i) v[i] *= ex[i];
  }
  double sum = 0;
  for (double x : v) sum += x;
  Image out = Image::host({p.sizeZ, p.sizeXY, p.sizeXY});
  for (size_t i = 0; i < v.size(); ++i) out.data()[i] = float(v[i] / sum);
  out.spacing = {p.axial, p.lateral, p.lateral, true, "micron"};
  return out;
}

}  // namespace stacklens::compute::psf
