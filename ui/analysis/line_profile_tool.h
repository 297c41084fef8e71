// The line profile dock: values along the line drawn with the Line tool, sampled every pixel,
// redrawn for each slice once the slider rests.
#pragma once

#include <QDockWidget>
#include <QObject>
#include <QPointF>
#include <QTimer>
#include <optional>
#include <utility>

#include "render/slice_view.h"
#include "ui/analysis/plot_widget.h"
#include "ui/frame/viewer_tool.h"

namespace stacklens::ui {

class LineProfileTool : public QObject, public ViewerTool {
  Q_OBJECT
 public:
  // Draws the line on view; the plot goes in the window's dock.
  explicit LineProfileTool(render::SliceView* view, QObject* parent = nullptr);

  PlotWidget* plot() const { return plot_; }
  void setDock(QDockWidget* dock) { dock_ = dock; }  // raised when a line is drawn
  void setLine(QPointF from, QPointF to);            // shown and measured at once
  void lineDrawn(QPointF from, QPointF to) override;
  void stackOpened(const OpenedStackView&) override;  // no line
  void sliceShown(const ShownSlice& slice) override;

 private:
  void measure();

  render::SliceView* view_;
  PlotWidget* plot_;
  QDockWidget* dock_ = nullptr;
  std::optional<std::pair<QPointF, QPointF>> line_;
  render::SliceData slice_;
  int width_ = 0, height_ = 0;
  QTimer rest_;
};

}  // namespace stacklens::ui
