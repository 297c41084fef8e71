// Values print with 7 significant digits (float precision) and NaN by name.
#include "ui/frame/pixel_readout.h"

#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "io/wcs.h"
#include "ui/frame/future_result.h"

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
  lazy_ = false;
  probe_ = {};
  ++probeGeneration_;
  processed_.reset();
  processedZ_ = -1;
  hover_.reset();
  clear();
}

void PixelReadout::sliceShown(const ShownSlice& shown) {
  z_ = shown.z;
  raw_ = shown.data;
  lazy_ = !raw_ && shown.overview;
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
  if (!hover_ || (!raw_ && !lazy_)) {
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
  QString text = QString("x %1  y %2  z %3   value %4")
                     .arg(x)
                     .arg(y)
                     .arg(z_)
                     .arg(raw_ ? number((*raw_)[i]) : lazyValue(x, y));
  if (raw_ && processed_ && processedZ_ == z_ && i < processed_->size())
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

namespace stacklens::ui {

QString PixelReadout::lazyValue(int x, int y) {
  if (probe_.x == x && probe_.y == y && probe_.z == z_) {
    if (!probe_.error.isEmpty()) return tr("unreadable (%1)").arg(probe_.error);
    if (!probe_.value) return QStringLiteral("…");
    return std::isnan(*probe_.value) ? QString("NaN") : QString::number(*probe_.value, 'g', 7);
  }
  probe_ = {x, y, z_, std::nullopt, {}};
  const quint64 generation = ++probeGeneration_;
  // The watcher belongs to this label: a read that ends after the window is gone reports to
  // no one.
  auto read = [reader = reader_, x, y, z = z_] {
    float value = 0;
    reader->readBox(z, y, y + 1, x, x + 1, &value);
    return value;
  };
  whenDone(
      this, QtConcurrent::run(QThreadPool::globalInstance(), read),
      [this, generation](float value) {
        if (generation != probeGeneration_) return;
        probe_.value = value;
        refresh();
      },
      [this, generation](const std::exception& e) {
        if (generation != probeGeneration_) return;
        probe_.error = QString::fromStdString(e.what());
        refresh();
      });
  return QStringLiteral("…");
}

}  // namespace stacklens::ui
