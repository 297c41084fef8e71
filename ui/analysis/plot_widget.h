// A small line plot (x/y axes with min/max labels) for the line and z profiles.
#pragma once

#include <QString>
#include <QWidget>
#include <vector>

namespace stacklens::ui {

class PlotWidget : public QWidget {
  Q_OBJECT
 public:
  explicit PlotWidget(QString xLabel, QWidget* parent = nullptr);
  // NaN values leave gaps. marker: an x position to mark with a vertical line (NaN: none).
  void setData(std::vector<double> x, std::vector<double> y, double marker = qQNaN());
  void setXLabel(const QString& label);
  const std::vector<double>& xs() const { return x_; }
  const std::vector<double>& ys() const { return y_; }
  double marker() const { return marker_; }
  QSize sizeHint() const override { return {320, 160}; }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  QString xLabel_;
  std::vector<double> x_, y_;
  double marker_ = qQNaN();
};

}  // namespace stacklens::ui
