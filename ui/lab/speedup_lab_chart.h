// The speedup lab's figure for one op (Qt Charts): time against size on log–log axes with a curve
// per variant, min–max bars, the bandwidth floors dashed and the break-even marked; below it the
// speedup over the all-threads CPU, with the line at 1; and one sentence on the curve's shape.
#pragma once

#include <QPointF>
#include <QWidget>

#include "compute/lab/sweep.h"

class QLabel;
QT_BEGIN_NAMESPACE
class QChart;
class QChartView;
class QLineSeries;
QT_END_NAMESPACE

namespace stacklens::ui {

class SpeedupLabChart : public QWidget {
  Q_OBJECT
 public:
  explicit SpeedupLabChart(QWidget* parent = nullptr);

  // Draws op from sweep (the points so far while a run goes on).
  void showOp(const compute::lab::Sweep& sweep, const QString& op);
  void clear();
  // Large fonts and thick lines for a projector.
  void setPresentation(bool on);
  bool presentation() const { return presentation_; }

  QLabel* explanation() const { return explanation_; }
  // Where (elements, seconds) of the time chart lies in this widget's coordinates; the curve of
  // variant name there (for tests and hit checks). Null when the variant is not drawn.
  QPointF timePosition(double elements, double seconds) const;
  QLineSeries* timeCurve(const QString& variant) const;
  // Fonts and pens of the presentation, read back by tests.
  double titlePointSize() const;
  double curveWidth() const;

 private:
  QChartView* timeView_;
  QChartView* speedupView_;
  QLabel* explanation_;
  bool presentation_ = false;
};

}  // namespace stacklens::ui
