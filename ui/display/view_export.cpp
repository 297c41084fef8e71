// Colorbar rendering and atomic PNG writing.
#include "ui/display/view_export.h"

#include <QBuffer>
#include <QPainter>

#include "io/whole_file.h"
#include "render/colormap.h"

namespace stacklens::ui {

QImage colorbarImage(const render::DisplaySettings& display, int width,
                     const std::vector<float>* cdf) {
  const int barHeight = 18, height = 46, margin = 10;
  QImage image(width, height, QImage::Format_RGB32);
  image.fill(QColor(30, 30, 34));
  const render::Colormap map = render::loadColormap(display.colormap);
  const double low = display.limits.low, high = display.limits.high;
  const int barWidth = std::max(2, width - 2 * margin);
  // Each column shows the colour of the value at its position, so nonlinear scales show as such.
  for (int i = 0; i < barWidth; ++i) {
    const float v = static_cast<float>(low + (high - low) * i / (barWidth - 1));
    const QRgb rgb = map.at(render::colourIndex(display, v, cdf)).rgb();
    for (int y = 4; y < 4 + barHeight; ++y) image.setPixel(margin + i, y, rgb);
  }
  QPainter p(&image);
  p.setPen(Qt::white);
  QFont font = p.font();
  font.setPixelSize(11);
  p.setFont(font);
  const int ticks = 5;
  for (int k = 0; k < ticks; ++k) {
    const double f = double(k) / (ticks - 1);
    const int x = margin + static_cast<int>(f * (barWidth - 1));
    p.drawLine(x, 4 + barHeight, x, 8 + barHeight);
    const QString label = QString::number(low + (high - low) * f, 'g', 5);
    const int align = k == 0 ? Qt::AlignLeft : k == ticks - 1 ? Qt::AlignRight : Qt::AlignHCenter;
    const QRect box = k == 0           ? QRect(x, 9 + barHeight, 120, 14)
                      : k == ticks - 1 ? QRect(x - 120, 9 + barHeight, 120, 14)
                                       : QRect(x - 60, 9 + barHeight, 120, 14);
    p.drawText(box, align, label);
  }
  return image;
}

QImage withColorbar(const QImage& view, const render::DisplaySettings& display,
                    const std::vector<float>* cdf) {
  const QImage bar = colorbarImage(display, view.width(), cdf);
  QImage out(view.width(), view.height() + bar.height(), QImage::Format_RGB32);
  QPainter p(&out);
  p.drawImage(0, 0, view);
  p.drawImage(0, view.height(), bar);
  return out;
}

QString pngPath(const QString& path) {
  return path.endsWith(".png", Qt::CaseInsensitive) ? path : path + ".png";
}

QString savePngAtomically(const QImage& image, const QString& path, const QString& sourcePath) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, "PNG")) return path + ": could not encode the PNG";
  try {
    io::writeWholeFile(path.toStdString(), bytes.toStdString(), sourcePath.toStdString());
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

QString exportViewPng(render::SliceView* view, const QString& path, bool colorbar,
                      const QString& sourcePath) {
  QImage image = view->grabFramebuffer();
  if (colorbar) {
    const auto& d = view->display();
    const std::vector<float>* cdf = d.scale == render::Scale::HistEq ? &view->cdf() : nullptr;
    image = withColorbar(image, d, cdf);
  }
  return savePngAtomically(image, pngPath(path), sourcePath);
}

}  // namespace stacklens::ui
