// DS9 region text of pixel regions, in DS9's own image-frame format (4.1).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include "io/ds9_regions.h"

namespace stacklens::io {

namespace {

std::string formatNumber(double v, int precision = 12) {
  char text[64];
  const auto [end, ec] =
      std::to_chars(text, text + sizeof text, v, std::chars_format::general, precision);
  return ec == std::errc() ? std::string(text, end) : std::string("nan");
}

}  // namespace

namespace {

std::string textValue(const std::string& t) {
  if (t.find('}') == std::string::npos) return "{" + t + "}";
  if (t.find('"') == std::string::npos) return "\"" + t + "\"";
  return "'" + t + "'";
}

// Whether v holds evenly spaced values, taken `stride` at a time: each axis on its own.
bool evenlySpaced(const std::vector<double>& v, size_t stride) {
  const size_t n = v.size() / stride;
  for (size_t axis = 0; axis < stride; ++axis) {
    const double step = v[stride + axis] - v[axis];
    for (size_t k = 2; k < n; ++k) {
      const double d = v[k * stride + axis] - v[(k - 1) * stride + axis];
      if (std::fabs(d - step) > 1e-9 * std::max(1.0, std::fabs(step))) return false;
    }
  }
  return true;
}

// A panda as DS9 writes it: evenly spaced angles and radii in its own short form; others as
// the first sector and ring with `panda=(angles)(radii)` naming the whole, which DS9 follows
// with a `panda=ignore` line for each other part (left out here: they add nothing).
std::string pandaText(const PixelRegion& r, const std::string& centre, std::string& lists) {
  const size_t stride = r.shape == RegionShape::Panda ? 1 : 2;
  const char* name = r.shape == RegionShape::Panda    ? "panda"
                     : r.shape == RegionShape::Epanda ? "epanda"
                                                      : "bpanda";
  const size_t sectors = r.angles.size() - 1, rings = r.sizes.size() / stride - 1;
  const bool even = evenlySpaced(r.angles, 1) && evenlySpaced(r.sizes, stride);
  auto sizesOf = [&](size_t ring) {
    std::string t;
    for (size_t axis = 0; axis < stride; ++axis)
      t += "," + formatNumber(r.sizes[ring * stride + axis]);
    return t;
  };
  std::string body = std::string(name) + "(" + centre + ",";
  if (even) {
    body += formatNumber(r.angles.front()) + "," + formatNumber(r.angles.back()) + "," +
            std::to_string(sectors) + sizesOf(0) + sizesOf(rings) + "," + std::to_string(rings);
  } else {
    body += formatNumber(r.angles[0]) + "," + formatNumber(r.angles[1]) + ",1" + sizesOf(0) +
            sizesOf(1) + ",1";
    lists = std::string(name) + "=(";
    for (size_t k = 0; k < r.angles.size(); ++k)
      lists += (k ? " " : "") + formatNumber(r.angles[k]);
    lists += ")(";
    for (size_t k = 0; k < r.sizes.size(); ++k) lists += (k ? " " : "") + formatNumber(r.sizes[k]);
    lists += ")";
    if (stride == 2) lists += "(" + formatNumber(r.angle) + ")";
  }
  if (stride == 2) body += "," + formatNumber(r.angle);
  return body + ")";
}

// DS9 counts pixels from 1, ours from 0.
std::string xy(const std::array<double, 2>& p) {
  return formatNumber(p[0] + 1.0) + "," + formatNumber(p[1] + 1.0);
}

std::string xyList(const std::vector<std::array<double, 2>>& points) {
  std::string t;
  for (size_t i = 0; i < points.size(); ++i) t += (i ? "," : "") + xy(points[i]);
  return t;
}

// Two points make a line; more make a segment region, behind a `#` as DS9 writes it.
std::optional<std::string> lineText(const PixelRegion& r) {
  if (r.points.size() < 2) return std::nullopt;
  if (r.points.size() == 2) return "line(" + xy(r.points[0]) + "," + xy(r.points[1]) + ")";
  return "# segment(" + xyList(r.points) + ")";
}

// DS9 writes elliptical and box annuli with the ellipse and box names, all radii, then angle.
std::optional<std::string> annulusText(const PixelRegion& r) {
  const bool round = r.shape == RegionShape::Annulus;
  if (r.points.empty() || r.sizes.size() < (round ? 2u : 4u)) return std::nullopt;
  std::string body = std::string(round                                    ? "annulus("
                                 : r.shape == RegionShape::EllipseAnnulus ? "ellipse("
                                                                          : "box(") +
                     xy(r.points[0]);
  for (double v : r.sizes) body += "," + formatNumber(v);
  body += (round ? "" : "," + formatNumber(r.angle)) + ")";
  return body;
}

// A region's shape and coordinates; nullopt when it lacks the points or sizes its shape needs
// (it is left out). A panda that is not evenly spaced also sets `pandaLists`.
std::optional<std::string> shapeText(const PixelRegion& r, std::string& pandaLists) {
  switch (r.shape) {
    case RegionShape::Circle:
      if (r.points.empty() || r.sizes.empty()) return std::nullopt;
      return "circle(" + xy(r.points[0]) + "," + formatNumber(r.sizes[0]) + ")";
    case RegionShape::Ellipse:
    case RegionShape::Box:
      if (r.points.empty() || r.sizes.size() < 2) return std::nullopt;
      return std::string(r.shape == RegionShape::Ellipse ? "ellipse(" : "box(") + xy(r.points[0]) +
             "," + formatNumber(r.sizes[0]) + "," + formatNumber(r.sizes[1]) + "," +
             formatNumber(r.angle) + ")";
    case RegionShape::Polygon:
      if (r.points.size() < 3) return std::nullopt;
      return "polygon(" + xyList(r.points) + ")";
    case RegionShape::Point:
      if (r.points.empty()) return std::nullopt;
      return "point(" + xy(r.points[0]) + ")";
    case RegionShape::Line:
      return lineText(r);
    case RegionShape::Annulus:
    case RegionShape::EllipseAnnulus:
    case RegionShape::BoxAnnulus:
      return annulusText(r);
    case RegionShape::Panda:
    case RegionShape::Epanda:
    case RegionShape::Bpanda:
      if (r.points.empty() || r.angles.size() < 2 ||
          r.sizes.size() < (r.shape == RegionShape::Panda ? 2u : 4u))
        return std::nullopt;
      return pandaText(r, xy(r.points[0]), pandaLists);
    case RegionShape::Text:
      if (r.points.empty()) return std::nullopt;
      return "# text(" + xy(r.points[0]) + ")";  // as DS9 writes it: funtools has no text
  }
  return std::string();  // every shape is handled above
}

// The properties after a region's `#`, each only where it differs from DS9's global line.
std::string propertiesText(const PixelRegion& r) {
  const PixelRegion defaults;
  std::string props;
  if (r.shape == RegionShape::Point)
    props += " point=" + r.pointType + (r.pointSize != 11 ? " " + std::to_string(r.pointSize) : "");
  if (r.shape == RegionShape::Line) props += " line=0 0";
  if (r.shape == RegionShape::Text && r.angle != 0) props += " textangle=" + formatNumber(r.angle);
  if (r.color != defaults.color) props += " color=" + r.color;
  if (r.width != defaults.width) props += " width=" + std::to_string(r.width);
  if (r.font != defaults.font) props += " font=\"" + r.font + "\"";
  if (r.dash) props += " dash=1";
  if (r.fill) props += " fill=1";
  if (!r.text.empty() || r.shape == RegionShape::Text) props += " text=" + textValue(r.text);
  if (!r.tag.empty()) props += " tag=" + textValue(r.tag);
  if (!r.source) props += " background";
  return props;
}

}  // namespace

std::string ds9RegionText(const std::vector<PixelRegion>& regions) {
  std::string out =
      "# Region file format: DS9 version 4.1\n"
      "global color=green dashlist=8 3 width=1 font=\"helvetica 10 normal roman\" select=1 "
      "highlite=1 dash=0 fixed=0 edit=1 move=1 delete=1 include=1 source=1\n"
      "image\n";
  for (const PixelRegion& r : regions) {
    std::string pandaLists;
    std::optional<std::string> body = shapeText(r, pandaLists);
    if (!body) continue;
    if (r.exclude) *body = "-" + *body;
    std::string props = propertiesText(r);
    if (!pandaLists.empty()) props = " " + pandaLists + props;
    out += *body + (props.empty() ? "" : " #" + props) + "\n";
  }
  return out;
}

}  // namespace stacklens::io
