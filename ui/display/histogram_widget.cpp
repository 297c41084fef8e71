// Paints the histogram and lets the user drag the display limits.
#include "ui/display/histogram_widget.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace stacklens::ui {

Histogram computeHistogram(const float* data, size_t count, int bins) {
  Histogram h;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < count; ++i)
    if (std::isfinite(data[i])) {
      lo = std::min<double>(lo, data[i]);
      hi = std::max<double>(hi, data[i]);
    }
  h.counts.assign(static_cast<size_t>(bins), 0.0);
  if (!(lo <= hi)) return h;
  if (hi == lo) hi = lo + 1;
  h.min = lo;
  h.max = hi;
  const double scale = bins / (hi - lo);
  for (size_t i = 0; i < count; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) continue;
    h.counts[std::min(static_cast<size_t>((v - lo) * scale), size_t(bins - 1))] += 1;
  }
  return h;
}

HistogramWidget::HistogramWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumHeight(90);
}

void HistogramWidget::setHistogram(Histogram h) {
  hist_ = std::move(h);
  update();
}

void HistogramWidget::setLimits(double low, double high) {
  if (low == low_ && high == high_) return;  // a colormap or scale change: nothing to redraw
  low_ = low;
  high_ = high;
  update();
}

void HistogramWidget::setLogCounts(bool on) {
  log_ = on;
  update();
}

QRectF HistogramWidget::plotArea() const { return QRectF(rect()).adjusted(6, 6, -6, -22); }

// The axis spans the data range and the limits, whichever is wider.
double HistogramWidget::valueAt(double x) const {
  const QRectF a = plotArea();
  const double lo = std::min(hist_.min, low_), hi = std::max(hist_.max, high_);
  return lo + (x - a.left()) / a.width() * (hi - lo);
}

double HistogramWidget::xOf(double value) const {
  const QRectF a = plotArea();
  const double lo = std::min(hist_.min, low_), hi = std::max(hist_.max, high_);
  return a.left() + (value - lo) / std::max(hi - lo, 1e-300) * a.width();
}

void HistogramWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const QRectF a = plotArea();
  double peak = 0;
  for (double c : hist_.counts) peak = std::max(peak, log_ ? std::log10(1 + c) : c);
  if (peak > 0 && !hist_.counts.empty()) {
    const double binWidth = (hist_.max - hist_.min) / hist_.counts.size();
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(120, 120, 140));
    for (size_t i = 0; i < hist_.counts.size(); ++i) {
      const double c = log_ ? std::log10(1 + hist_.counts[i]) : hist_.counts[i];
      const double x0 = xOf(hist_.min + i * binWidth), x1 = xOf(hist_.min + (i + 1) * binWidth);
      const double h = c / peak * a.height();
      p.drawRect(QRectF(x0, a.bottom() - h, std::max(1.0, x1 - x0), h));
    }
  }
  p.setPen(palette().text().color());
  p.setBrush(Qt::NoBrush);
  p.drawRect(a);
  // Limit markers: low in blue, high in orange, with their values.
  const QColor colours[2] = {QColor(40, 120, 255), QColor(255, 140, 0)};
  const double values[2] = {low_, high_};
  for (int i = 0; i < 2; ++i) {
    const double x = xOf(values[i]);
    p.setPen(QPen(colours[i], 2));
    p.drawLine(QPointF(x, a.top()), QPointF(x, a.bottom()));
    const QString text = QString::number(values[i], 'g', 6);
    // Low's label ends at its marker, high's starts there; both stay inside the widget.
    const double w = fontMetrics().horizontalAdvance(text) + 4;
    const double left = std::clamp(i == 0 ? x - w : x, 0.0, std::max(0.0, width() - w));
    p.drawText(QRectF(left, a.bottom() + 2, w, 18), Qt::AlignCenter, text);
  }
  p.setPen(palette().text().color());
  p.drawText(a.adjusted(4, 2, -4, 0), Qt::AlignTop | Qt::AlignRight,
             log_ ? tr("log counts") : tr("counts"));
}

void HistogramWidget::mousePressEvent(QMouseEvent* event) {
  const double x = event->position().x();
  const double dLow = std::abs(x - xOf(low_)), dHigh = std::abs(x - xOf(high_));
  dragging_ = dLow <= dHigh ? Marker::Low : Marker::High;
  mouseMoveEvent(event);
}

void HistogramWidget::mouseMoveEvent(QMouseEvent* event) {
  if (dragging_ == Marker::None) return;
  const double v = valueAt(event->position().x());
  if (dragging_ == Marker::Low)
    low_ = std::min(v, high_);
  else
    high_ = std::max(v, low_);
  update();
}

void HistogramWidget::mouseReleaseEvent(QMouseEvent*) {
  if (dragging_ == Marker::None) return;
  dragging_ = Marker::None;
  if (high_ > low_) emit limitsDragged(low_, high_);
}

}  // namespace stacklens::ui
