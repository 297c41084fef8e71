#include "ui/view_decorations.h"

#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>
#include <cmath>

#include "io/wcs.h"
#include "render/colormap.h"

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

}  // namespace

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

void ViewDecorations::install() {
  if (!colorbar_ && !compass_)
    view_->setDecoration({});
  else
    view_->setDecoration([this](QPainter& p, const render::SliceView& v) { paint(p, v); });
}

void ViewDecorations::paint(QPainter& p, const render::SliceView& view) const {
  QFont font = p.font();
  font.setPixelSize(11);
  p.setFont(font);
  const QColor ink(255, 255, 255);
  if (colorbar_) {
    const render::DisplaySettings& d = view.display();
    const render::Colormap map = render::loadColormap(d.colormap);
    const QRectF bar = colorbarRect(view);
    // One band per colormap entry, the high limit at the top, as the view maps values.
    for (int i = 0; i < 256; ++i) {
      const int entry = d.invert ? 255 - i : i;
      const double y1 = bar.bottom() - bar.height() * i / 256.0;
      const double y0 = bar.bottom() - bar.height() * (i + 1) / 256.0;
      p.fillRect(QRectF(bar.left(), y0, bar.width(), y1 - y0 + 0.5), map.at(entry));
    }
    p.setPen(QPen(ink, 1));
    p.drawRect(bar);
    const QFontMetrics m(font);
    const QString high = QString::number(double(d.limits.high), 'g', 4);
    const QString low = QString::number(double(d.limits.low), 'g', 4);
    p.drawText(QPointF(bar.right() - m.horizontalAdvance(high), bar.top() - 6), high);
    p.drawText(QPointF(bar.right() - m.horizontalAdvance(low), bar.bottom() + m.ascent() + 4), low);
  }
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

}  // namespace stacklens::ui
