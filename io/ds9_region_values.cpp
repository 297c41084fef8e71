// The values of DS9 region files: coordinates, sizes and angles with their units, counts, the
// arguments of a shape and the key=value properties, the coordinate systems' names.
#include "io/ds9_region_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <sstream>
#include <string_view>

#include "io/sexagesimal.h"
#include "io/text_fields.h"

namespace stacklens::io::ds9 {

namespace {

// The leading number of s; rest is what follows it.
bool leadingNumber(std::string_view s, double& v, std::string_view& rest) {
  const bool plus = !s.empty() && s.front() == '+';
  if (plus) s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) return false;
  rest = s.substr(static_cast<size_t>(end - s.data()));
  return true;
}

bool isEquatorial(SkyFrame f) {
  return f == SkyFrame::Icrs || f == SkyFrame::Fk5 || f == SkyFrame::Fk4 || f == SkyFrame::Native;
}

}  // namespace

// A position's coordinate. Image: 1-based → 0-based. Sky: degrees, or sexagesimal (hours for
// an equatorial longitude, degrees otherwise), with the d / r / h unit forms.
bool parseCoordinate(const std::string& token, SkyFrame frame, bool longitude, double& out) {
  if (frame == SkyFrame::Image) {
    std::string_view t = token;
    if (!t.empty() && (t.back() == 'i' || t.back() == 'p')) t.remove_suffix(1);
    double v = 0;
    if (!parseNumber(t, v)) return false;
    out = v - 1.0;
    return true;
  }
  // Colons leave the unit to the frame; the h / d forms say it themselves.
  if (token.find(':') != std::string::npos) {
    const auto angle = parseSexagesimal(token);
    if (!angle) return false;
    out = longitude && isEquatorial(frame) ? angle->value * 15.0 : angle->value;
    return true;
  }
  if (const auto angle = parseSexagesimal(token)) {
    out = angle->hours ? angle->value * 15.0 : angle->value;
    return true;
  }
  double v = 0;
  std::string_view rest;
  if (!leadingNumber(token, v, rest)) return false;
  if (rest.empty() || rest == "d" || rest == "D") {
    out = v;
  } else if (rest == "r" || rest == "R") {
    out = v / kDeg;
  } else {
    return false;
  }
  return true;
}

// A length: " arcsec, ' arcmin, d degrees, r radians, i / p pixels; no unit: pixels in image
// frames, degrees in sky frames.
bool parseSize(const std::string& token, SkyFrame frame, double& value, SizeKind& kind) {
  double v = 0;
  std::string_view rest;
  if (!leadingNumber(token, v, rest)) return false;
  if (rest.empty()) {
    value = v;
    kind = frame == SkyFrame::Image ? SizeKind::Pixels : SizeKind::Degrees;
  } else if (rest == "\"") {
    value = v / 3600.0, kind = SizeKind::Degrees;
  } else if (rest == "'") {
    value = v / 60.0, kind = SizeKind::Degrees;
  } else if (rest == "d" || rest == "D") {
    value = v, kind = SizeKind::Degrees;
  } else if (rest == "r" || rest == "R") {
    value = v / kDeg, kind = SizeKind::Degrees;
  } else if (rest == "i" || rest == "p" || rest == "I" || rest == "P") {
    value = v, kind = SizeKind::Pixels;
  } else {
    return false;
  }
  return std::isfinite(value);
}

bool parseAngle(const std::string& token, double& out) {
  double v = 0;
  std::string_view rest;
  if (!leadingNumber(token, v, rest)) return false;
  if (rest.empty() || rest == "d" || rest == "D")
    out = v;
  else if (rest == "r" || rest == "R")
    out = v / kDeg;
  else
    return false;
  return std::isfinite(out);
}

// A count of rings or sectors: a whole number from 1 to kMaxParts.
bool parseCount(const std::string& token, int& out) {
  double v = 0;
  if (!parseNumber(token, v) || v < 1 || v > kMaxParts || v != std::floor(v)) return false;
  out = static_cast<int>(v);
  return true;
}

// Index just past the closing delimiter of a quoted or braced run starting at s[i].
size_t skipQuoted(const std::string& s, size_t i) {
  const char open = s[i];
  const char close = open == '{' ? '}' : open;
  size_t j = s.find(close, i + 1);
  return j == std::string::npos ? s.size() : j + 1;
}

// Splits the arguments of a shape: commas and spaces separate, braces group (text).
std::vector<std::string> splitArguments(const std::string& s) {
  std::vector<std::string> out;
  std::string current;
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '{') {
      const size_t j = skipQuoted(s, i);
      current += s.substr(i, j - i);
      i = j;
      continue;
    }
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
    ++i;
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

std::string unquote(const std::string& v) {
  if (v.size() >= 2 &&
      ((v.front() == '{' && v.back() == '}') || (v.front() == '"' && v.back() == '"') ||
       (v.front() == '\'' && v.back() == '\'')))
    return v.substr(1, v.size() - 2);
  return v;
}

// key=value pairs after a `#` or `global`: values may be {braced}, "quoted" or 'quoted'; bare
// words after a value belong to it (point=x 11, dashlist=8 3, line=0 1); `source` and
// `background` stand alone.
std::vector<std::pair<std::string, std::string>> parseProperties(const std::string& s) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])) && s[j] != '=') ++j;
    std::string key = lowerCase(s.substr(i, j - i));
    size_t k = j;
    while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
    if (k < s.size() && s[k] == '=') {
      ++k;
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      size_t end = k;
      if (k < s.size() && (s[k] == '{' || s[k] == '"' || s[k] == '\''))
        end = skipQuoted(s, k);
      else
        while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
      out.emplace_back(key, s.substr(k, end - k));
      i = end;
    } else if (key == "source" || key == "background" || out.empty()) {
      out.emplace_back(key, "");
      i = j;
    } else {
      std::string& v = out.back().second;
      v += (v.empty() ? "" : " ") + s.substr(i, j - i);
      i = j;
    }
  }
  return out;
}

namespace {
const char* const kPointTypes[] = {"circle", "box", "diamond", "cross", "x", "arrow", "boxcircle"};
}  // namespace

bool isPointType(const std::string& w) {
  return std::find(std::begin(kPointTypes), std::end(kPointTypes), w) != std::end(kPointTypes);
}

void applyProperty(Region& r, const std::string& key, const std::string& value) {
  const std::string v = unquote(value);
  if (key == "color") {
    r.color = v;
  } else if (key == "width") {
    double w = 1;
    if (parseNumber(v, w) && w >= 0 && w < 1000) r.width = static_cast<int>(w);
  } else if (key == "dash") {
    r.dash = v == "1";
  } else if (key == "fill") {
    r.fill = v == "1";
  } else if (key == "font") {
    r.font = v;
  } else if (key == "text") {
    r.text = v;
  } else if (key == "tag") {
    if (r.tag.empty()) r.tag = v;
  } else if (key == "include") {
    r.exclude = v == "0";
  } else if (key == "source") {
    r.source = v != "0";
  } else if (key == "background") {
    r.source = false;
  } else if (key == "point") {
    std::istringstream in(v);
    std::string type;
    double size = 0;
    if (in >> type) r.pointType = lowerCase(type);
    if (in >> size && size > 0 && size < 1000) r.pointSize = static_cast<int>(size);
  }
}

bool frameNamed(const std::string& word, SkyFrame& frame, bool& physical) {
  physical = false;
  if (word == "image") return frame = SkyFrame::Image, true;
  if (word == "physical" || word == "detector" || word == "amplifier") {
    physical = true;
    return frame = SkyFrame::Image, true;
  }
  if (word == "fk5" || word == "j2000") return frame = SkyFrame::Fk5, true;
  if (word == "fk4" || word == "b1950") return frame = SkyFrame::Fk4, true;
  if (word == "icrs") return frame = SkyFrame::Icrs, true;
  if (word == "galactic") return frame = SkyFrame::Galactic, true;
  if (word == "ecliptic") return frame = SkyFrame::Ecliptic, true;
  if (word == "wcs" ||
      (word.size() == 4 && word.compare(0, 3, "wcs") == 0 && word[3] >= 'a' && word[3] <= 'z'))
    return frame = SkyFrame::Native, true;
  return false;
}

namespace {
const char* const kShapes[] = {"circle",    "ellipse", "box",    "polygon", "point",      "line",
                               "text",      "vector",  "ruler",  "compass", "projection", "annulus",
                               "panda",     "epanda",  "bpanda", "segment", "composite",  "rotbox",
                               "rectangle", "pie",     "sector", "field"};
}  // namespace

bool isShape(const std::string& w) {
  return std::find(std::begin(kShapes), std::end(kShapes), w) != std::end(kShapes);
}

}  // namespace stacklens::io::ds9
