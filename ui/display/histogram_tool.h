// The histogram dock: the shown slice's histogram made on a worker once the slider rests (a big
// slice's histogram costs more than a frame), only while the dock is visible, with the display
// limits marked and draggable.
#pragma once

#include <QDockWidget>
#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include "render/slice_view.h"
#include "ui/display/histogram_widget.h"
#include "ui/frame/viewer_tool.h"

namespace stacklens::ui {

class HistogramTool : public QObject, public ViewerTool {
  Q_OBJECT
 public:
  // Reads run on pool; the widget (histogram and a "Log counts" box) goes in the window's dock.
  HistogramTool(QThreadPool* pool, QObject* parent = nullptr);

  QWidget* widget() const { return box_; }
  HistogramWidget* histogram() const { return histogram_; }
  // The dock it lives in: the histogram is made when the dock shows.
  void setDock(QDockWidget* dock);
  void stackOpened(const OpenedStackView&) override {}
  // Its histogram follows when the slider rests.
  void sliceShown(const ShownSlice& slice) override;
  void setLimits(float low, float high) { histogram_->setLimits(low, high); }
  void displayChanged(const render::DisplaySettings& display) override {
    setLimits(display.limits.low, display.limits.high);
  }
  void update();  // now (when visible)

 signals:
  void updated();
  void limitsDragged(double low, double high);

 private:
  QThreadPool* pool_;
  QWidget* box_;
  HistogramWidget* histogram_;
  QDockWidget* dock_ = nullptr;
  render::SliceData slice_;
  QTimer rest_;
  quint64 generation_ = 0;
};

}  // namespace stacklens::ui
