// Values print with 7 significant digits (float precision) and NaN by name.
#include "ui/pixel_readout.h"

#include <cmath>

#include "io/wcs.h"

namespace stacklens::ui {

PixelReadout::PixelReadout(QWidget* parent) : QLabel(parent), shape_(new QLabel(parent)) {
  setTextInteractionFlags(Qt::TextSelectableByMouse);
  setMinimumWidth(300);
}

void PixelReadout::stackOpened(const OpenedStackView& stack) {
  reader_ = stack.reader;
  const io::StackInfo& i = reader_->info();
  shape_->setText(QString("%1 × %2 × %3  %4  %5")
                      .arg(i.x)
                      .arg(i.y)
                      .arg(i.z)
                      .arg(io::dtypeName(i.dtype))
                      .arg(QString::fromStdString(i.format)));
  info_ = reader_->info();
  raw_.reset();
  processed_.reset();
  processedZ_ = -1;
  hover_.reset();
  clear();
}

void PixelReadout::sliceShown(const ShownSlice& shown) {
  z_ = shown.z;
  raw_ = shown.data;
  refresh();
}

void PixelReadout::setProcessed(int z, render::SliceData processed) {
  processedZ_ = z;
  processed_ = std::move(processed);
  refresh();
}

void PixelReadout::hover(QPointF imagePos) {
  hover_ = imagePos;
  refresh();
}

void PixelReadout::refresh() {
  if (!hover_ || !raw_) {
    clear();
    return;
  }
  const int x = int(std::lround(hover_->x())), y = int(std::lround(hover_->y()));
  if (x < 0 || y < 0 || x >= info_.x || y >= info_.y) {
    clear();
    return;
  }
  const size_t i = static_cast<size_t>(y) * info_.x + x;
  auto number = [](float v) { return std::isnan(v) ? QString("NaN") : QString::number(v, 'g', 7); };
  QString text =
      QString("x %1  y %2  z %3   value %4").arg(x).arg(y).arg(z_).arg(number((*raw_)[i]));
  if (processed_ && processedZ_ == z_ && i < processed_->size())
    text += QString("   processed %1").arg(number((*processed_)[i]));
  for (const auto& part : parts_) {
    const QString more = part(*hover_);
    if (!more.isEmpty()) text += "   " + more;
  }
  if (reader_ && reader_->wcs() && reader_->wcs()->hasCelestial())
    text += "   " + QString::fromStdString(reader_->wcs()->formatCelestial(x, y, z_));
  setText(text);
}

}  // namespace stacklens::ui
