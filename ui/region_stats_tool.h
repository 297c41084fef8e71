// The region statistics dock: npix, mean, median, std, sum, min and max of the pixels inside the
// rectangle or ellipse drawn with the region tools, for each slice once the slider rests.
#pragma once

#include <QLabel>
#include <QObject>
#include <QRectF>
#include <QTimer>
#include <optional>

#include "render/slice_view.h"
#include "ui/region_stats.h"
#include "ui/viewer_tool.h"

namespace stacklens::ui {

class RegionStatsTool : public QObject, public ViewerTool {
  Q_OBJECT
 public:
  // Draws the region on view; the label goes in the window's dock.
  explicit RegionStatsTool(render::SliceView* view, QObject* parent = nullptr);

  QLabel* label() const { return label_; }
  const RegionStats& stats() const { return stats_; }
  void setRegion(QRectF rect, bool ellipse);          // shown and measured at once
  void stackOpened(const OpenedStackView&) override;  // no region
  void sliceShown(const ShownSlice& slice) override;

 private:
  void measure();

  render::SliceView* view_;
  QLabel* label_;
  std::optional<QRectF> region_;
  bool ellipse_ = false;
  RegionStats stats_;
  render::SliceData slice_;
  int z_ = 0, width_ = 0, height_ = 0;
  QTimer rest_;
};

}  // namespace stacklens::ui
