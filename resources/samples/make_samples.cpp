// Writes the bundled sample stacks: a microscopy z-stack of beads and filaments blurred by a known
// 3D PSF with Poisson noise (plus that PSF), and a synthetic radio cube with a spectral WCS and a
// catalog of its point sources (CSV and DS9 regions). Deterministic (fixed seeds), run at build
// time: stacklens-make-samples OUTPUT_DIR
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "io/catalog.h"
#include "io/io_error.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "io/wcs.h"

namespace {

using stacklens::io::HeaderCard;
using stacklens::io::WriteOptions;

struct Volume {
  int64_t z, y, x;
  std::vector<float> v;
  Volume(int64_t z_, int64_t y_, int64_t x_) : z(z_), y(y_), x(x_), v(z_ * y_ * x_, 0.f) {}
  float& at(int64_t k, int64_t j, int64_t i) { return v[(k * y + j) * x + i]; }
};

std::vector<float> gaussianKernel(double sigma) {
  int radius = static_cast<int>(std::ceil(4 * sigma));
  std::vector<float> k(2 * radius + 1);
  double sum = 0;
  for (int i = -radius; i <= radius; ++i)
    sum += k[i + radius] = std::exp(-0.5 * i * i / (sigma * sigma));
  for (auto& w : k) w = static_cast<float>(w / sum);
  return k;
}

// Convolves one axis (0 = z, 1 = y, 2 = x) with a symmetric kernel, zero outside the volume
// (the sample's objects stay away from the borders, so the choice does not show).
void convolveAxis(Volume& vol, const std::vector<float>& kernel, int axis) {
  const int radius = static_cast<int>(kernel.size() / 2);
  const int64_t n[3] = {vol.z, vol.y, vol.x};
  const int64_t stride[3] = {vol.y * vol.x, vol.x, 1};
  std::vector<float> out(vol.v.size(), 0.f);
  for (int64_t k = 0; k < vol.z; ++k)
    for (int64_t j = 0; j < vol.y; ++j)
      for (int64_t i = 0; i < vol.x; ++i) {
        const int64_t idx[3] = {k, j, i};
        const int64_t base = (k * vol.y + j) * vol.x + i;
        double acc = 0;
        for (int t = -radius; t <= radius; ++t) {
          int64_t p = idx[axis] + t;
          if (p >= 0 && p < n[axis]) acc += kernel[t + radius] * vol.v[base + t * stride[axis]];
        }
        out[base] = static_cast<float>(acc);
      }
  vol.v.swap(out);
}

// A microscopy z-stack: 0.1 µm pixels, 0.3 µm planes, PSF σ = (2.0, 1.6, 1.6) pixels.
void writeMicroscopySample(const std::string& dir) {
  const double sigmaZ = 2.0, sigmaXY = 1.6;
  Volume truth(32, 200, 200);
  std::mt19937 rng(20261122);
  std::uniform_real_distribution<double> u(0, 1);
  // Beads: small bright spheres.
  for (int b = 0; b < 60; ++b) {
    double cz = 4 + u(rng) * 24, cy = 12 + u(rng) * 176, cx = 12 + u(rng) * 176;
    double r = 1.0 + u(rng) * 1.5, bright = 150 + u(rng) * 250;
    for (int64_t k = 0; k < truth.z; ++k)
      for (int64_t j = static_cast<int64_t>(cy - 3); j <= cy + 3; ++j)
        for (int64_t i = static_cast<int64_t>(cx - 3); i <= cx + 3; ++i) {
          double d2 = (k - cz) * (k - cz) / 4.0 + (j - cy) * (j - cy) + (i - cx) * (i - cx);
          if (d2 <= r * r) truth.at(k, j, i) += static_cast<float>(bright);
        }
  }
  // Filaments: thin tubes along smooth random curves that drift through z.
  for (int f = 0; f < 7; ++f) {
    double y = 20 + u(rng) * 160, x = 20 + u(rng) * 160, z = 6 + u(rng) * 20;
    double angle = u(rng) * 2 * M_PI, bright = 150 + u(rng) * 100;
    for (int s = 0; s < 900; ++s) {
      angle += (u(rng) - 0.5) * 0.08;
      y += 0.25 * std::sin(angle);
      x += 0.25 * std::cos(angle);
      z += (u(rng) - 0.5) * 0.06;
      if (y < 8 || y > 191 || x < 8 || x > 191 || z < 2 || z > 29) break;
      truth.at(std::lround(z), std::lround(y), std::lround(x)) += static_cast<float>(bright);
    }
  }
  convolveAxis(truth, gaussianKernel(sigmaZ), 0);
  convolveAxis(truth, gaussianKernel(sigmaXY), 1);
  convolveAxis(truth, gaussianKernel(sigmaXY), 2);
  // Photon counts: background 10, Poisson noise.
  for (auto& v : truth.v) {
    std::poisson_distribution<int> photons(10.0 + v);
    v = static_cast<float>(photons(rng));
  }
  WriteOptions options;
  options.spacing = {0.3, 0.1, 0.1};
  options.units = {"micron", "micron", "micron"};
  options.spacingKnown = true;
  options.tiffUInt16 = true;
  options.history.push_back(
      "StackLens sample: beads and filaments, Gaussian PSF sigma (z,y,x) = "
      "(2.0, 1.6, 1.6) px, background 10, Poisson noise");
  stacklens::io::writeStack(dir + "/beads.tif", truth.v.data(), truth.z, truth.y, truth.x, options);

  // The PSF that blurred it, sampled on 17×17×17 and normalised to sum 1.
  Volume psf(17, 17, 17);
  double sum = 0;
  for (int64_t k = 0; k < 17; ++k)
    for (int64_t j = 0; j < 17; ++j)
      for (int64_t i = 0; i < 17; ++i)
        sum += psf.at(k, j, i) = static_cast<float>(
            std::exp(-0.5 * ((k - 8) * (k - 8) / (sigmaZ * sigmaZ) +
                             ((j - 8) * (j - 8) + (i - 8) * (i - 8)) / (sigmaXY * sigmaXY))));
  for (auto& v : psf.v) v = static_cast<float>(v / sum);
  options.tiffUInt16 = false;
  options.history = {"StackLens sample PSF: Gaussian sigma (z,y,x) = (2.0, 1.6, 1.6) px"};
  stacklens::io::writeStack(dir + "/beads_psf.tif", psf.v.data(), 17, 17, 17, options);
}

HeaderCard card(std::string key, std::string value, std::string comment = {}) {
  return {std::move(key), std::move(value), std::move(comment)};
}

struct InjectedSource {
  double x, y, peak;  // 0-based pixel, Jy/beam
};

// value in hours or degrees → "hh:mm:ss.ssss" / "+dd:mm:ss.sss" (decimals on the seconds).
std::string sexagesimal(double value, int decimals, bool sign) {
  const bool negative = value < 0;
  const double scale = std::pow(10.0, decimals);
  const double total = std::round(std::fabs(value) * 3600.0 * scale) / scale;
  const long long whole = static_cast<long long>(total / 3600.0);
  const double rest = total - static_cast<double>(whole) * 3600.0;
  const int minutes = static_cast<int>(rest / 60.0);
  const double seconds = std::max(0.0, rest - minutes * 60.0);
  char text[64];
  std::snprintf(text, sizeof text, "%s%02lld:%02d:%0*.*f", sign ? (negative ? "-" : "+") : "",
                whole, minutes, decimals + 3, decimals, seconds);
  return text;
}

// The catalog of the cube's point sources, placed on the sky by the cube's own WCS as the viewer
// reads it: radio_cube_sources.csv (name, RA/Dec in degrees and sexagesimal, the pixel, the peak
// and the channels: the sources have flat spectra, so they are in every channel) and
// radio_cube_sources.reg (DS9 fk5 circles of the beam's FWHM/2 + 1″ around them).
void writeRadioCatalog(const std::string& dir, const std::vector<InjectedSource>& sources,
                       int64_t channels) {
  const auto reader = stacklens::io::openStack(dir + "/radio_cube.fits");
  const stacklens::io::Wcs* wcs = reader->wcs();
  if (!wcs || !wcs->hasCelestial())
    throw stacklens::io::IoError(dir + "/radio_cube.fits", "the sample has no celestial WCS");
  stacklens::io::CatalogTable table;
  table.name = "radio_cube_sources";
  table.columns = {"name", "ra", "dec", "ra_hms", "dec_dms", "x", "y", "peak_flux", "channel"};
  std::string regions =
      "# Region file format: DS9 version 4.1\n"
      "global color=green dashlist=8 3 width=1 font=\"helvetica 10 normal roman\" select=1 "
      "highlite=1 dash=0 fixed=0 edit=1 move=1 delete=1 include=1 source=1\n"
      "fk5\n";
  auto number = [](const char* format, double v) {
    char text[64];
    std::snprintf(text, sizeof text, format, v);
    return std::string(text);
  };
  const std::string channelRange = "0-" + std::to_string(channels - 1);
  for (size_t i = 0; i < sources.size(); ++i) {
    const InjectedSource& s = sources[i];
    double ra = 0, dec = 0;
    if (!wcs->celestial(s.x, s.y, 0, ra, dec))
      throw stacklens::io::IoError(dir + "/radio_cube.fits", "a source has no sky position");
    char name[32];
    std::snprintf(name, sizeof name, "S%02zu", i + 1);
    const std::string raText = number("%.10f", ra), decText = number("%.10f", dec);
    table.cells.push_back({name, raText, decText, sexagesimal(ra / 15.0, 4, false),
                           sexagesimal(dec, 3, true), number("%.6f", s.x), number("%.6f", s.y),
                           number("%.6g", s.peak), channelRange});
    regions += "circle(" + raText + "," + decText + ",8.000\") # text={" + name + "}\n";
  }
  stacklens::io::writeCsv(table, dir + "/radio_cube_sources.csv");
  std::ofstream out(dir + "/radio_cube_sources.reg", std::ios::binary | std::ios::trunc);
  out << regions;
  if (!out.flush())
    throw stacklens::io::IoError(dir + "/radio_cube_sources.reg", "cannot write the regions");
}

// A radio cube: 128×128 pixels of 4 arcsec, 32 channels of 10 km/s; point sources (beam σ 1.5 px)
// with flat spectra, an extended source, and a rotating disk whose line emission moves with
// velocity; Gaussian noise σ = 1 mJy/beam.
void writeRadioSample(const std::string& dir) {
  const int64_t nz = 32, ny = 128, nx = 128;
  const double beam = 1.5;
  Volume cube(nz, ny, nx);
  std::mt19937 rng(1420405);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 0.001);
  auto addGaussian = [&](int64_t k, double cy, double cx, double sy, double sx, double pa,
                         double peak) {
    double c = std::cos(pa), s = std::sin(pa);
    for (int64_t j = 0; j < ny; ++j)
      for (int64_t i = 0; i < nx; ++i) {
        double dy = j - cy, dx = i - cx;
        double a = (dx * c + dy * s) / sx, b = (-dx * s + dy * c) / sy;
        double r2 = a * a + b * b;
        if (r2 < 40) cube.at(k, j, i) += static_cast<float>(peak * std::exp(-0.5 * r2));
      }
  };
  struct Point {
    double y, x, flux;
  };
  std::vector<Point> points;
  for (int p = 0; p < 40; ++p)
    points.push_back({6 + u(rng) * 116, 6 + u(rng) * 116, 0.004 + 0.05 * std::pow(u(rng), 3)});
  for (int64_t k = 0; k < nz; ++k) {
    for (const auto& p : points) addGaussian(k, p.y, p.x, beam, beam, 0, p.flux);
    addGaussian(k, 90, 35, 6, 12, 0.6, 0.01);  // an extended continuum source
    // Rotating disk centred at (64, 64): at channel velocity v the emission sits where the
    // projected rotation velocity matches, a line across the disk moving with v.
    double v = (k - (nz - 1) / 2.0) / ((nz - 1) / 2.0);  // −1..1
    for (double r = -20; r <= 20; r += 0.5) {
      double along = v * 20 * 0.9;
      double y = 64 + r * std::sin(0.5) + along * std::cos(0.5) * 0.5;
      double x = 64 + r * std::cos(0.5) - along * std::sin(0.5) * 0.5;
      if (std::fabs(r) < 22 * std::sqrt(std::max(0.0, 1 - v * v * 0.8)))
        addGaussian(k, y, x, beam, beam, 0, 0.004 * std::exp(-std::fabs(r) / 15));
    }
  }
  for (auto& v : cube.v) v += static_cast<float>(noise(rng));

  WriteOptions options;
  options.header = {
      card("BUNIT", "'Jy/beam'", "brightness unit"),
      card("OBJECT", "'StackLens synthetic sky'"),
      card("BMAJ", "0.0019625", "beam FWHM (deg): 1.5 px sigma"),
      card("BMIN", "0.0019625"),
      card("BPA", "0.0"),
      card("EQUINOX", "2000.0"),
      card("RADESYS", "'FK5'"),
      card("CTYPE1", "'RA---SIN'"),
      card("CRVAL1", "83.8220833"),
      card("CRPIX1", "65.0"),
      card("CDELT1", "-0.0011111111"),
      card("CUNIT1", "'deg'"),
      card("CTYPE2", "'DEC--SIN'"),
      card("CRVAL2", "-5.3911111"),
      card("CRPIX2", "65.0"),
      card("CDELT2", "0.0011111111"),
      card("CUNIT2", "'deg'"),
      card("CTYPE3", "'VRAD'"),
      card("CRVAL3", "0.0"),
      card("CRPIX3", "16.5"),
      card("CDELT3", "10000.0", "10 km/s channels"),
      card("CUNIT3", "'m/s'"),
      card("SPECSYS", "'LSRK'"),
      card("RESTFRQ", "1.420405752E9", "HI line"),
  };
  options.history.push_back(
      "StackLens sample: synthetic radio sky, 40 point sources, one "
      "extended source, a rotating disk in HI, noise 1 mJy/beam");
  stacklens::io::writeStack(dir + "/radio_cube.fits", cube.v.data(), nz, ny, nx, options);
  std::vector<InjectedSource> sources;
  for (const auto& p : points) sources.push_back({p.x, p.y, p.flux});
  writeRadioCatalog(dir, sources, nz);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stacklens-make-samples OUTPUT_DIR\n");
    return 2;
  }
  try {
    writeMicroscopySample(argv[1]);
    writeRadioSample(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stacklens-make-samples: error: %s\n", e.what());
    return 3;
  }
  return 0;
}
