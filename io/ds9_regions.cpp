// DS9 region files: a line-by-line reader that keeps going past what it cannot use. Placing
// the regions on an image is in ds9_region_placement.cpp, writing them in ds9_region_writer.cpp.
#include "io/ds9_regions.h"
#include "io/sexagesimal.h"
#include "io/text_fields.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string_view>
#include <tuple>

namespace stacklens::io {

namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;

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

enum class SizeKind { Pixels, Degrees };

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

// The most rings or sectors one annulus or panda may have: DS9 has no limit, but a file asking
// for millions is damaged, and each costs memory.
constexpr int kMaxParts = 1000;

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

const char* const kPointTypes[] = {"circle", "box", "diamond", "cross", "x", "arrow", "boxcircle"};

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

const char* const kShapes[] = {"circle",    "ellipse", "box",    "polygon", "point",      "line",
                               "text",      "vector",  "ruler",  "compass", "projection", "annulus",
                               "panda",     "epanda",  "bpanda", "segment", "composite",  "rotbox",
                               "rectangle", "pie",     "sector", "field"};

bool isShape(const std::string& w) {
  return std::find(std::begin(kShapes), std::end(kShapes), w) != std::end(kShapes);
}

class Parser {
 public:
  RegionFile result;

  void line(const std::string& raw, int number) {
    lineNumber_ = number;
    std::string s = trimmed(raw);
    if (s.empty()) return;
    if (s[0] == '#') {
      // DS9 writes the shapes funtools does not know (text, vector, ruler, compass, projection,
      // composite, segment) behind a `#`: read them; other comment lines are comments.
      std::string rest = trimmed(std::string_view(s).substr(1));
      size_t w = 0;
      while (w < rest.size() && std::isalpha(static_cast<unsigned char>(rest[w]))) ++w;
      const size_t paren = rest.find_first_not_of(" \t", w);
      if (!isShape(lowerCase(rest.substr(0, w))) || paren == std::string::npos ||
          rest[paren] != '(')
        return;
      s = rest;
    }
    // The body (shapes separated by `;`) and the properties after the first `#` outside braces.
    std::vector<std::string> segments;
    std::string current, properties;
    for (size_t i = 0; i < s.size();) {
      const char c = s[i];
      if (c == '{') {
        const size_t j = skipQuoted(s, i);
        current += s.substr(i, j - i);
        i = j;
      } else if (c == '#') {
        properties = s.substr(i + 1);
        break;
      } else if (c == ';') {
        segments.push_back(current);
        current.clear();
        ++i;
      } else {
        current += c;
        ++i;
      }
    }
    segments.push_back(current);
    // Properties belong to the last shape of the line.
    size_t last = segments.size();
    for (size_t i = segments.size(); i-- > 0;)
      if (!trimmed(segments[i]).empty()) {
        last = i;
        break;
      }
    for (size_t i = 0; i < segments.size(); ++i)
      segment(trimmed(segments[i]), i == last ? properties : std::string());
  }

 private:
  Region defaults_;
  SkyFrame frame_ = SkyFrame::Image;
  bool frameUsable_ = true;
  bool warnedPhysical_ = false;
  bool warnedAlternate_ = false;
  bool physical_ = false;  // the image frame is DS9's physical one
  double textAngle_ = 0;   // the shape's `textangle=`
  bool linear_ = false;    // the image's linear (not celestial) world coordinates
  int lineNumber_ = 0;

  void warn(const std::string& what) {
    result.warnings.push_back("line " + std::to_string(lineNumber_) + ": " + what);
  }

  void segment(std::string s, const std::string& properties) {
    // Funtools' region algebra (`||`, `&&`) and composite members' `||`: not shapes.
    while (s.size() >= 2 &&
           (s.compare(s.size() - 2, 2, "||") == 0 || s.compare(s.size() - 2, 2, "&&") == 0))
      s = trimmed(std::string_view(s).substr(0, s.size() - 2));
    if (s.empty()) return;
    size_t w = 0;
    while (w < s.size() && (std::isalnum(static_cast<unsigned char>(s[w])) || s[w] == '+' ||
                            s[w] == '-' || s[w] == '_'))
      ++w;
    const std::string word = lowerCase(s.substr(0, w));
    if (word == "global") {
      for (const auto& [key, value] : parseProperties(s.substr(w)))
        applyProperty(defaults_, key, value);
      return;
    }
    SkyFrame frame;
    bool physical = false;
    if (frameNamed(word, frame, physical) && trimmed(std::string_view(s).substr(w)).empty()) {
      // `wcsa; linear` is linear: the last system named counts.
      frame_ = frame;
      linear_ = false;
      frameUsable_ = true;
      if (word.size() == 4 && word.compare(0, 3, "wcs") == 0 && !warnedAlternate_) {
        warn("'" + word + "': alternate WCS are not read; the image's primary WCS is used");
        warnedAlternate_ = true;
      }
      physical_ = word == "physical";
      // Detector and amplifier pixels of mosaics (DTM/DTV, ATM/ATV) are not read.
      if (physical && !physical_ && !warnedPhysical_) {
        warn("'" + word +
             "' coordinates read as image coordinates (DTM/DTV and ATM/ATV are not "
             "applied)");
        warnedPhysical_ = true;
      }
      return;
    }
    if (word == "linear") {
      frame_ = SkyFrame::Image;
      frameUsable_ = true;
      physical_ = false;
      linear_ = true;
      return;
    }
    if (word == "tile") return;  // DS9's `# tile 2`: which frame of a mosaic, not a shape
    shape(s, properties);
  }

  void shape(std::string s, const std::string& properties) {
    Region r = defaults_;
    r.line = lineNumber_;
    r.frame = frame_;
    r.physical = physical_ && frame_ == SkyFrame::Image;
    r.linear = linear_ && frame_ == SkyFrame::Image;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
      r.exclude = s[0] == '-';
      s = trimmed(std::string_view(s).substr(1));
    }
    // The name, with DS9's `circle point`, `x point` forms.
    size_t w = 0;
    while (w < s.size() && std::isalpha(static_cast<unsigned char>(s[w]))) ++w;
    std::string name = lowerCase(s.substr(0, w));
    std::string rest = s.substr(w);
    if (isPointType(name)) {
      const std::string after = trimmed(rest);
      if (lowerCase(after.substr(0, 5)) == "point" &&
          (after.size() == 5 || !std::isalpha(static_cast<unsigned char>(after[5])))) {
        r.pointType = name;
        name = "point";
        rest = after.substr(5);
      }
    }
    if (!isShape(name)) {
      warn("'" + (name.empty() ? s : name) + "' is not a DS9 region shape; skipped");
      return;
    }
    // Arguments: inside parentheses (up to the matching one, braces grouping) or the rest of
    // the segment.
    rest = trimmed(rest);
    std::string args = rest, trailing;
    if (!rest.empty() && rest[0] == '(') {
      int depth = 0;
      size_t close = std::string::npos;
      for (size_t i = 0; i < rest.size(); ++i) {
        if (rest[i] == '{') {
          i = skipQuoted(rest, i) - 1;
        } else if (rest[i] == '(') {
          ++depth;
        } else if (rest[i] == ')' && --depth == 0) {
          close = i;
          break;
        }
      }
      if (close == std::string::npos) {
        warn(name + ": no closing parenthesis; skipped");
        return;
      }
      args = rest.substr(1, close - 1);
      trailing = trimmed(std::string_view(rest).substr(close + 1));
    }
    std::vector<std::string> a = splitArguments(args);
    // After the parentheses: a text (`text(x,y) {Hi}`), or the properties of a shape DS9 wrote
    // behind a `#` (`# text(x,y) text={Hi}`), which have no `#` of their own.
    std::string allProperties = properties;
    if (!trailing.empty() && (trailing[0] == '{' || trailing[0] == '"' || trailing[0] == '\''))
      for (const std::string& t : splitArguments(trailing)) a.push_back(t);
    else if (!trailing.empty())
      allProperties = trailing + " " + properties;
    // The shape's own property (`panda=…`, `compass=…`). DS9 writes a panda whose angles or radii
    // are not evenly spaced as one line per sector and ring: the first carries the whole panda
    // in `panda=(angles)(radii)`, the others `panda=ignore`.
    std::string own;
    textAngle_ = 0;
    for (const auto& [key, value] : parseProperties(allProperties)) {
      applyProperty(r, key, value);
      if (key == name) own = trimmed(value);
      if (key == "textangle" && !parseAngle(unquote(value), textAngle_)) textAngle_ = 0;
    }
    if (!frameUsable_) {
      warn(name + " in an unsupported coordinate system; skipped");
      return;
    }
    if (lowerCase(own) == "ignore") return;
    build(name, a, r, own);
  }

  bool point(const std::vector<std::string>& a, size_t i, Region& r) {
    double lon = 0, lat = 0;
    if (i + 1 >= a.size() || !parseCoordinate(a[i], r.frame, true, lon) ||
        !parseCoordinate(a[i + 1], r.frame, false, lat))
      return false;
    if (r.linear) lon += 1, lat += 1;  // world values, not 1-based pixels
    r.points.push_back({lon, lat});
    return true;
  }

  // Sizes a[i..i+n): all of one kind (degrees, image or physical pixels) for the region. Pixel
  // sizes are physical with a `p`, image with an `i`, and without a unit those of the frame.
  bool sizes(const std::vector<std::string>& a, size_t i, size_t n, Region& r) {
    if (i + n > a.size()) return false;
    std::optional<std::tuple<SizeKind, bool, bool>> kind;  // and whether physical, linear
    for (size_t k = i; k < i + n; ++k) {
      double v = 0;
      SizeKind sk;
      if (!parseSize(a[k], r.frame, v, sk)) return false;
      const char unit = static_cast<char>(std::tolower(static_cast<unsigned char>(a[k].back())));
      const bool physical = sk == SizeKind::Pixels && (unit == 'p' || (unit != 'i' && r.physical));
      const bool linear = sk == SizeKind::Pixels && r.linear && unit != 'p' && unit != 'i';
      if (kind && *kind != std::tuple{sk, physical, linear}) {
        warn("sizes mix units: degrees, image, physical pixels or linear units");
        return false;
      }
      kind = std::tuple{sk, physical, linear};
      r.sizes.push_back(v);
    }
    r.sizesInDegrees = kind && std::get<0>(*kind) == SizeKind::Degrees;
    r.sizesInPhysical = kind && std::get<1>(*kind);
    r.sizesInLinear = kind && std::get<2>(*kind);
    return true;
  }

  void build(const std::string& name, std::vector<std::string> a, Region r,
             const std::string& own) {
    auto bad = [&] { warn(name + ": cannot read its arguments; skipped"); };
    // `n=4` in the annulus forms.
    int count = 0;
    for (auto it = a.begin(); it != a.end();) {
      if (lowerCase(it->substr(0, 2)) == "n=") {
        if (!parseCount(it->substr(2), count)) {
          warn(name + ": n must be a whole number from 1 to " + std::to_string(kMaxParts) +
               "; skipped");
          return;
        }
        it = a.erase(it);
      } else {
        ++it;
      }
    }
    const size_t n = a.size();
    if (name == "circle") {
      r.shape = RegionShape::Circle;
      if (n != 3 || !point(a, 0, r) || !sizes(a, 2, 1, r)) return bad();
      add(r);
    } else if (name == "annulus") {
      // annulus x y r1 r2 r3… or annulus x y inner outer n=N.
      r.shape = RegionShape::Annulus;
      if (n < 3 || !point(a, 0, r) || !sizes(a, 2, n - 2, r)) return bad();
      if (count > 0 && !interpolate(r, 1, count)) return;
      if (!ascending(r, 1)) return;
      add(r);
    } else if (name == "ellipse" || name == "box" || name == "rotbox") {
      const bool ellipse = name == "ellipse";
      if (n < 4 || !point(a, 0, r)) return bad();
      // x y r1 r2 [angle], or the annulus forms x y r11 r12 r21 r22 … [angle] and
      // x y r11 r12 r21 r22 n=N [angle].
      const size_t rest = n - 2;
      const bool hasAngle = rest % 2 == 1;
      const size_t pairs = rest / 2;
      if (pairs < 1 || !sizes(a, 2, 2 * pairs, r)) return bad();
      if (hasAngle && !parseAngle(a[n - 1], r.angle)) return bad();
      if (pairs == 1 && count == 0) {
        r.shape = ellipse ? RegionShape::Ellipse : RegionShape::Box;
      } else {
        r.shape = ellipse ? RegionShape::EllipseAnnulus : RegionShape::BoxAnnulus;
        if (count > 0 && !interpolate(r, 2, count)) return;
        if (!ascending(r, 2)) return;
      }
      add(r);
    } else if (name == "panda" || name == "epanda" || name == "bpanda") {
      panda(name, a, r, own);
    } else if (name == "rectangle") {
      // CIAO's rectangle(x1, y1, x2, y2): corners.
      Region c = r;
      if (n != 4 || !point(a, 0, c) || !point(a, 2, c)) return bad();
      r.shape = RegionShape::Box;
      if (r.frame != SkyFrame::Image) {
        warn("rectangle in sky coordinates is not supported; skipped");
        return;
      }
      r.points = {{(c.points[0][0] + c.points[1][0]) / 2, (c.points[0][1] + c.points[1][1]) / 2}};
      r.sizes = {std::fabs(c.points[1][0] - c.points[0][0]),
                 std::fabs(c.points[1][1] - c.points[0][1])};
      r.sizesInDegrees = false;
      r.sizesInPhysical = r.physical;
      add(r);
    } else if (name == "polygon") {
      r.shape = RegionShape::Polygon;
      if (n < 6 || n % 2 != 0) return bad();
      for (size_t i = 0; i < n; i += 2)
        if (!point(a, i, r)) return bad();
      add(r);
    } else if (name == "point") {
      r.shape = RegionShape::Point;
      if (n < 2 || n % 2 != 0) return bad();
      // DS9 accepts several points in one point(…): one region each.
      for (size_t i = 0; i < n; i += 2) {
        Region p = r;
        if (!point(a, i, p)) return bad();
        add(p);
      }
    } else if (name == "line" || name == "ruler" || name == "projection") {
      r.shape = RegionShape::Line;
      if (n < 4 || !point(a, 0, r) || !point(a, 2, r)) return bad();
      if (name != "line") warn(name + " read as a line");
      add(r);
    } else if (name == "segment") {
      // A polyline through all its points, drawn open.
      r.shape = RegionShape::Line;
      if (n < 4 || n % 2 != 0) return bad();
      for (size_t i = 0; i < n; i += 2)
        if (!point(a, i, r)) return bad();
      add(r);
    } else if (name == "text") {
      r.shape = RegionShape::Text;
      if (n < 2 || !point(a, 0, r)) return bad();
      if (n >= 3) r.text = unquote(a[2]);
      r.angle = textAngle_;  // `textangle=`: the baseline's angle in the region's system
      add(r);
    } else if (name == "vector") {
      vector(a, r);
    } else if (name == "compass") {
      compass(a, r, own);
    } else if (name == "composite") {
      warn("composite region: its members are read as separate regions");
    } else {
      warn(name + " regions are not supported; skipped");
    }
  }

  // Sizes of n + 1 boundaries from the first and last of r.sizes (taken `stride` at a time):
  // DS9's inner outer n=N form, every axis interpolated.
  bool interpolate(Region& r, size_t stride, int n) {
    if (r.sizes.size() != 2 * stride) {
      warn("n= needs exactly an inner and an outer size");
      return false;
    }
    const std::vector<double> ends = r.sizes;
    r.sizes.clear();
    for (int k = 0; k <= n; ++k)
      for (size_t axis = 0; axis < stride; ++axis)
        r.sizes.push_back(ends[axis] + (ends[stride + axis] - ends[axis]) * k / n);
    return true;
  }

  // Sorts the boundaries (groups of `stride` sizes) by their first axis, as DS9 does, and
  // checks they are sizes: two or more, none negative.
  bool ascending(Region& r, size_t stride) {
    const size_t groups = r.sizes.size() / stride;
    if (groups < 2 || r.sizes.size() % stride != 0) {
      warn("an annulus needs two or more radii; skipped");
      return false;
    }
    if (groups > static_cast<size_t>(kMaxParts) + 1) {
      warn("more than " + std::to_string(kMaxParts) + " rings; skipped");
      return false;
    }
    for (double v : r.sizes)
      if (!(v >= 0)) {
        warn("a negative radius or size; skipped");
        return false;
      }
    std::vector<std::vector<double>> g(groups);
    for (size_t k = 0; k < groups; ++k)
      g[k].assign(r.sizes.begin() + k * stride, r.sizes.begin() + (k + 1) * stride);
    std::stable_sort(g.begin(), g.end(), [](const auto& x, const auto& y) { return x[0] < y[0]; });
    r.sizes.clear();
    for (const auto& s : g) r.sizes.insert(r.sizes.end(), s.begin(), s.end());
    return true;
  }

  // panda x y a1 a2 nangle inner outer nradius; epanda and bpanda x y a1 a2 nangle innerMajor
  // innerMinor outerMajor outerMinor nradius [angle]; or the lists of `panda=(…)(…)`.
  void panda(const std::string& name, const std::vector<std::string>& a, Region r,
             const std::string& lists) {
    auto bad = [&] { warn(name + ": cannot read its arguments; skipped"); };
    const bool circular = name == "panda";
    const size_t stride = circular ? 1 : 2;
    r.shape = circular ? RegionShape::Panda
                       : (name == "epanda" ? RegionShape::Epanda : RegionShape::Bpanda);
    const size_t n = a.size();
    const size_t want = circular ? 8 : 10;
    if (!(n == want || (!circular && n == want + 1)) || !point(a, 0, r)) return bad();
    double a1 = 0, a2 = 0;
    int sectors = 0, rings = 0;
    if (!parseAngle(a[2], a1) || !parseAngle(a[3], a2) || !sizes(a, 5, 2 * stride, r)) return bad();
    if (!parseCount(a[4], sectors) || !parseCount(a[5 + 2 * stride], rings)) {
      warn(name + ": the numbers of angles and radii must be whole numbers from 1 to " +
           std::to_string(kMaxParts) + "; skipped");
      return;
    }
    if (!circular && n == want + 1 && !parseAngle(a[n - 1], r.angle)) return bad();
    if (!lists.empty()) {
      if (!pandaFromLists(name, lists, stride, r)) return;
    } else {
      // Within a turn of zero, where adding 360 still changes the value.
      const double turns = a1 - std::fmod(a1, 360.0);
      a1 -= turns, a2 -= turns;
      // DS9: a stop angle at or before the start one goes once more round.
      if (a2 <= a1) a2 += 360;
      if (a2 - a1 > 360) {
        warn(name + ": its angles span more than 360°; skipped");
        return;
      }
      for (int k = 0; k <= sectors; ++k) r.angles.push_back(a1 + (a2 - a1) * k / sectors);
      if (!interpolate(r, stride, rings)) return bad();
    }
    if (!ascending(r, stride)) return;
    add(r);
  }

  // `(a1 a2 a3 …)(r1 r2 …)` for panda, `(a1 a2 …)(r11 r12 r21 r22 …)(angle)` for epanda and
  // bpanda: the angles and sizes of the whole panda.
  bool pandaFromLists(const std::string& name, const std::string& lists, size_t stride, Region& r) {
    std::vector<std::vector<std::string>> groups;
    for (size_t i = 0; i < lists.size(); ++i) {
      if (lists[i] != '(') continue;
      const size_t close = lists.find(')', i);
      if (close == std::string::npos) break;
      groups.push_back(splitArguments(lists.substr(i + 1, close - i - 1)));
      i = close;
    }
    auto bad = [&] {
      warn(name + "=" + lists + ": cannot read its angles and radii; skipped");
      return false;
    };
    if (groups.size() < 2 || groups[0].size() < 2 || groups[0].size() > kMaxParts + 1u)
      return bad();
    r.angles.clear();
    for (const std::string& t : groups[0]) {
      double v = 0;
      if (!parseAngle(t, v)) return bad();
      // DS9 keeps the angles in order round the circle from the first (reduced to within a
      // turn of zero, where adding 360 still changes them).
      v = std::fmod(v, 360.0);
      if (!r.angles.empty())
        while (v <= r.angles.back()) v += 360;
      r.angles.push_back(v);
    }
    if (r.angles.back() - r.angles.front() > 360 + 1e-9) return bad();
    r.sizes.clear();
    if (!sizes(groups[1], 0, groups[1].size(), r) || r.sizes.size() % stride != 0) return bad();
    if (stride == 2 && groups.size() >= 3 && groups[2].size() == 1 &&
        !parseAngle(groups[2][0], r.angle))
      return bad();
    return true;
  }

  // compass(x, y, length) # compass=<system> {N} {E} 1 1: a line towards north and one towards
  // east of the compass's system, each with its label at the end. North and east of image or
  // physical coordinates are +y and +x, as DS9 takes them; a sky compass needs sky coordinates
  // here (its directions in pixels need the image's WCS). DS9 keeps its length in screen
  // pixels whatever the zoom; here it is the length given, on the image.
  void compass(const std::vector<std::string>& a, Region r, const std::string& own) {
    std::istringstream in(own);
    std::string system;
    in >> system;
    std::vector<std::string> labels;
    for (const std::string& t : splitArguments(own.substr(std::min(own.size(), system.size()))))
      if (labels.size() < 2 && (t.front() == '{' || t.front() == '"' || t.front() == '\''))
        labels.push_back(unquote(t));
    labels.resize(2);
    if (labels[0].empty()) labels[0] = "N";
    if (labels[1].empty()) labels[1] = "E";
    SkyFrame compassFrame = SkyFrame::Image;
    bool physical = false;
    if (system.empty())
      compassFrame = r.frame;  // no compass= property: the region's own system
    else if (!frameNamed(lowerCase(system), compassFrame, physical))
      compassFrame = SkyFrame::Image;
    double length = 0;
    SizeKind kind;
    if (a.size() != 3 || !point(a, 0, r) || !parseSize(a[2], r.frame, length, kind)) {
      warn("compass: cannot read its arguments; skipped");
      return;
    }
    const double x = r.points[0][0], y = r.points[0][1];
    std::array<double, 2> north{}, east{};
    if (compassFrame == SkyFrame::Image) {
      if (r.frame != SkyFrame::Image || kind != SizeKind::Pixels) {
        warn("compass of image axes in sky coordinates: its directions need the image; skipped");
        return;
      }
      north = {x, y + length};
      east = {x + length, y};
    } else {
      if (r.frame == SkyFrame::Image || kind != SizeKind::Degrees) {
        warn(
            "compass of the sky in image coordinates: its directions need the image's WCS; "
            "skipped");
        return;
      }
      // North and east of the compass's frame, from the centre in that frame.
      const SkyFrame from = r.frame == SkyFrame::Native ? compassFrame : r.frame;
      const SkyFrame to = compassFrame == SkyFrame::Native ? from : compassFrame;
      double lon = x, lat = y;
      if (from != to && !convertSkyFrame(from, to, lon, lat)) {
        warn("compass: its frame cannot be reached from the region's; skipped");
        return;
      }
      for (auto [pa, end] : {std::pair{0.0, &north}, std::pair{90.0, &east}}) {
        double l = 0, b = 0;
        offsetOnSky(lon, lat, pa, length, l, b);
        if (from != to) convertSkyFrame(to, from, l, b);
        *end = {l, b};
      }
    }
    for (int k = 0; k < 2; ++k) {
      Region line = r, label = r;
      line.shape = RegionShape::Line;
      line.points = {r.points[0], k == 0 ? north : east};
      line.text.clear();
      label.shape = RegionShape::Text;
      label.points = {k == 0 ? north : east};
      label.text = labels[k];
      add(line);
      add(label);
    }
  }

  // vector(x, y, length, angle): a line from (x, y).
  void vector(const std::vector<std::string>& a, Region r) {
    r.shape = RegionShape::Line;
    double length = 0, angle = 0;
    SizeKind kind;
    if (a.size() < 4 || !point(a, 0, r) || !parseSize(a[2], r.frame, length, kind) ||
        !parseAngle(a[3], angle)) {
      warn("vector: cannot read its arguments; skipped");
      return;
    }
    const double x = r.points[0][0], y = r.points[0][1];
    if (r.frame == SkyFrame::Image && kind == SizeKind::Pixels) {
      r.points.push_back(
          {x + length * std::cos(angle * kDeg), y + length * std::sin(angle * kDeg)});
    } else if (r.frame != SkyFrame::Image && kind == SizeKind::Degrees) {
      // Angle 0 points west, 90 north (see Region::angle): position angle 270 + angle.
      double lon = 0, lat = 0;
      offsetOnSky(x, y, 270.0 + angle, length, lon, lat);
      r.points.push_back({lon, lat});
    } else {
      warn("vector whose length unit does not match its coordinates; skipped");
      return;
    }
    warn("vector read as a line");
    add(r);
  }

  void add(Region r) {
    if (r.frame != SkyFrame::Image)
      for (auto& p : r.points) {
        if (p[1] < -90.0 || p[1] > 90.0) {
          warn("latitude outside ±90°; skipped");
          return;
        }
        p[0] = std::fmod(p[0], 360.0);
        if (p[0] < 0) p[0] += 360.0;
      }
    result.regions.push_back(std::move(r));
  }
};

}  // namespace

RegionFile parseDs9Regions(const std::string& text) {
  if (text.find('\0') != std::string::npos)
    throw IoError("", "not a DS9 region file: it holds binary data");
  Parser parser;
  std::string_view all = text;
  if (all.substr(0, 3) == "\xef\xbb\xbf") all.remove_prefix(3);  // a UTF-8 byte order mark
  int number = 0;
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    ++number;
    parser.line(std::string(all.substr(start, end - start)), number);
    start = end + 1;
  }
  return std::move(parser.result);
}

RegionFile readDs9Regions(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError(path, "read error");
  try {
    return parseDs9Regions(text);
  } catch (const IoError& e) {
    throw IoError(path, e.reason());
  }
}

}  // namespace stacklens::io
