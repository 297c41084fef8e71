// Paints a line plot with QPainter.
#include "ui/analysis/plot_widget.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace stacklens::ui {

PlotWidget::PlotWidget(QString xLabel, QWidget* parent)
    : QWidget(parent), xLabel_(std::move(xLabel)) {
  setMinimumHeight(100);
}

void PlotWidget::setData(std::vector<double> x, std::vector<double> y, double marker) {
  x_ = std::move(x);
  y_ = std::move(y);
  marker_ = marker;
  update();
}

void PlotWidget::setXLabel(const QString& label) {
  xLabel_ = label;
  update();
}

void PlotWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (size_t i = 0; i < std::min(x_.size(), y_.size()); ++i) {
    if (!std::isfinite(y_[i])) continue;
    xmin = std::min(xmin, x_[i]);
    xmax = std::max(xmax, x_[i]);
    ymin = std::min(ymin, y_[i]);
    ymax = std::max(ymax, y_[i]);
  }
  const QFontMetrics fm(font());
  auto label = [](double v) { return QString::number(v, 'g', 5); };
  // The left margin fits the wider of the y labels.
  const bool any = xmin <= xmax;
  const double margin =
      any ? std::max(fm.horizontalAdvance(label(ymin)), fm.horizontalAdvance(label(ymax))) + 10.0
          : 10.0;
  const QRectF area = QRectF(rect()).adjusted(margin, 8, -10, -30);
  p.setPen(palette().text().color());
  p.drawRect(area);
  p.drawText(QRectF(area.left(), area.bottom() + 4, area.width(), 20), Qt::AlignHCenter, xLabel_);
  if (!any) {
    p.drawText(area, Qt::AlignCenter, tr("no data"));
    return;
  }
  if (xmax == xmin) xmax = xmin + 1;
  if (ymax == ymin) ymax = ymin + 1;
  p.drawText(QRectF(0, area.top() - 2, area.left() - 4, fm.height()), Qt::AlignRight, label(ymax));
  p.drawText(QRectF(0, area.bottom() - fm.height(), area.left() - 4, fm.height()), Qt::AlignRight,
             label(ymin));
  p.drawText(QRectF(area.left(), area.bottom() + 4, 100, 20), Qt::AlignLeft, label(xmin));
  p.drawText(QRectF(area.right() - 100, area.bottom() + 4, 100, 20), Qt::AlignRight, label(xmax));
  auto toScreen = [&](double x, double y) {
    return QPointF(area.left() + (x - xmin) / (xmax - xmin) * area.width(),
                   area.bottom() - (y - ymin) / (ymax - ymin) * area.height());
  };
  QPainterPath path;
  bool penDown = false;
  for (size_t i = 0; i < std::min(x_.size(), y_.size()); ++i) {
    if (!std::isfinite(y_[i])) {
      penDown = false;
      continue;
    }
    const QPointF s = toScreen(x_[i], y_[i]);
    if (penDown)
      path.lineTo(s);
    else
      path.moveTo(s);
    penDown = true;
  }
  p.setRenderHint(QPainter::Antialiasing);
  p.setClipRect(area.adjusted(-1, -1, 1, 1));
  p.setPen(QPen(QColor(40, 140, 255), 1.5));
  p.drawPath(path);
  if (std::isfinite(marker_)) {
    p.setPen(QPen(QColor(0, 200, 100), 1, Qt::DashLine));
    const double sx = toScreen(marker_, ymin).x();
    p.drawLine(QPointF(sx, area.top()), QPointF(sx, area.bottom()));
  }
}

}  // namespace stacklens::ui
