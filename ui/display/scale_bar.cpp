#include "ui/display/scale_bar.h"

#include <cmath>

#include "io/wcs.h"

namespace stacklens::ui {
namespace {

// The angle in degrees between two points of the sky (haversine: accurate for small angles).
double degreesApart(double lng1, double lat1, double lng2, double lat2) {
  const double r = M_PI / 180.0;
  const double a = std::sin((lat2 - lat1) * r / 2), b = std::sin((lng2 - lng1) * r / 2);
  const double h = a * a + std::cos(lat1 * r) * std::cos(lat2 * r) * b * b;
  return 2 * std::asin(std::min(1.0, std::sqrt(h))) / r;
}

}  // namespace

QString displayUnit(const QString& unit) {
  if (unit == "micron" || unit == "um" || unit == "µm") return QStringLiteral("µm");
  return unit;
}

double roundDown125(double value) {
  if (!(value > 0) || !std::isfinite(value)) return 0;
  const double decade = std::pow(10.0, std::floor(std::log10(value)));
  for (double m : {5.0, 2.0, 1.0})
    if (m * decade <= value * (1 + 1e-9)) return m * decade;
  return decade;
}

std::optional<PixelScale> pixelScale(const io::StackReader& stack, const render::SliceView& view,
                                     double z) {
  const QPointF c = view.widgetToImage({view.width() / 2.0, view.height() / 2.0});
  if (const io::Wcs* wcs = stack.wcs(); wcs && wcs->hasCelestial()) {
    double lng0, lat0, lng1, lat1;
    if (wcs->celestial(c.x(), c.y(), z, lng0, lat0) &&
        wcs->celestial(c.x() + 1, c.y(), z, lng1, lat1)) {
      const double d = degreesApart(lng0, lat0, lng1, lat1);
      if (d > 0 && std::isfinite(d)) return PixelScale{d, "deg", true};
    }
  }
  const io::StackInfo& info = stack.info();
  if (info.spacingKnown && info.spacing[2] > 0)
    return PixelScale{info.spacing[2], QString::fromStdString(info.units[2]), false};
  return std::nullopt;
}

ScaleBarSpec scaleBar(const PixelScale& scale, double widgetPixelsPerImagePixel,
                      double wantPixels) {
  ScaleBarSpec bar;
  if (!(widgetPixelsPerImagePixel > 0) || !(scale.perPixel > 0)) return bar;
  const double perWidgetPixel = scale.perPixel / widgetPixelsPerImagePixel;
  double factor = 1;  // units of the label per unit of the scale
  QString unit = displayUnit(scale.unit);
  if (scale.angle) {
    const double want = wantPixels * perWidgetPixel;  // degrees
    if (want < 1.0 / 60)
      factor = 3600, unit = QStringLiteral("″");
    else if (want < 1)
      factor = 60, unit = QStringLiteral("′");
    else
      unit = QStringLiteral("°");
  }
  const double length = roundDown125(wantPixels * perWidgetPixel * factor);
  bar.pixels = length / factor / perWidgetPixel;
  const QString number = QString::number(length, 'g', 6);
  bar.label = scale.angle || unit.isEmpty() ? number + unit : number + " " + unit;
  return bar;
}

std::vector<double> niceTicks(double low, double high, int count) {
  std::vector<double> ticks;
  if (!(high > low) || !std::isfinite(low) || !std::isfinite(high)) return ticks;
  const double step = roundDown125((high - low) / std::max(1, count - 1));
  if (!(step > 0)) return ticks;
  for (double v = std::ceil(low / step) * step; v <= high + step * 1e-9 && ticks.size() < 50;
       v += step)
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

}  // namespace stacklens::ui
