// Synthetic celestial WCS headers for the region, catalog and inverse-WCS tests, with the
// closed-form gnomonic (TAN) projection to check wcslib against.
#pragma once

#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "io/wcs.h"

namespace stacklens::io::test {

struct TanHeader {
  double ra0 = 150.0, dec0 = 30.0;  // CRVAL
  double crpix1 = 100.5, crpix2 = 80.5;
  double scale = 1.0 / 3600.0;  // degrees per pixel
  double rho = 0;               // CROTA2-style rotation (degrees)
  bool eastRight = false;       // CDELT1 > 0: the sky mirrored
  std::string lngType = "RA", latType = "DEC";
  std::string radesys = "ICRS";
  double equinox = 0;  // 0: no EQUINOX card

  // CDi_j from CDELT and CROTA2 (FITS paper II, eq. 189).
  std::array<double, 4> cd() const {
    const double c1 = eastRight ? scale : -scale, c2 = scale;
    const double r = rho * 3.14159265358979323846 / 180.0;
    return {c1 * std::cos(r), -c2 * std::sin(r), c1 * std::sin(r), c2 * std::cos(r)};
  }

  std::string cards(int& count) const {
    std::string h;
    count = 0;
    auto card = [&](const std::string& key, const std::string& value) {
      char text[81];
      std::snprintf(text, sizeof text, "%-8s= %20s", key.c_str(), value.c_str());
      std::string c = text;
      c.resize(80, ' ');
      h += c;
      ++count;
    };
    auto num = [](double v) {
      char t[40];
      std::snprintf(t, sizeof t, "%.17g", v);
      return std::string(t);
    };
    auto str = [](const std::string& s) { return "'" + s + "'"; };
    card("NAXIS", "2");
    card("NAXIS1", "200");
    card("NAXIS2", "160");
    std::string t1 = lngType, t2 = latType;
    while (t1.size() < 4) t1 += '-';
    while (t2.size() < 4) t2 += '-';
    card("CTYPE1", str(t1 + "-TAN"));
    card("CTYPE2", str(t2 + "-TAN"));
    card("CRVAL1", num(ra0));
    card("CRVAL2", num(dec0));
    card("CRPIX1", num(crpix1));
    card("CRPIX2", num(crpix2));
    const auto m = cd();
    card("CD1_1", num(m[0]));
    card("CD1_2", num(m[1]));
    card("CD2_1", num(m[2]));
    card("CD2_2", num(m[3]));
    if (!radesys.empty()) card("RADESYS", str(radesys));
    if (equinox != 0) card("EQUINOX", num(equinox));
    return h;
  }

  std::unique_ptr<Wcs> wcs() const {
    int count = 0;
    const std::string h = cards(count);
    return Wcs::fromFitsHeader(h, count, {0, 0}, {0, 1, -1});
  }

  // The gnomonic projection in closed form: (ra, dec) → 0-based pixel.
  std::array<double, 2> pixelOf(double ra, double dec) const {
    const double d = 3.14159265358979323846 / 180.0;
    const double a = ra * d, b = dec * d, a0 = ra0 * d, b0 = dec0 * d;
    const double den = std::sin(b) * std::sin(b0) + std::cos(b) * std::cos(b0) * std::cos(a - a0);
    const double xi = std::cos(b) * std::sin(a - a0) / den / d;
    const double eta =
        (std::sin(b) * std::cos(b0) - std::cos(b) * std::sin(b0) * std::cos(a - a0)) / den / d;
    const auto m = cd();
    const double det = m[0] * m[3] - m[1] * m[2];
    const double px = (m[3] * xi - m[1] * eta) / det, py = (-m[2] * xi + m[0] * eta) / det;
    return {crpix1 + px - 1.0, crpix2 + py - 1.0};
  }
};

}  // namespace stacklens::io::test
