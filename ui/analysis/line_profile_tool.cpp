// While scrubbing, the profile waits until the slider rests for 100 ms.
#include "ui/analysis/line_profile_tool.h"

#include "ui/analysis/profiles.h"

namespace stacklens::ui {

LineProfileTool::LineProfileTool(render::SliceView* view, QObject* parent)
    : QObject(parent), view_(view), plot_(new PlotWidget(tr("distance along the line (pixels)"))) {
  rest_.setSingleShot(true);
  rest_.setInterval(100);
  connect(&rest_, &QTimer::timeout, this, &LineProfileTool::measure);
}

void LineProfileTool::lineDrawn(QPointF from, QPointF to) {
  setLine(from, to);
  if (dock_) dock_->raise();
}

void LineProfileTool::setLine(QPointF from, QPointF to) {
  line_ = std::make_pair(from, to);
  view_->setLine(line_);
  measure();
}

void LineProfileTool::sliceShown(const ShownSlice& shown) {
  slice_ = shown.data;
  width_ = shown.width;
  height_ = shown.height;
  if (line_) rest_.start();
}

void LineProfileTool::stackOpened(const OpenedStackView&) {
  line_.reset();
  slice_.reset();
  view_->setLine(std::nullopt);
  plot_->setData({}, {});
}

void LineProfileTool::measure() {
  if (!line_ || !slice_) return;
  LineProfile p = lineProfile(slice_->data(), width_, height_, line_->first, line_->second);
  plot_->setData(std::move(p.distance), std::move(p.value));
}

}  // namespace stacklens::ui
