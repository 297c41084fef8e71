#include "ui/display/view_decorations.h"

#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>
#include <cmath>

#include "io/wcs.h"
#include "render/colormap.h"
#include "ui/display/scale_bar.h"

namespace stacklens::ui {
namespace {

void arrow(QPainter& p, QPointF from, QPointF direction, double length, const QString& label) {
  const QPointF to = from + direction * length;
  p.drawLine(from, to);
  const QPointF side(-direction.y(), direction.x());
  QPainterPath head;
  head.moveTo(to);
  head.lineTo(to - direction * 7 + side * 4);
  head.lineTo(to - direction * 7 - side * 4);
  head.closeSubpath();
  p.fillPath(head, p.pen().color());
  const QPointF text = to + direction * 10;
  const QFontMetrics m(p.font());
  p.drawText(QPointF(text.x() - m.horizontalAdvance(label) / 2.0, text.y() + m.ascent() / 2.0 - 1),
             label);
}

// A step of 1, 2 or 5 × 10^n degrees, or of 1, 2, 5, 10, 15, 30 arcmin or arcsec below a degree,
// that puts about four lines across span degrees.
double niceStep(double span) {
  const double want = span / 4.0;
  static const double steps[] = {1.0 / 3600,  2.0 / 3600, 5.0 / 3600, 10.0 / 3600, 15.0 / 3600,
                                 30.0 / 3600, 1.0 / 60,   2.0 / 60,   5.0 / 60,    10.0 / 60,
                                 15.0 / 60,   30.0 / 60,  1.0,        2.0,         5.0,
                                 10.0,        15.0,       30.0,       45.0,        90.0};
  for (double s : steps)
    if (s >= want) return s;
  return 90.0;
}

// The segments where field (sampled on a lattice of nx × ny widget points, row by row) crosses
// level (compute/contours.h), in widget coordinates.
std::vector<std::pair<QPointF, QPointF>> isoline(const std::vector<double>& field, int nx, int ny,
                                                 const std::vector<QPointF>& points, double level) {
  std::vector<std::pair<QPointF, QPointF>> out;
  // The lattice is regular: a lattice coordinate maps linearly onto the widget.
  const QPointF origin = points.front(), last = points.back();
  auto widget = [&](const compute::ContourPoint& c) {
    return QPointF(origin.x() + (last.x() - origin.x()) * c.x / (nx - 1),
                   origin.y() + (last.y() - origin.y()) * c.y / (ny - 1));
  };
  for (const auto& [a, b] : compute::contourSegments(field.data(), nx, ny, level))
    out.emplace_back(widget(a), widget(b));
  return out;
}

}  // namespace

std::vector<GridLine> coordinateGrid(const io::Wcs& wcs, const render::SliceView& view, double z) {
  // World coordinates on a lattice of widget points every 12 px over the view.
  const int nx = std::max(2, view.width() / 12 + 2), ny = std::max(2, view.height() / 12 + 2);
  std::vector<QPointF> points;
  std::vector<double> lng, lat;
  double lng0 = NAN;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const QPointF w(i * double(view.width()) / (nx - 1), j * double(view.height()) / (ny - 1));
      const QPointF im = view.widgetToImage(w);
      double a = NAN, b = NAN;
      wcs.celestial(im.x(), im.y(), z, a, b);
      if (std::isnan(lng0) && std::isfinite(a)) lng0 = a;
      // Longitudes near the first one (no jump where they wrap through 0 / 360).
      points.push_back(w);
      lng.push_back(std::isfinite(a) ? lng0 + std::remainder(a - lng0, 360.0) : NAN);
      lat.push_back(b);
    }
  std::vector<GridLine> grid;
  if (std::isnan(lng0)) return grid;
  auto range = [](const std::vector<double>& v) {
    double lo = INFINITY, hi = -INFINITY;
    for (double x : v)
      if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
    return std::make_pair(lo, hi);
  };
  for (int k = 0; k < 2; ++k) {
    const bool longitude = k == 0;
    const std::vector<double>& field = longitude ? lng : lat;
    const auto [lo, hi] = range(field);
    if (!(hi > lo)) continue;
    const double step = niceStep(hi - lo);
    const int decimals = step >= 1 ? 0 : step >= 1.0 / 60 ? 2 : 4;
    for (double v = std::ceil(lo / step) * step; v <= hi && grid.size() < 200; v += step) {
      GridLine line{longitude, v, {}, isoline(field, nx, ny, points, v)};
      if (longitude) line.value = std::fmod(std::fmod(v, 360.0) + 360.0, 360.0);
      line.label = QString::number(line.value, 'f', decimals) + QStringLiteral("°");
      if (!line.segments.empty()) grid.push_back(std::move(line));
    }
  }
  return grid;
}

std::optional<std::pair<QPointF, QPointF>> compassDirections(const io::Wcs& wcs,
                                                             const render::SliceView& view,
                                                             QPointF at, double z) {
  double lng0, lat0, lngX, latX, lngY, latY;
  if (!wcs.celestial(at.x(), at.y(), z, lng0, lat0) ||
      !wcs.celestial(at.x() + 1, at.y(), z, lngX, latX) ||
      !wcs.celestial(at.x(), at.y() + 1, z, lngY, latY))
    return std::nullopt;
  auto wrap = [](double d) { return std::remainder(d, 360.0); };
  // The Jacobian of (longitude · cos latitude, latitude) over (x, y): a local flat map of the sky.
  const double c = std::cos(lat0 * M_PI / 180.0);
  const double a = wrap(lngX - lng0) * c, b = wrap(lngY - lng0) * c;
  const double d = latX - lat0, e = latY - lat0;
  const double det = a * e - b * d;
  if (!(std::fabs(det) > 0)) return std::nullopt;
  // The pixel steps that move one unit north (0, 1) and east (1, 0) on that map.
  const QPointF north(-b / det, a / det), east(e / det, -d / det);
  auto onScreen = [&](QPointF step) {
    const QPointF v = view.imageToWidget(at + step * 1e-3) - view.imageToWidget(at);
    const double n = std::hypot(v.x(), v.y());
    return n > 0 ? v / n : QPointF();
  };
  return std::make_pair(onScreen(north), onScreen(east));
}

QRectF ViewDecorations::colorbarRect(const render::SliceView& view) {
  const double h = std::max(40.0, view.height() - 60.0);
  return {view.width() - 34.0, 30.0, 14.0, h};
}

void ViewDecorations::setColorbar(bool on) {
  colorbar_ = on;
  install();
}

void ViewDecorations::setCompass(bool on) {
  compass_ = on;
  install();
}

void ViewDecorations::setGrid(bool on) {
  grid_ = on;
  install();
}

void ViewDecorations::setScaleBar(bool on) {
  scaleBar_ = on;
  install();
}

QPointF ViewDecorations::scaleBarOrigin(const render::SliceView& view) {
  return {100.0, view.height() - 22.0};  // right of the compass
}

void ViewDecorations::setContours(std::vector<compute::ContourLine> lines) {
  contours_ = std::move(lines);
  install();
}

void ViewDecorations::setOverlay(const QString& key, Overlay paint) {
  if (paint)
    overlays_[key] = std::move(paint);
  else
    overlays_.erase(key);
  install();
}

void ViewDecorations::install() {
  if (!colorbar_ && !compass_ && !grid_ && !scaleBar_ && contours_.empty() && overlays_.empty())
    view_->setDecoration({});
  else
    view_->setDecoration([this](QPainter& p, const render::SliceView& v) { paint(p, v); });
}

void ViewDecorations::paint(QPainter& p, const render::SliceView& view) const {
  QFont font = p.font();
  font.setPixelSize(11);
  p.setFont(font);
  const QColor ink(255, 255, 255);
  if (grid_ && reader_ && !(reader_->wcs() && reader_->wcs()->hasCelestial()))
    paintPhysicalGrid(p, view);
  if (grid_ && reader_ && reader_->wcs()) {
    p.setPen(QPen(QColor(255, 200, 60, 170), 1));
    for (const GridLine& line : coordinateGrid(*reader_->wcs(), view, double(z_))) {
      for (const auto& [a, b] : line.segments) p.drawLine(a, b);
      // The value beside the line's first piece inside the view.
      const QPointF at = line.segments.front().first;
      p.drawText(at + QPointF(3, -3),
                 QString::number(line.value, 'f', line.value == std::floor(line.value) ? 0 : 4) +
                     QStringLiteral("°"));
    }
  }
  if (!contours_.empty()) paintContours(p, view);
  for (const auto& [key, overlay] : overlays_) {
    p.save();
    overlay(p, view);
    p.restore();
  }
  if (colorbar_) paintColorbar(p, view);
  if (scaleBar_) paintScaleBar(p, view);
  if (compass_ && reader_ && reader_->wcs()) {
    const QPointF origin(46, view.height() - 46);
    const auto directions =
        compassDirections(*reader_->wcs(), view, view.widgetToImage(origin), double(z_));
    if (directions) {
      p.setPen(QPen(QColor(120, 255, 120), 2));
      arrow(p, origin, directions->first, 28, "N");
      arrow(p, origin, directions->second, 28, "E");
    }
  }
}

// The bar with the high limit at the top, and ticks at round values in data units placed where
// the view's scale puts them (histogram equalisation: the limits only).
void ViewDecorations::paintColorbar(QPainter& p, const render::SliceView& view) const {
  const render::DisplaySettings& d = view.display();
  const render::Colormap map = render::loadColormap(d.colormap);
  const QRectF bar = colorbarRect(view);
  for (int i = 0; i < 256; ++i) {
    const int entry = d.invert ? 255 - i : i;
    const double y1 = bar.bottom() - bar.height() * i / 256.0;
    const double y0 = bar.bottom() - bar.height() * (i + 1) / 256.0;
    p.fillRect(QRectF(bar.left(), y0, bar.width(), y1 - y0 + 0.5), map.at(entry));
  }
  const QColor ink(255, 255, 255);
  p.setPen(QPen(ink, 1));
  p.drawRect(bar);
  const QFontMetrics m(p.font());
  const QString high = QString::number(double(d.limits.high), 'g', 4);
  const QString low = QString::number(double(d.limits.low), 'g', 4);
  p.drawText(QPointF(bar.right() - m.horizontalAdvance(high), bar.top() - 6), high);
  p.drawText(QPointF(bar.right() - m.horizontalAdvance(low), bar.bottom() + m.ascent() + 4), low);
  if (d.scale == render::Scale::HistEq) return;
  for (double v : niceTicks(d.limits.low, d.limits.high, 6)) {
    const int index = render::colourIndex(d, float(v));
    if (index < 0) continue;
    const int band = d.invert ? 255 - index : index;
    const double y = bar.bottom() - bar.height() * (band + 0.5) / 256.0;
    if (y < bar.top() + 8 || y > bar.bottom() - 8) continue;  // the limits' labels are there
    p.drawLine(QPointF(bar.left() - 4, y), QPointF(bar.left(), y));
    const QString text = QString::number(v, 'g', 4);
    p.drawText(QPointF(bar.left() - 6 - m.horizontalAdvance(text), y + m.ascent() / 2.0 - 1), text);
  }
}

void ViewDecorations::paintScaleBar(QPainter& p, const render::SliceView& view) const {
  if (!reader_) return;
  const auto scale = pixelScale(*reader_, view, double(z_));
  if (!scale) return;
  const ScaleBarSpec bar = scaleBar(*scale, view.zoom());
  if (!(bar.pixels > 0)) return;
  const QPointF a = scaleBarOrigin(view), b = a + QPointF(bar.pixels, 0);
  p.setPen(QPen(QColor(0, 0, 0, 160), 6));
  p.drawLine(a, b);
  p.setPen(QPen(QColor(255, 255, 255), 3));
  p.drawLine(a, b);
  const QFontMetrics m(p.font());
  p.drawText(QPointF((a.x() + b.x() - m.horizontalAdvance(bar.label)) / 2, a.y() - 7), bar.label);
}

// Without a celestial WCS: lines every round number of the spacing's unit along x and y.
void ViewDecorations::paintPhysicalGrid(QPainter& p, const render::SliceView& view) const {
  const io::StackInfo& info = reader_->info();
  if (!info.spacingKnown || !(info.spacing[1] > 0) || !(info.spacing[2] > 0)) return;
  const QPointF c0 = view.widgetToImage({0, 0}),
                c1 = view.widgetToImage({double(view.width()), double(view.height())});
  const double x0 = std::min(c0.x(), c1.x()) * info.spacing[2];
  const double x1 = std::max(c0.x(), c1.x()) * info.spacing[2];
  const double y0 = std::min(c0.y(), c1.y()) * info.spacing[1];
  const double y1 = std::max(c0.y(), c1.y()) * info.spacing[1];
  const double step = roundDown125(std::max(x1 - x0, y1 - y0) / 4);
  if (!(step > 0)) return;
  const QString unit = displayUnit(QString::fromStdString(info.units[2]));
  p.setPen(QPen(QColor(255, 200, 60, 170), 1));
  int lines = 0;
  for (double v = std::ceil(x0 / step) * step; v <= x1 && lines < 100; v += step, ++lines) {
    const double x = view.imageToWidget({v / info.spacing[2], 0}).x();
    p.drawLine(QPointF(x, 0), QPointF(x, view.height()));
    p.drawText(QPointF(x + 3, 12), QString::number(v, 'g', 6) + " " + unit);
  }
  for (double v = std::ceil(y0 / step) * step; v <= y1 && lines < 200; v += step, ++lines) {
    const double y = view.imageToWidget({0, v / info.spacing[1]}).y();
    p.drawLine(QPointF(0, y), QPointF(view.width(), y));
    p.drawText(QPointF(3, y - 3), QString::number(v, 'g', 6) + " " + unit);
  }
}

void ViewDecorations::paintContours(QPainter& p, const render::SliceView& view) const {
  p.setPen(QPen(QColor(60, 255, 90), 1.2));
  for (const compute::ContourLine& line : contours_) {
    QPolygonF polygon;
    for (const compute::ContourPoint& c : line.points) polygon << view.imageToWidget({c.x, c.y});
    if (line.closed)
      p.drawPolygon(polygon);
    else
      p.drawPolyline(polygon);
  }
}

}  // namespace stacklens::ui
