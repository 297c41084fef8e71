// The histogram of the shown slice with draggable low/high limit markers and log counts.
#pragma once

#include <QWidget>
#include <vector>

namespace stacklens::ui {

struct Histogram {
  double min = 0, max = 1;     // range of the bins
  std::vector<double> counts;  // equal-width bins over [min, max]
};
// Histogram of the finite values of data over their full range.
Histogram computeHistogram(const float* data, size_t count, int bins = 256);

class HistogramWidget : public QWidget {
  Q_OBJECT
 public:
  explicit HistogramWidget(QWidget* parent = nullptr);
  void setHistogram(Histogram h);
  void setLimits(double low, double high);
  void setLogCounts(bool on);
  bool logCounts() const { return log_; }
  double low() const { return low_; }
  double high() const { return high_; }
  // Data value at widget x (for tests and dragging).
  double valueAt(double x) const;
  double xOf(double value) const;
  QSize sizeHint() const override { return {320, 150}; }

 signals:
  void limitsDragged(double low, double high);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  QRectF plotArea() const;
  Histogram hist_;
  double low_ = 0, high_ = 1;
  bool log_ = true;
  enum class Marker { None, Low, High } dragging_ = Marker::None;
};

}  // namespace stacklens::ui
