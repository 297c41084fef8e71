// A TAN (gnomonic) image WCS in closed form, for tests that check what the WCS library gives:
// the FITS header cards, and pixel ↔ sky by the gnomonic formulas (Calabretta & Greisen 2002,
// LONPOLE 180), independent of wcslib.
#pragma once

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::testing {

struct TanSky {
  double ra0 = 150.0, dec0 = 20.0;      // CRVAL, degrees
  double crpix1 = 50.5, crpix2 = 40.5;  // 1-based
  double cdelt = 0.001;                 // degrees per pixel; RA grows to the left (CDELT1 < 0)

  static constexpr double kDeg = 3.14159265358979323846 / 180.0;

  std::vector<io::HeaderCard> cards() const {
    auto n = [](double v) {
      char t[40];
      std::snprintf(t, sizeof t, "%.17g", v);
      return std::string(t);
    };
    return {{"CTYPE1", "'RA---TAN'", ""}, {"CTYPE2", "'DEC--TAN'", ""}, {"CRVAL1", n(ra0), ""},
            {"CRVAL2", n(dec0), ""},      {"CRPIX1", n(crpix1), ""},    {"CRPIX2", n(crpix2), ""},
            {"CDELT1", n(-cdelt), ""},    {"CDELT2", n(cdelt), ""},     {"CUNIT1", "'deg'", ""},
            {"CUNIT2", "'deg'", ""},      {"RADESYS", "'ICRS'", ""}};
  }

  // 0-based pixel → (RA, Dec) in degrees.
  std::array<double, 2> sky(double x, double y) const {
    const double xi = -cdelt * (x + 1 - crpix1) * kDeg, eta = cdelt * (y + 1 - crpix2) * kDeg;
    const double d0 = dec0 * kDeg;
    const double ra = ra0 + std::atan2(xi, std::cos(d0) - eta * std::sin(d0)) / kDeg;
    const double dec =
        std::asin((std::sin(d0) + eta * std::cos(d0)) / std::sqrt(1 + xi * xi + eta * eta)) / kDeg;
    return {ra, dec};
  }

  // (RA, Dec) in degrees → 0-based pixel.
  std::array<double, 2> pixel(double ra, double dec) const {
    const double a = (ra - ra0) * kDeg, d = dec * kDeg, d0 = dec0 * kDeg;
    const double c = std::sin(d0) * std::sin(d) + std::cos(d0) * std::cos(d) * std::cos(a);
    const double xi = std::cos(d) * std::sin(a) / c;
    const double eta = (std::cos(d0) * std::sin(d) - std::sin(d0) * std::cos(d) * std::cos(a)) / c;
    return {crpix1 - 1 + xi / kDeg / -cdelt, crpix2 - 1 + eta / kDeg / cdelt};
  }

  // Great-circle separation in arcsec (haversine: accurate at the small separations tested).
  static double separationArcsec(const std::array<double, 2>& p, const std::array<double, 2>& q) {
    const double s1 = std::sin((q[1] - p[1]) * kDeg / 2), s2 = std::sin((q[0] - p[0]) * kDeg / 2);
    const double h = s1 * s1 + std::cos(p[1] * kDeg) * std::cos(q[1] * kDeg) * s2 * s2;
    return 2 * std::asin(std::sqrt(h)) / kDeg * 3600;
  }
};

}  // namespace stacklens::testing
