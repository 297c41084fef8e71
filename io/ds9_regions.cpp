// DS9 region files: a line-by-line reader that keeps going past what it cannot use. Its values
// (coordinates, sizes, properties) are read in ds9_region_values.cpp, placing the regions on an
// image is in ds9_region_placement.cpp, writing them in ds9_region_writer.cpp.
#include "io/ds9_regions.h"
#include "io/ds9_region_values.h"
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

using namespace ds9;

class Parser {
 public:
  RegionFile result;

  void line(const std::string& raw, int number) {
    lineNumber_ = number;
    std::string s = trimmed(raw);
    if (s.empty()) return;
    if (s[0] == '#') {
      const std::optional<std::string> commented = commentedShape(s);
      if (!commented) return;
      s = *commented;
    }
    std::string properties;
    const std::vector<std::string> segments = splitSegments(s, properties);
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

  // DS9 writes the shapes funtools does not know (text, vector, ruler, compass, projection,
  // composite, segment) behind a `#`: the shape of such a comment line, or nothing for other
  // comment lines (comments).
  static std::optional<std::string> commentedShape(const std::string& s) {
    std::string rest = trimmed(std::string_view(s).substr(1));
    size_t w = 0;
    while (w < rest.size() && std::isalpha(static_cast<unsigned char>(rest[w]))) ++w;
    const size_t paren = rest.find_first_not_of(" \t", w);
    if (!isShape(lowerCase(rest.substr(0, w))) || paren == std::string::npos || rest[paren] != '(')
      return std::nullopt;
    return rest;
  }

  // The body of a line as its segments (shapes separated by `;`), and in properties what follows
  // the first `#` outside braces.
  static std::vector<std::string> splitSegments(const std::string& s, std::string& properties) {
    std::vector<std::string> segments;
    std::string current;
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
    return segments;
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
      useFrame(word, frame, physical);
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

  // The coordinate system `word` names (frameNamed) in force for the shapes that follow.
  void useFrame(const std::string& word, SkyFrame frame, bool physical) {
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
  }

  void shape(std::string s, const std::string& properties) {
    Region r = regionHere();
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
      r.exclude = s[0] == '-';
      s = trimmed(std::string_view(s).substr(1));
    }
    std::string rest;
    const std::string name = shapeName(s, r, rest);
    if (!isShape(name)) {
      warn("'" + (name.empty() ? s : name) + "' is not a DS9 region shape; skipped");
      return;
    }
    std::string args, trailing;
    if (!splitParentheses(name, trimmed(rest), args, trailing)) return;
    std::vector<std::string> a = splitArguments(args);
    // After the parentheses: a text (`text(x,y) {Hi}`), or the properties of a shape DS9 wrote
    // behind a `#` (`# text(x,y) text={Hi}`), which have no `#` of their own.
    std::string allProperties = properties;
    if (!trailing.empty() && (trailing[0] == '{' || trailing[0] == '"' || trailing[0] == '\''))
      for (const std::string& t : splitArguments(trailing)) a.push_back(t);
    else if (!trailing.empty())
      allProperties = trailing + " " + properties;
    const std::string own = applyProperties(name, allProperties, r);
    if (!frameUsable_) {
      warn(name + " in an unsupported coordinate system; skipped");
      return;
    }
    if (lowerCase(own) == "ignore") return;
    build(name, a, r, own);
  }

  // A region with the global properties, on this line, in the coordinate system now in force.
  Region regionHere() const {
    Region r = defaults_;
    r.line = lineNumber_;
    r.frame = frame_;
    r.physical = physical_ && frame_ == SkyFrame::Image;
    r.linear = linear_ && frame_ == SkyFrame::Image;
    return r;
  }

  // The shape's name at the start of s (lower case), with DS9's `circle point`, `x point` forms
  // read as a point of that type; rest is what follows the name.
  std::string shapeName(const std::string& s, Region& r, std::string& rest) {
    size_t w = 0;
    while (w < s.size() && std::isalpha(static_cast<unsigned char>(s[w]))) ++w;
    std::string name = lowerCase(s.substr(0, w));
    rest = s.substr(w);
    if (isPointType(name)) {
      const std::string after = trimmed(rest);
      if (lowerCase(after.substr(0, 5)) == "point" &&
          (after.size() == 5 || !std::isalpha(static_cast<unsigned char>(after[5])))) {
        r.pointType = name;
        name = "point";
        rest = after.substr(5);
      }
    }
    return name;
  }

  // The arguments: inside parentheses (up to the matching one, braces grouping), trailing what
  // follows them; or, without parentheses, the rest of the segment. False, having warned, when
  // the parenthesis does not close.
  bool splitParentheses(const std::string& name, const std::string& rest, std::string& args,
                        std::string& trailing) {
    args = rest;
    trailing.clear();
    if (rest.empty() || rest[0] != '(') return true;
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
      return false;
    }
    args = rest.substr(1, close - 1);
    trailing = trimmed(std::string_view(rest).substr(close + 1));
    return true;
  }

  // Applies the properties to r and returns the shape's own one (`panda=…`, `compass=…`). DS9
  // writes a panda whose angles or radii are not evenly spaced as one line per sector and ring:
  // the first carries the whole panda in `panda=(angles)(radii)`, the others `panda=ignore`.
  std::string applyProperties(const std::string& name, const std::string& properties, Region& r) {
    std::string own;
    textAngle_ = 0;
    for (const auto& [key, value] : parseProperties(properties)) {
      applyProperty(r, key, value);
      if (key == name) own = trimmed(value);
      if (key == "textangle" && !parseAngle(unquote(value), textAngle_)) textAngle_ = 0;
    }
    return own;
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

  void unreadable(const std::string& name) { warn(name + ": cannot read its arguments; skipped"); }

  // Takes the `n=N` of the annulus forms out of a into count (0 without one); false, having
  // warned, when N is not a count.
  bool takeCount(const std::string& name, std::vector<std::string>& a, int& count) {
    count = 0;
    for (auto it = a.begin(); it != a.end();) {
      if (lowerCase(it->substr(0, 2)) == "n=") {
        if (!parseCount(it->substr(2), count)) {
          warn(name + ": n must be a whole number from 1 to " + std::to_string(kMaxParts) +
               "; skipped");
          return false;
        }
        it = a.erase(it);
      } else {
        ++it;
      }
    }
    return true;
  }

  // The region of shape `name` from its arguments a, added when they can be read.
  void build(const std::string& name, std::vector<std::string> a, Region r,
             const std::string& own) {
    int count = 0;
    if (!takeCount(name, a, count)) return;
    if (name == "circle") {
      circle(a, r);
    } else if (name == "annulus") {
      annulus(a, r, count);
    } else if (name == "ellipse" || name == "box" || name == "rotbox") {
      ellipseOrBox(name, a, r, count);
    } else if (name == "panda" || name == "epanda" || name == "bpanda") {
      panda(name, a, r, own);
    } else if (name == "rectangle") {
      rectangle(a, r);
    } else if (name == "polygon" || name == "segment") {
      pointList(name, a, r);
    } else if (name == "point") {
      points(a, r);
    } else if (name == "line" || name == "ruler" || name == "projection") {
      straightLine(name, a, r);
    } else if (name == "text") {
      text(a, r);
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

  void circle(const std::vector<std::string>& a, Region r) {
    r.shape = RegionShape::Circle;
    if (a.size() != 3 || !point(a, 0, r) || !sizes(a, 2, 1, r)) return unreadable("circle");
    add(r);
  }

  // annulus x y r1 r2 r3… or annulus x y inner outer n=N.
  void annulus(const std::vector<std::string>& a, Region r, int count) {
    const size_t n = a.size();
    r.shape = RegionShape::Annulus;
    if (n < 3 || !point(a, 0, r) || !sizes(a, 2, n - 2, r)) return unreadable("annulus");
    if (count > 0 && !interpolate(r, 1, count)) return;
    if (!ascending(r, 1)) return;
    add(r);
  }

  // x y r1 r2 [angle], or the annulus forms x y r11 r12 r21 r22 … [angle] and
  // x y r11 r12 r21 r22 n=N [angle].
  void ellipseOrBox(const std::string& name, const std::vector<std::string>& a, Region r,
                    int count) {
    const bool ellipse = name == "ellipse";
    const size_t n = a.size();
    if (n < 4 || !point(a, 0, r)) return unreadable(name);
    const size_t rest = n - 2;
    const bool hasAngle = rest % 2 == 1;
    const size_t pairs = rest / 2;
    if (pairs < 1 || !sizes(a, 2, 2 * pairs, r)) return unreadable(name);
    if (hasAngle && !parseAngle(a[n - 1], r.angle)) return unreadable(name);
    if (pairs == 1 && count == 0) {
      r.shape = ellipse ? RegionShape::Ellipse : RegionShape::Box;
    } else {
      r.shape = ellipse ? RegionShape::EllipseAnnulus : RegionShape::BoxAnnulus;
      if (count > 0 && !interpolate(r, 2, count)) return;
      if (!ascending(r, 2)) return;
    }
    add(r);
  }

  // CIAO's rectangle(x1, y1, x2, y2): corners.
  void rectangle(const std::vector<std::string>& a, Region r) {
    Region c = r;
    if (a.size() != 4 || !point(a, 0, c) || !point(a, 2, c)) return unreadable("rectangle");
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
  }

  // A polygon (closed, three points or more) or a segment (a polyline through all its points,
  // drawn open, two or more).
  void pointList(const std::string& name, const std::vector<std::string>& a, Region r) {
    const bool polygon = name == "polygon";
    const size_t n = a.size();
    r.shape = polygon ? RegionShape::Polygon : RegionShape::Line;
    if (n < (polygon ? 6u : 4u) || n % 2 != 0) return unreadable(name);
    for (size_t i = 0; i < n; i += 2)
      if (!point(a, i, r)) return unreadable(name);
    add(r);
  }

  // DS9 accepts several points in one point(…): one region each.
  void points(const std::vector<std::string>& a, Region r) {
    const size_t n = a.size();
    r.shape = RegionShape::Point;
    if (n < 2 || n % 2 != 0) return unreadable("point");
    for (size_t i = 0; i < n; i += 2) {
      Region p = r;
      if (!point(a, i, p)) return unreadable("point");
      add(p);
    }
  }

  // A line; a ruler and a projection are read as their line.
  void straightLine(const std::string& name, const std::vector<std::string>& a, Region r) {
    r.shape = RegionShape::Line;
    if (a.size() < 4 || !point(a, 0, r) || !point(a, 2, r)) return unreadable(name);
    if (name != "line") warn(name + " read as a line");
    add(r);
  }

  void text(const std::vector<std::string>& a, Region r) {
    r.shape = RegionShape::Text;
    if (a.size() < 2 || !point(a, 0, r)) return unreadable("text");
    if (a.size() >= 3) r.text = unquote(a[2]);
    r.angle = textAngle_;  // `textangle=`: the baseline's angle in the region's system
    add(r);
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
  // `compass=<system> {N} {E} …`: the system's word ("" when not given) and the two labels.
  static std::string compassProperty(const std::string& own, std::vector<std::string>& labels) {
    std::istringstream in(own);
    std::string system;
    in >> system;
    labels.clear();
    for (const std::string& t : splitArguments(own.substr(std::min(own.size(), system.size()))))
      if (labels.size() < 2 && (t.front() == '{' || t.front() == '"' || t.front() == '\''))
        labels.push_back(unquote(t));
    labels.resize(2);
    if (labels[0].empty()) labels[0] = "N";
    if (labels[1].empty()) labels[1] = "E";
    return system;
  }

  // The ends of a sky compass of `length` degrees at (x, y) in `frame`: north and east of the
  // compass's frame, found from the centre in that frame, given back in the region's. False when
  // the compass's frame cannot be reached from the region's.
  static bool skyCompassEnds(SkyFrame frame, SkyFrame compassFrame, double x, double y,
                             double length, std::array<double, 2>& north,
                             std::array<double, 2>& east) {
    const SkyFrame from = frame == SkyFrame::Native ? compassFrame : frame;
    const SkyFrame to = compassFrame == SkyFrame::Native ? from : compassFrame;
    double lon = x, lat = y;
    if (from != to && !convertSkyFrame(from, to, lon, lat)) return false;
    for (auto [pa, end] : {std::pair{0.0, &north}, std::pair{90.0, &east}}) {
      double l = 0, b = 0;
      offsetOnSky(lon, lat, pa, length, l, b);
      if (from != to) convertSkyFrame(to, from, l, b);
      *end = {l, b};
    }
    return true;
  }

  void compass(const std::vector<std::string>& a, Region r, const std::string& own) {
    std::vector<std::string> labels;
    const std::string system = compassProperty(own, labels);
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
      if (!skyCompassEnds(r.frame, compassFrame, x, y, length, north, east)) {
        warn("compass: its frame cannot be reached from the region's; skipped");
        return;
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
