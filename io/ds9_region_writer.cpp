// DS9 region text of pixel regions, in DS9's own image-frame format (4.1).
#include <algorithm>
#include <charconv>
#include <cmath>
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
    std::string body, pandaLists;
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
        if (r.points.size() == 2) {
          body = "line(" + xy(r.points[0]) + "," + xy(r.points[1]) + ")";
        } else {  // a segment region, behind a `#` as DS9 writes it
          body = "# segment(";
          for (size_t i = 0; i < r.points.size(); ++i) body += (i ? "," : "") + xy(r.points[i]);
          body += ")";
        }
        break;
      case RegionShape::Annulus:
      case RegionShape::EllipseAnnulus:
      case RegionShape::BoxAnnulus: {
        const bool round = r.shape == RegionShape::Annulus;
        if (r.points.empty() || r.sizes.size() < (round ? 2u : 4u)) continue;
        body = std::string(round                                    ? "annulus("
                           : r.shape == RegionShape::EllipseAnnulus ? "ellipse("
                                                                    : "box(") +
               xy(r.points[0]);
        for (double v : r.sizes) body += "," + formatNumber(v);
        body += (round ? "" : "," + formatNumber(r.angle)) + ")";
        break;
      }
      case RegionShape::Panda:
      case RegionShape::Epanda:
      case RegionShape::Bpanda:
        if (r.points.empty() || r.angles.size() < 2 ||
            r.sizes.size() < (r.shape == RegionShape::Panda ? 2u : 4u))
          continue;
        body = pandaText(r, xy(r.points[0]), pandaLists);
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
    if (r.shape == RegionShape::Text && r.angle != 0)
      props += " textangle=" + formatNumber(r.angle);
    if (r.color != defaults.color) props += " color=" + r.color;
    if (r.width != defaults.width) props += " width=" + std::to_string(r.width);
    if (r.font != defaults.font) props += " font=\"" + r.font + "\"";
    if (r.dash) props += " dash=1";
    if (r.fill) props += " fill=1";
    if (!r.text.empty() || r.shape == RegionShape::Text) props += " text=" + textValue(r.text);
    if (!r.tag.empty()) props += " tag=" + textValue(r.tag);
    if (!r.source) props += " background";
    if (!pandaLists.empty()) props = " " + pandaLists + props;
    out += body + (props.empty() ? "" : " #" + props) + "\n";
  }
  return out;
}

}  // namespace stacklens::io
