// Wcs: wcslib's wcspih/wcsset/wcsp2s on the header of the chosen HDU.
#include "io/wcs.h"

#include "io/wcs_cards.h"

#include <wcslib/wcs.h>
#include <wcslib/wcserr.h>
#include <wcslib/wcshdr.h>

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
  out.unit = w.cunit[axis];
  const double scale = out.unit == "m/s" ? 1e-3 : 1.0;
  if (scale != 1.0) out.unit = "km/s";
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
  if (unit == "m/s") {
    std::snprintf(text, sizeof text, "%.3f", v / 1000.0);
    unit = "km/s";
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

}  // namespace stacklens::io
