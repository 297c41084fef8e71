// DS9 region files: a line-by-line reader that keeps going past what it cannot use, the
// conversion of sky regions to pixels, and the writer of image-frame region text.
#include "io/ds9_regions.h"
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

std::string formatNumber(double v, int precision = 12) {
  char text[64];
  const auto [end, ec] =
      std::to_chars(text, text + sizeof text, v, std::chars_format::general, precision);
  return ec == std::errc() ? std::string(text, end) : std::string("nan");
}

// "12:34:56.7", "-00:30:00", "12h34m56.7s", "-12d34m56.7s", "12d34'56.7\"" → value in the unit
// of the first field (hours or degrees); false when s is not sexagesimal.
bool parseSexagesimal(std::string_view s, double& value, bool& hours) {
  std::string t = trimmed(s);
  if (t.empty()) return false;
  bool negative = false;
  if (t[0] == '-' || t[0] == '+') {
    negative = t[0] == '-';
    t.erase(0, 1);
  }
  hours = false;
  std::vector<std::string> fields;
  if (t.find(':') != std::string::npos) {
    std::string field;
    for (char c : t) {
      if (c == ':') {
        fields.push_back(field);
        field.clear();
      } else {
        field += c;
      }
    }
    fields.push_back(field);
  } else {
    const size_t h = t.find_first_of("hH");
    const size_t d = t.find_first_of("dD");
    const size_t first = h != std::string::npos ? h : d;
    if (first == std::string::npos) return false;
    hours = h != std::string::npos;
    fields.push_back(t.substr(0, first));
    std::string rest = t.substr(first + 1);
    const size_t m = rest.find_first_of("m'");
    if (m == std::string::npos) {
      if (!rest.empty()) return false;
      if (!hours) return false;  // "12.5d" is plain degrees, read elsewhere
    } else {
      fields.push_back(rest.substr(0, m));
      rest = rest.substr(m + 1);
      if (!rest.empty() && (rest.back() == 's' || rest.back() == '"')) rest.pop_back();
      if (!rest.empty()) fields.push_back(rest);
    }
  }
  if (fields.empty() || fields.size() > 3) return false;
  double total = 0, scale = 1;
  for (const std::string& f : fields) {
    double v = 0;
    if (!parseNumber(f, v) || v < 0) return false;
    total += v / scale;
    scale *= 60;
  }
  value = negative ? -total : total;
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
  double v = 0;
  bool hours = false;
  if (token.find(':') != std::string::npos) {
    if (!parseSexagesimal(token, v, hours)) return false;
    out = longitude && isEquatorial(frame) ? v * 15.0 : v;
    return true;
  }
  if (parseSexagesimal(token, v, hours)) {
    out = hours ? v * 15.0 : v;
    return true;
  }
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
      frame_ = frame;
      frameUsable_ = true;
      if (physical && !warnedPhysical_) {
        warn("'" + word +
             "' coordinates read as image coordinates (LTM/LTV and DETM/DETV are not applied)");
        warnedPhysical_ = true;
      }
      return;
    }
    if (word == "linear") {
      frame_ = SkyFrame::Image;
      frameUsable_ = false;
      warn("'linear' coordinates are not supported; the shapes in them are skipped");
      return;
    }
    if (word == "tile") return;  // DS9's `# tile 2`: which frame of a mosaic, not a shape
    shape(s, properties);
  }

  void shape(std::string s, const std::string& properties) {
    Region r = defaults_;
    r.line = lineNumber_;
    r.frame = frame_;
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
    for (const auto& [key, value] : parseProperties(allProperties)) applyProperty(r, key, value);
    if (!frameUsable_) {
      warn(name + " in an unsupported coordinate system; skipped");
      return;
    }
    build(name, a, r);
  }

  bool point(const std::vector<std::string>& a, size_t i, Region& r) {
    double lon = 0, lat = 0;
    if (i + 1 >= a.size() || !parseCoordinate(a[i], r.frame, true, lon) ||
        !parseCoordinate(a[i + 1], r.frame, false, lat))
      return false;
    r.points.push_back({lon, lat});
    return true;
  }

  // Sizes a[i..i+n): all of one kind (pixels or degrees) for the region.
  bool sizes(const std::vector<std::string>& a, size_t i, size_t n, Region& r) {
    if (i + n > a.size()) return false;
    std::optional<SizeKind> kind;
    for (size_t k = i; k < i + n; ++k) {
      double v = 0;
      SizeKind sk;
      if (!parseSize(a[k], r.frame, v, sk)) return false;
      if (kind && *kind != sk) {
        warn("sizes mix pixel and angular units");
        return false;
      }
      kind = sk;
      r.sizes.push_back(v);
    }
    r.sizesInDegrees = kind.value_or(SizeKind::Pixels) == SizeKind::Degrees;
    return true;
  }

  void build(const std::string& name, std::vector<std::string> a, Region r) {
    auto bad = [&] { warn(name + ": cannot read its arguments; skipped"); };
    // `n=4` in the annulus forms.
    int count = 0;
    for (auto it = a.begin(); it != a.end();) {
      if (lowerCase(it->substr(0, 2)) == "n=") {
        double n = 0;
        if (parseNumber(it->substr(2), n) && n >= 1 && n <= 1000) count = static_cast<int>(n);
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
      // Drawn as its circles: the shapes the viewer has.
      if (n < 4 || !point(a, 0, r) || !sizes(a, 2, n - 2, r)) return bad();
      std::vector<double> radii = r.sizes;
      if (count > 0 && radii.size() == 2) {
        const double r0 = radii[0], r1 = radii[1];
        radii.clear();
        for (int k = 0; k <= count; ++k) radii.push_back(r0 + (r1 - r0) * k / count);
      }
      warn("annulus read as " + std::to_string(radii.size()) + " circles");
      for (double radius : radii) {
        Region c = r;
        c.shape = RegionShape::Circle;
        c.sizes = {radius};
        add(c);
      }
    } else if (name == "ellipse" || name == "box" || name == "rotbox") {
      r.shape = name == "ellipse" ? RegionShape::Ellipse : RegionShape::Box;
      if (n < 4 || !point(a, 0, r)) return bad();
      // x y r1 r2 [angle], or the annulus forms x y r11 r12 r21 r22 … [angle].
      const size_t rest = n - 2;
      const bool hasAngle = rest % 2 == 1;
      const size_t pairs = rest / 2;
      if (pairs < 1 || !sizes(a, 2, 2, r)) return bad();
      if (hasAngle && !parseAngle(a[n - 1], r.angle)) return bad();
      if (pairs > 1 || count > 0)
        warn(name + " annulus: only the first " + (name == "ellipse" ? "radii" : "size") + " kept");
      add(r);
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
    } else if (name == "text") {
      r.shape = RegionShape::Text;
      if (n < 2 || !point(a, 0, r)) return bad();
      if (n >= 3) r.text = unquote(a[2]);
      add(r);
    } else if (name == "vector") {
      vector(a, r);
    } else if (name == "composite") {
      warn("composite region: its members are read as separate regions");
    } else {
      warn(name + " regions are not supported; skipped");
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

namespace {

PixelRegion pixelRegionOf(const Region& r) {
  PixelRegion p;
  p.shape = r.shape;
  p.points = r.points;
  p.sizes = r.sizes;
  p.angle = r.angle;
  p.text = r.text;
  p.color = r.color;
  p.tag = r.tag;
  p.font = r.font;
  p.width = r.width;
  p.dash = r.dash;
  p.exclude = r.exclude;
  p.source = r.source;
  p.pointType = r.pointType;
  p.pointSize = r.pointSize;
  p.line = r.line;
  return p;
}

bool hasSizes(RegionShape s) {
  return s == RegionShape::Circle || s == RegionShape::Ellipse || s == RegionShape::Box;
}

}  // namespace

std::vector<PixelRegion> regionsInPixels(const std::vector<Region>& regions, const Wcs* wcs,
                                         double z, std::vector<std::string>* warnings) {
  std::vector<PixelRegion> out;
  const bool celestial = wcs && wcs->hasCelestial();
  auto warn = [&](const Region& r, const std::string& what) {
    if (warnings) warnings->push_back("line " + std::to_string(r.line) + ": " + what);
  };
  for (const Region& r : regions) {
    PixelRegion p = pixelRegionOf(r);
    const bool sky = r.frame != SkyFrame::Image;
    if ((sky || (r.sizesInDegrees && hasSizes(r.shape))) && !celestial) {
      warn(r, "the image has no celestial WCS for this region; skipped");
      continue;
    }
    if (sky) {
      bool ok = true;
      for (auto& pt : p.points) ok = ok && wcs->skyToPixel(r.frame, pt[0], pt[1], z, pt[0], pt[1]);
      if (!ok) {
        warn(r,
             "a position has no pixel on this image (other frame or off the projection); "
             "skipped");
        continue;
      }
    }
    if (hasSizes(r.shape) && !r.points.empty()) {
      Wcs::LocalSky local;
      bool haveLocal = false;
      if (sky) {
        haveLocal = wcs->localSky(r.frame, r.points[0][0], r.points[0][1], z, local);
      } else if (r.sizesInDegrees) {
        double lon = 0, lat = 0;
        haveLocal =
            wcs->pixelToSky(SkyFrame::Native, r.points[0][0], r.points[0][1], z, lon, lat) &&
            wcs->localSky(SkyFrame::Native, lon, lat, z, local);
      }
      if ((sky || r.sizesInDegrees) && !haveLocal) {
        warn(r, "no local sky scale at this position; skipped");
        continue;
      }
      if (sky) {
        // The shape's first axis on the sky: angle from west towards north; its image through
        // the local Jacobian gives the pixel angle and, with the perpendicular axis, the sizes.
        const auto& j = local.jacobian;
        const double t = r.angle * kDeg;
        const double ux = j[0] * std::cos(t) + j[1] * std::sin(t);
        const double uy = j[2] * std::cos(t) + j[3] * std::sin(t);
        const double vx = -j[0] * std::sin(t) + j[1] * std::cos(t);
        const double vy = -j[2] * std::sin(t) + j[3] * std::cos(t);
        p.angle = std::atan2(uy, ux) / kDeg;
        if (r.sizesInDegrees) {
          if (r.shape == RegionShape::Circle) {
            p.sizes[0] = r.sizes[0] / local.scale;
          } else if (p.sizes.size() >= 2) {
            p.sizes[0] = r.sizes[0] * std::hypot(ux, uy);
            p.sizes[1] = r.sizes[1] * std::hypot(vx, vy);
          }
        }
      } else if (r.sizesInDegrees) {
        for (double& s : p.sizes) s /= local.scale;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

std::string textValue(const std::string& t) {
  if (t.find('}') == std::string::npos) return "{" + t + "}";
  if (t.find('"') == std::string::npos) return "\"" + t + "\"";
  return "'" + t + "'";
}

}  // namespace

std::string ds9RegionText(const std::vector<PixelRegion>& regions) {
  const PixelRegion defaults;
  std::string out =
      "# Region file format: DS9 version 4.1\n"
      "global color=green dashlist=8 3 width=1 font=\"helvetica 10 normal roman\" select=1 "
      "highlite=1 dash=0 fixed=0 edit=1 move=1 delete=1 include=1 source=1\n"
      "image\n";
  auto xy = [](const std::array<double, 2>& p) {
    return formatNumber(p[0] + 1.0) + "," + formatNumber(p[1] + 1.0);
  };
  for (const PixelRegion& r : regions) {
    std::string body;
    switch (r.shape) {
      case RegionShape::Circle:
        if (r.points.empty() || r.sizes.empty()) continue;
        body = "circle(" + xy(r.points[0]) + "," + formatNumber(r.sizes[0]) + ")";
        break;
      case RegionShape::Ellipse:
      case RegionShape::Box:
        if (r.points.empty() || r.sizes.size() < 2) continue;
        body = std::string(r.shape == RegionShape::Ellipse ? "ellipse(" : "box(") +
               xy(r.points[0]) + "," + formatNumber(r.sizes[0]) + "," + formatNumber(r.sizes[1]) +
               "," + formatNumber(r.angle) + ")";
        break;
      case RegionShape::Polygon: {
        if (r.points.size() < 3) continue;
        body = "polygon(";
        for (size_t i = 0; i < r.points.size(); ++i) body += (i ? "," : "") + xy(r.points[i]);
        body += ")";
        break;
      }
      case RegionShape::Point:
        if (r.points.empty()) continue;
        body = "point(" + xy(r.points[0]) + ")";
        break;
      case RegionShape::Line:
        if (r.points.size() < 2) continue;
        body = "line(" + xy(r.points[0]) + "," + xy(r.points[1]) + ")";
        break;
      case RegionShape::Text:
        if (r.points.empty()) continue;
        body = "# text(" + xy(r.points[0]) + ")";  // as DS9 writes it: funtools has no text
        break;
    }
    if (r.exclude) body = "-" + body;
    std::string props;
    if (r.shape == RegionShape::Point)
      props +=
          " point=" + r.pointType + (r.pointSize != 11 ? " " + std::to_string(r.pointSize) : "");
    if (r.shape == RegionShape::Line) props += " line=0 0";
    if (r.color != defaults.color) props += " color=" + r.color;
    if (r.width != defaults.width) props += " width=" + std::to_string(r.width);
    if (r.font != defaults.font) props += " font=\"" + r.font + "\"";
    if (r.dash) props += " dash=1";
    if (!r.text.empty() || r.shape == RegionShape::Text) props += " text=" + textValue(r.text);
    if (!r.tag.empty()) props += " tag=" + textValue(r.tag);
    if (!r.source) props += " background";
    out += body + (props.empty() ? "" : " #" + props) + "\n";
  }
  return out;
}

}  // namespace stacklens::io
