// Wcs: wcslib's wcspih/wcsset/wcsp2s on the header of the chosen HDU.
#include "io/wcs.h"

#include "io/spectral_units.h"
#include "io/wcs_cards.h"

#include <wcslib/wcs.h>
#include <wcslib/wcserr.h>
#include <wcslib/wcshdr.h>
#include <wcslib/wcsmath.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace stacklens::io {

struct Wcs::Impl {
  wcsprm wcs{};
  std::vector<double> fixedPixel;
  std::array<int, 3> xyzAxis{-1, -1, -1};
  mutable std::mutex mutex;  // wcsp2s may re-run wcsset, which writes into the struct
  ~Impl() { wcsfree(&wcs); }
};

Wcs::Wcs(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Wcs::~Wcs() = default;

namespace {

// wcspih's scanner (wcslib 7.12) overflows a buffer on some malformed cards (found by
// fits_fuzzer: NUL bytes, a string value without its closing quote). FITS headers may only hold
// printable ASCII, so other bytes become spaces, and a card with an unterminated string is
// blanked: neither can be part of a valid WCS.
constexpr int kMaxAxes = 9;

}  // namespace

bool isDistortionKey(const std::string& key) {
  std::string k = key;
  while (!k.empty() && k.back() == ' ') k.pop_back();
  for (const char* family : {"DP", "DQ", "CPDIS", "CQDIS", "CPERR", "CQERR", "DVERR"}) {
    const size_t n = std::strlen(family);
    if (k.size() > n && k.compare(0, n, family) == 0 &&
        std::isdigit(static_cast<unsigned char>(k[n])))
      return true;
  }
  return false;
}

std::string wellFormedWcsCards(const std::string& cards, int count) {
  std::string out = cards.substr(0, static_cast<size_t>(count) * 80);
  for (char& c : out)
    if (c < 0x20 || c > 0x7e) c = ' ';
  for (size_t start = 0; start + 80 <= out.size(); start += 80) {
    if (out.compare(start + 8, 2, "= ") != 0) continue;
    size_t q = out.find_first_not_of(' ', start + 10);
    if (q >= start + 80 || out[q] != '\'') continue;
    bool closed = false;
    for (size_t i = q + 1; i < start + 80; ++i) {
      if (out[i] != '\'') continue;
      if (i + 1 < start + 80 && out[i + 1] == '\'') {
        ++i;  // '' is an escaped quote inside the string
        continue;
      }
      closed = true;
      break;
    }
    if (!closed) out.replace(start, 80, std::string(80, ' '));
  }
  // wcslib sizes its arrays by the largest axis number it sees (PCi_j grows as its square, for
  // each of 27 alternates): WCS cards naming an axis beyond 9, or NAXIS/WCSAXES above 9, are
  // blanked. Only the axis-indexed WCS families are checked: other keywords (a DSS plate's AMDX13,
  // say) feed wcslib's distortion handling and must stay.
  static const char* kAxisFamilies[] = {"CTYPE", "CUNIT", "CRPIX", "CRVAL", "CDELT",
                                        "CROTA", "CNAME", "CRDER", "CSYER", "PC",
                                        "CD",    "PV",    "PS"};
  for (size_t start = 0; start + 80 <= out.size(); start += 80) {
    const std::string key = out.substr(start, 8);
    long axis = 0;
    if (key.rfind("WCSAXES", 0) == 0 || key == "NAXIS   ") {
      axis = std::strtol(out.c_str() + start + 10, nullptr, 10);
    } else {
      for (const char* family : kAxisFamilies) {
        const size_t n = std::strlen(family);
        if (key.compare(0, n, family) != 0 || n >= key.size() ||
            !std::isdigit(static_cast<unsigned char>(key[n])))
          continue;
        axis = std::strtol(key.c_str() + n, nullptr, 10);
        // PCi_j and CDi_j: the second index is an axis too (PVi_m's m is not).
        const size_t underscore = key.find('_', n);
        if ((std::strcmp(family, "PC") == 0 || std::strcmp(family, "CD") == 0) &&
            underscore != std::string::npos)
          axis = std::max(axis, std::strtol(key.c_str() + underscore + 1, nullptr, 10));
        break;
      }
    }
    if (axis > kMaxAxes) out.replace(start, 80, std::string(80, ' '));
  }
  // Distortion records (DPja, DQia, CPDISja, CQDISia): wcspih in wcslib 7.12 corrupts the heap on
  // the TPD records that wcslib itself writes for a DSS plate solution, so they are left out and
  // coordinates are those of the linear WCS.
  for (size_t start = 0; start + 80 <= out.size(); start += 80)
    if (isDistortionKey(out.substr(start, 8))) out.replace(start, 80, std::string(80, ' '));
  return out;
}

std::unique_ptr<Wcs> Wcs::fromFitsHeader(const std::string& cards, int count,
                                         const std::vector<double>& fixedPixel,
                                         const std::array<int, 3>& xyzAxis) {
  if (count <= 0 || fixedPixel.size() > static_cast<size_t>(kMaxAxes)) return nullptr;
  std::string header = wellFormedWcsCards(cards, count);  // wcspih may also modify its input
  int nreject = 0, nwcs = 0;
  wcsprm* all = nullptr;
  if (wcspih(header.data(), count, WCSHDR_all, 0, &nreject, &nwcs, &all) != 0 || nwcs < 1) {
    if (all) wcsvfree(&nwcs, &all);
    return nullptr;
  }
  // The primary description (alternate ' ') when there is one.
  int pick = 0;
  for (int i = 0; i < nwcs; ++i)
    if (all[i].alt[0] == ' ' || all[i].alt[0] == '\0') {
      pick = i;
      break;
    }
  auto impl = std::make_unique<Impl>();
  impl->wcs.flag = -1;
  int status = wcssub(1, &all[pick], nullptr, nullptr, &impl->wcs);
  wcsvfree(&nwcs, &all);
  if (status != 0) return nullptr;
  bool anyType = false;
  for (int i = 0; i < impl->wcs.naxis; ++i)
    if (impl->wcs.ctype[i][0] != '\0') anyType = true;
  if (!anyType) return nullptr;
  if (wcsset(&impl->wcs) != 0) return nullptr;
  impl->fixedPixel = fixedPixel;
  impl->xyzAxis = xyzAxis;
  return std::unique_ptr<Wcs>(new Wcs(std::move(impl)));
}

std::vector<std::string> Wcs::axisTypes() const {
  std::vector<std::string> out;
  for (int i = 0; i < impl_->wcs.naxis; ++i) out.emplace_back(impl_->wcs.ctype[i]);
  return out;
}

bool Wcs::hasCelestial() const { return impl_->wcs.lng >= 0 && impl_->wcs.lat >= 0; }
bool Wcs::hasSpectral() const { return impl_->wcs.spec >= 0; }

std::vector<double> Wcs::pixelToWorld(double x, double y, double z) const {
  const wcsprm& w = impl_->wcs;
  const size_t n = static_cast<size_t>(w.naxis);
  std::vector<double> pixel(n, 1.0), imgcrd(n), world(n);
  for (size_t i = 0; i < n && i < impl_->fixedPixel.size(); ++i)
    pixel[i] = impl_->fixedPixel[i] + 1.0;
  const double coords[3] = {x, y, z};
  for (size_t role = 0; role < 3; ++role) {
    const int axis = impl_->xyzAxis[role];
    if (axis >= 0 && static_cast<size_t>(axis) < n)
      pixel[static_cast<size_t>(axis)] = coords[role] + 1.0;
  }
  double phi = 0, theta = 0;
  int stat = 0;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (wcsp2s(&impl_->wcs, 1, static_cast<int>(n), pixel.data(), imgcrd.data(), &phi, &theta,
             world.data(), &stat) != 0)
    return std::vector<double>(n, std::nan(""));
  return world;
}

namespace {

const char* kMinus = "\xe2\x88\x92";  // U+2212, the typographic minus
const char* kDegree = "\xc2\xb0";

std::string signedFixed(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, std::fabs(v));
  return (v < 0 && std::string(text).find_first_not_of("0.") != std::string::npos ? kMinus : "") +
         std::string(text);
}

// value in units of the whole (hours or degrees) → "[−]hh:mm:ss.s…" with d decimals on seconds.
std::string sexagesimal(double value, int decimals, bool sign) {
  const bool negative = value < 0;
  double a = std::fabs(value);
  const double scale = std::pow(10.0, decimals);
  // Round once, on the total seconds, so 59.999 never prints as 60.
  double totalSeconds = std::round(a * 3600.0 * scale) / scale;
  long long whole = static_cast<long long>(totalSeconds / 3600.0);
  double rest = totalSeconds - static_cast<double>(whole) * 3600.0;
  int minutes = static_cast<int>(rest / 60.0);
  double seconds = rest - minutes * 60.0;
  if (seconds < 0) seconds = 0;
  char text[64];
  std::snprintf(text, sizeof text, "%02lld:%02d:%0*.*f", whole, minutes, decimals + 3, decimals,
                seconds);
  std::string out = text;
  if (sign) out = (negative ? std::string(kMinus) : std::string("+")) + out;
  return out;
}

std::string trimType(const char* ctype) {
  std::string t(ctype);
  auto dash = t.find('-');
  return dash == std::string::npos ? t : t.substr(0, dash);
}

}  // namespace

bool Wcs::celestial(double x, double y, double z, double& lng, double& lat) const {
  if (!hasCelestial()) return false;
  const wcsprm& w = impl_->wcs;
  const std::vector<double> world = pixelToWorld(x, y, z);
  lng = world[static_cast<size_t>(w.lng)], lat = world[static_cast<size_t>(w.lat)];
  return std::isfinite(lng) && std::isfinite(lat);
}

std::string Wcs::formatCelestial(double x, double y, double z) const {
  if (!hasCelestial()) return "";
  const wcsprm& w = impl_->wcs;
  std::vector<double> world = pixelToWorld(x, y, z);
  double lng = world[static_cast<size_t>(w.lng)], lat = world[static_cast<size_t>(w.lat)];
  if (!std::isfinite(lng) || !std::isfinite(lat)) return "";
  lng = std::fmod(lng, 360.0);
  if (lng < 0) lng += 360.0;
  const std::string lngType = trimType(w.ctype[w.lng]);
  const std::string latType = trimType(w.ctype[w.lat]);
  if (lngType == "RA") {
    return "RA " + sexagesimal(lng / 15.0, 2, false) + " Dec " + sexagesimal(lat, 1, true) + " (" +
           signedFixed(lng, 5) + kDegree + ", " + signedFixed(lat, 5) + kDegree + ")";
  }
  return lngType + " " + signedFixed(lng, 4) + kDegree + " " + latType + " " + signedFixed(lat, 4) +
         kDegree;
}

// The world axis shown for z: the spectral one, else the one that follows the z pixel axis when
// it is neither celestial nor absent (e.g. a linear or time axis); -1 when none.
static int worldAxisOfZ(const wcsprm& w, int zPixelAxis) {
  if (w.spec >= 0) return w.spec;
  if (zPixelAxis < 0 || zPixelAxis >= w.naxis || zPixelAxis == w.lng || zPixelAxis == w.lat)
    return -1;
  return zPixelAxis;
}

bool Wcs::zAxis(int64_t slices, ZAxis& out) const {
  const wcsprm& w = impl_->wcs;
  const int axis = worldAxisOfZ(w, impl_->xyzAxis[2]);
  if (axis < 0) return false;
  out.type = trimType(w.ctype[axis]);
  const AxisUnit unit = axisUnit(w.cunit[axis]);
  out.unit = unit.unit;
  const double scale = unit.scale;
  out.values.clear();
  for (int64_t z = 0; z < slices; ++z) {
    const double v = pixelToWorld(0, 0, double(z))[static_cast<size_t>(axis)];
    if (!std::isfinite(v)) return false;
    out.values.push_back(v * scale);
  }
  return true;
}

std::string Wcs::formatSpectral(double z) const {
  const wcsprm& w = impl_->wcs;
  const int axis = worldAxisOfZ(w, impl_->xyzAxis[2]);
  if (axis < 0) return "";
  std::vector<double> world = pixelToWorld(0, 0, z);
  double v = world[static_cast<size_t>(axis)];
  if (!std::isfinite(v)) return "";
  std::string unit = w.cunit[axis];
  const std::string type = trimType(w.ctype[axis]);
  char text[64];
  if (const AxisUnit velocity = axisUnit(unit); velocity.unit == "km/s") {
    std::snprintf(text, sizeof text, "%.3f", v * velocity.scale);
    unit = velocity.unit;
  } else if (unit == "Hz") {
    const double a = std::fabs(v);
    double scale = 1.0;
    if (a >= 1e9)
      scale = 1e9, unit = "GHz";
    else if (a >= 1e6)
      scale = 1e6, unit = "MHz";
    else if (a >= 1e3)
      scale = 1e3, unit = "kHz";
    std::snprintf(text, sizeof text, "%.6f", v / scale);
  } else if (unit == "m") {
    const double a = std::fabs(v);
    double scale = 1e-9;
    unit = "nm";
    if (a >= 1e-3)
      scale = 1e-3, unit = "mm";
    else if (a >= 1e-6)
      scale = 1e-6, unit = "\xc2\xb5m";
    std::snprintf(text, sizeof text, "%.4f", v / scale);
  } else {
    std::snprintf(text, sizeof text, "%.6g", v);
  }
  std::string number = text;
  if (!number.empty() && number[0] == '-') number = kMinus + number.substr(1);
  return type + " " + number + (unit.empty() ? "" : " " + unit);
}

// ---- Sky frames and the inverse transform ----

namespace {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<std::array<double, 3>, 3>;
constexpr double kDeg = 3.14159265358979323846 / 180.0;

Vec3 unitVector(double lon, double lat) {
  const double cl = std::cos(lat * kDeg);
  return {cl * std::cos(lon * kDeg), cl * std::sin(lon * kDeg), std::sin(lat * kDeg)};
}

void sphericalOf(const Vec3& v, double& lon, double& lat) {
  lon = std::atan2(v[1], v[0]) / kDeg;
  if (lon < 0) lon += 360.0;
  lat = std::atan2(v[2], std::hypot(v[0], v[1])) / kDeg;
}

Vec3 times(const Mat3& m, const Vec3& v) {
  return {m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
          m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
          m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2]};
}

Vec3 transposeTimes(const Mat3& m, const Vec3& v) {
  return {m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
          m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
          m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2]};
}

// Equatorial J2000 → galactic: the rows are the galactic x (towards the centre), y and z (the
// north galactic pole) axes in J2000 coordinates, the IAU 1958 definition carried to J2000 as
// the Hipparcos catalogue publishes it (pole at RA 192.85948°, Dec 27.12825°; the centre at
// RA 266.40499°, Dec −28.93617°).
constexpr Mat3 kPublishedGalactic = {{{-0.0548755604, -0.8734370902, -0.4838350155},
                                      {+0.4941094279, -0.4448296300, +0.7469822445},
                                      {-0.8676661490, -0.1980763734, +0.4559837762}}};

// The published matrix made exactly orthonormal (its 10 digits leave ~1e-10 of skew, which
// would show as 20 µas between a conversion and its inverse).
Mat3 orthonormalGalactic() {
  Mat3 m = kPublishedGalactic;
  auto dot = [](const std::array<double, 3>& a, const std::array<double, 3>& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  };
  auto normalize = [&](std::array<double, 3>& a) {
    const double n = std::sqrt(dot(a, a));
    for (double& v : a) v /= n;
  };
  normalize(m[0]);
  const double d = dot(m[1], m[0]);
  for (int i = 0; i < 3; ++i) m[1][i] -= d * m[0][i];
  normalize(m[1]);
  m[2] = {m[0][1] * m[1][2] - m[0][2] * m[1][1], m[0][2] * m[1][0] - m[0][0] * m[1][2],
          m[0][0] * m[1][1] - m[0][1] * m[1][0]};
  return m;
}

const Mat3 kEquatorialToGalactic = orthonormalGalactic();

// Equatorial J2000 → ecliptic J2000: a rotation about x by the J2000 obliquity (IAU 1976,
// 84381.448″).
Mat3 equatorialToEcliptic() {
  const double e = 84381.448 / 3600.0 * kDeg;
  return {{{1, 0, 0}, {0, std::cos(e), std::sin(e)}, {0, -std::sin(e), std::cos(e)}}};
}

// FK4 B1950 (E-terms removed) → FK5 J2000 for a source without proper motion in FK5 at epoch
// B1950: the matrix of Standish (1982) / Aoki et al. (1983) as given by Murray (1989).
constexpr Mat3 kFk4ToFk5 = {{{0.9999256794956877, -0.0111814832204662, -0.0048590038153592},
                             {0.0111814832391717, 0.9999374848933135, -0.0000271625947142},
                             {0.0048590037723143, -0.0000271702937440, 0.9999881946023742}}};
// The E-terms of aberration that FK4 positions include (radians), at B1950.
constexpr Vec3 kETerms = {-1.62557e-6, -0.31919e-6, -0.13843e-6};

Vec3 normalized(const Vec3& v) {
  const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  return {v[0] / n, v[1] / n, v[2] / n};
}

Vec3 fk4ToFk5(const Vec3& r) {
  const double w = r[0] * kETerms[0] + r[1] * kETerms[1] + r[2] * kETerms[2];
  const Vec3 noE = normalized(
      {r[0] - kETerms[0] + w * r[0], r[1] - kETerms[1] + w * r[1], r[2] - kETerms[2] + w * r[2]});
  return normalized(times(kFk4ToFk5, noE));
}

Vec3 fk5ToFk4(const Vec3& r) {
  const Vec3 noE = normalized(transposeTimes(kFk4ToFk5, r));
  // Adding the E-terms back: the removal above inverted to first order, which is exact to
  // ~1e-12 rad since the terms are ~1e-6.
  Vec3 v = noE;
  for (int i = 0; i < 2; ++i) {
    const double w = v[0] * kETerms[0] + v[1] * kETerms[1] + v[2] * kETerms[2];
    v = normalized({noE[0] + kETerms[0] - w * v[0], noE[1] + kETerms[1] - w * v[1],
                    noE[2] + kETerms[2] - w * v[2]});
  }
  return v;
}

// IAU 1976 precession (Lieske 1977) of FK5 positions from J2000 to Julian equinox `equinox`.
Mat3 precessionFromJ2000(double equinox) {
  const double t = (equinox - 2000.0) / 100.0;
  const double as = kDeg / 3600.0;
  const double zeta = (2306.2181 * t + 0.30188 * t * t + 0.017998 * t * t * t) * as;
  const double z = (2306.2181 * t + 1.09468 * t * t + 0.018203 * t * t * t) * as;
  const double theta = (2004.3109 * t - 0.42665 * t * t - 0.041833 * t * t * t) * as;
  const double cz = std::cos(zeta), sz = std::sin(zeta), cZ = std::cos(z), sZ = std::sin(z);
  const double ct = std::cos(theta), st = std::sin(theta);
  // Rz(−z) · Ry(θ) · Rz(−ζ)
  return {{{cZ * ct * cz - sZ * sz, -cZ * ct * sz - sZ * cz, -cZ * st},
           {sZ * ct * cz + cZ * sz, -sZ * ct * sz + cZ * cz, -sZ * st},
           {st * cz, -st * sz, ct}}};
}

// Any concrete frame ↔ the hub, FK5 J2000 (= ICRS here).
bool toHub(SkyFrame frame, double equinox, Vec3& v) {
  switch (frame) {
    case SkyFrame::Icrs:
      return true;
    case SkyFrame::Fk5:
      if (equinox != 0 && equinox != 2000.0) v = transposeTimes(precessionFromJ2000(equinox), v);
      return true;
    case SkyFrame::Fk4:
      if (equinox != 0 && equinox != 1950.0) return false;  // FK4 precession is not done
      v = fk4ToFk5(v);
      return true;
    case SkyFrame::Galactic:
      v = transposeTimes(kEquatorialToGalactic, v);
      return true;
    case SkyFrame::Ecliptic:
      v = transposeTimes(equatorialToEcliptic(), v);
      return true;
    default:
      return false;
  }
}

bool fromHub(SkyFrame frame, double equinox, Vec3& v) {
  switch (frame) {
    case SkyFrame::Icrs:
      return true;
    case SkyFrame::Fk5:
      if (equinox != 0 && equinox != 2000.0) v = times(precessionFromJ2000(equinox), v);
      return true;
    case SkyFrame::Fk4:
      if (equinox != 0 && equinox != 1950.0) return false;
      v = fk5ToFk4(v);
      return true;
    case SkyFrame::Galactic:
      v = times(kEquatorialToGalactic, v);
      return true;
    case SkyFrame::Ecliptic:
      v = times(equatorialToEcliptic(), v);
      return true;
    default:
      return false;
  }
}

// from (at fromEquinox) → to (at toEquinox); 0 means the frame's standard equinox.
bool convertBetween(SkyFrame from, double fromEquinox, SkyFrame to, double toEquinox, double& lon,
                    double& lat) {
  if (!std::isfinite(lon) || !std::isfinite(lat)) return false;
  auto standard = [](SkyFrame f, double e) {
    if (e != 0) return e;
    return f == SkyFrame::Fk5 ? 2000.0 : f == SkyFrame::Fk4 ? 1950.0 : 0.0;
  };
  if (from == to && standard(from, fromEquinox) == standard(to, toEquinox)) return true;
  Vec3 v = unitVector(lon, lat);
  if (!toHub(from, fromEquinox, v) || !fromHub(to, toEquinox, v)) return false;
  sphericalOf(v, lon, lat);
  return true;
}

}  // namespace

const char* skyFrameName(SkyFrame frame) {
  switch (frame) {
    case SkyFrame::Image:
      return "image";
    case SkyFrame::Icrs:
      return "icrs";
    case SkyFrame::Fk5:
      return "fk5";
    case SkyFrame::Fk4:
      return "fk4";
    case SkyFrame::Galactic:
      return "galactic";
    case SkyFrame::Ecliptic:
      return "ecliptic";
    case SkyFrame::Native:
      return "wcs";
  }
  return "";
}

bool convertSkyFrame(SkyFrame from, SkyFrame to, double& lon, double& lat) {
  return convertBetween(from, 0, to, 0, lon, lat);
}

void offsetOnSky(double lon, double lat, double pa, double distance, double& outLon,
                 double& outLat) {
  const double p1 = lat * kDeg, d = distance * kDeg, a = pa * kDeg;
  const double sinLat2 = std::sin(p1) * std::cos(d) + std::cos(p1) * std::sin(d) * std::cos(a);
  const double lat2 = std::asin(std::clamp(sinLat2, -1.0, 1.0));
  const double dLon =
      std::atan2(std::sin(a) * std::sin(d) * std::cos(p1), std::cos(d) - std::sin(p1) * sinLat2);
  outLat = lat2 / kDeg;
  outLon = std::fmod(lon + dLon / kDeg, 360.0);
  if (outLon < 0) outLon += 360.0;
}

double skySeparation(double lon1, double lat1, double lon2, double lat2) {
  const double p1 = lat1 * kDeg, p2 = lat2 * kDeg, dl = (lon2 - lon1) * kDeg;
  const double a = std::cos(p2) * std::sin(dl);
  const double b = std::cos(p1) * std::sin(p2) - std::sin(p1) * std::cos(p2) * std::cos(dl);
  const double c = std::sin(p1) * std::sin(p2) + std::cos(p1) * std::cos(p2) * std::cos(dl);
  return std::atan2(std::hypot(a, b), c) / kDeg;
}

SkyFrame Wcs::celestialFrame() const {
  if (!hasCelestial()) return SkyFrame::Image;
  const wcsprm& w = impl_->wcs;
  const std::string lng = w.lngtyp;
  if (lng == "GLON") return SkyFrame::Galactic;
  if (lng == "ELON") return SkyFrame::Ecliptic;
  if (lng != "RA") return SkyFrame::Native;
  std::string sys = w.radesys;
  while (!sys.empty() && sys.back() == ' ') sys.pop_back();
  const bool hasEquinox = !undefined(w.equinox) && w.equinox != 0;
  if (sys.empty()) {
    if (!hasEquinox) return SkyFrame::Icrs;
    return w.equinox < 1984.0 ? SkyFrame::Fk4 : SkyFrame::Fk5;
  }
  if (sys == "ICRS") return SkyFrame::Icrs;
  if (sys == "FK5") return SkyFrame::Fk5;
  if (sys == "FK4" || sys == "FK4-NO-E") return SkyFrame::Fk4;
  return SkyFrame::Native;  // GAPPT and others: no fixed relation to the catalogue frames
}

double Wcs::celestialEquinox() const {
  const SkyFrame frame = celestialFrame();
  if (frame != SkyFrame::Fk5 && frame != SkyFrame::Fk4) return 0;
  const double e = impl_->wcs.equinox;
  if (undefined(e) || e == 0) return frame == SkyFrame::Fk5 ? 2000.0 : 1950.0;
  return e;
}

bool Wcs::worldToPixel(double lng, double lat, double z, double& x, double& y) const {
  if (!hasCelestial() || !std::isfinite(lng) || !std::isfinite(lat)) return false;
  const wcsprm& w = impl_->wcs;
  const int xAxis = impl_->xyzAxis[0], yAxis = impl_->xyzAxis[1];
  if (xAxis < 0 || yAxis < 0 || xAxis >= w.naxis || yAxis >= w.naxis) return false;
  // The other world values (spectral, Stokes) are those of slice z at the reference pixel, where
  // every projection has a world coordinate.
  std::vector<double> world = pixelToWorld(w.crpix[xAxis] - 1.0, w.crpix[yAxis] - 1.0, z);
  const size_t n = world.size();
  world[static_cast<size_t>(w.lng)] = lng;
  world[static_cast<size_t>(w.lat)] = lat;
  for (double v : world)
    if (!std::isfinite(v)) return false;
  std::vector<double> imgcrd(n), pixel(n);
  double phi = 0, theta = 0;
  int stat = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (wcss2p(&impl_->wcs, 1, static_cast<int>(n), world.data(), &phi, &theta, imgcrd.data(),
               pixel.data(), &stat) != 0 ||
        stat != 0)
      return false;
  }
  x = pixel[static_cast<size_t>(xAxis)] - 1.0;
  y = pixel[static_cast<size_t>(yAxis)] - 1.0;
  return std::isfinite(x) && std::isfinite(y);
}

bool Wcs::skyToPixel(SkyFrame frame, double lon, double lat, double z, double& x, double& y) const {
  const SkyFrame own = celestialFrame();
  if (own == SkyFrame::Image || frame == SkyFrame::Image) return false;
  if (frame != SkyFrame::Native && !convertBetween(frame, 0, own, celestialEquinox(), lon, lat))
    return false;
  return worldToPixel(lon, lat, z, x, y);
}

bool Wcs::pixelToSky(SkyFrame frame, double x, double y, double z, double& lon, double& lat) const {
  if (frame == SkyFrame::Image || !celestial(x, y, z, lon, lat)) return false;
  const SkyFrame own = celestialFrame();
  if (frame == SkyFrame::Native) return true;
  return convertBetween(own, celestialEquinox(), frame, 0, lon, lat);
}

bool Wcs::localSky(SkyFrame frame, double lon, double lat, double z, LocalSky& out) const {
  if (!skyToPixel(frame, lon, lat, z, out.x, out.y)) return false;
  // Offsets of about half a pixel: small enough to be local, large enough for the differences
  // to keep their precision.
  double lon1 = 0, lat1 = 0;
  if (!pixelToSky(frame, out.x + 1.0, out.y, z, lon1, lat1) &&
      !pixelToSky(frame, out.x - 1.0, out.y, z, lon1, lat1))
    return false;
  double step = 0.5 * skySeparation(lon, lat, lon1, lat1);
  if (!(step > 0) || !std::isfinite(step)) return false;
  step = std::min(step, 0.01);
  double d[4][2];  // pixel at east+, east−, north+, north−
  const double pa[4] = {90, 270, 0, 180};
  for (int i = 0; i < 4; ++i) {
    double l = 0, b = 0;
    offsetOnSky(lon, lat, pa[i], step, l, b);
    if (!skyToPixel(frame, l, b, z, d[i][0], d[i][1])) return false;
  }
  // West is minus east.
  const double dxW = -(d[0][0] - d[1][0]) / (2 * step), dyW = -(d[0][1] - d[1][1]) / (2 * step);
  const double dxN = (d[2][0] - d[3][0]) / (2 * step), dyN = (d[2][1] - d[3][1]) / (2 * step);
  out.jacobian = {dxW, dxN, dyW, dyN};
  const double det = dxW * dyN - dxN * dyW;
  if (!(std::fabs(det) > 0)) return false;
  out.scale = 1.0 / std::sqrt(std::fabs(det));
  out.northAngle = std::atan2(dyN, dxN) / kDeg;
  // East = −west; east ccw of north ⇔ north × east > 0.
  out.eastLeft = dxN * (-dyW) - dyN * (-dxW) > 0;
  return true;
}

}  // namespace stacklens::io
