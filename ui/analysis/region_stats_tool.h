// The region statistics dock: npix, mean, median, std, sum, min and max of the pixels inside the
// rectangle or ellipse drawn with the region tools, or inside each part of the DS9 region chosen
// in the Regions panel (ring by ring, sector by sector, as DS9's statistics), for each slice
// once the slider rests.
#pragma once

#include <QDockWidget>
#include <QLabel>
#include <QObject>
#include <QRectF>
#include <QTimer>
#include <memory>
#include <optional>
#include <vector>

#include "io/ds9_regions.h"
#include "render/slice_view.h"
#include "ui/analysis/region_stats.h"
#include "ui/frame/viewer_tool.h"

namespace stacklens::ui {

class RegionStatsTool : public QObject, public ViewerTool {
  Q_OBJECT
 public:
  // Draws the region on view; the label goes in the window's dock.
  explicit RegionStatsTool(render::SliceView* view, QObject* parent = nullptr);

  QLabel* label() const { return label_; }
  // The drawn region's statistics, or the first part's of a DS9 region.
  const RegionStats& stats() const { return stats_; }
  // Every part of the DS9 region measured (empty while a drawn region is measured).
  const std::vector<RegionStats>& partStats() const { return partStats_; }
  // Raised when a region is drawn, and when a single image opens (nothing to profile in z).
  void setDock(QDockWidget* dock) { dock_ = dock; }
  void setRegion(QRectF rect, bool ellipse);  // shown and measured at once
  void regionDrawn(QRectF rect, bool ellipse) override;
  // A DS9 region measured part by part at once, until another is chosen or a region is drawn;
  // clearDs9Region() goes back to the drawn region.
  void setDs9Region(const io::PixelRegion& region);
  void clearDs9Region();
  void stackOpened(const OpenedStackView&) override;  // no region
  void sliceShown(const ShownSlice& slice) override;

 private:
  void measure();
  void measureDs9Region();
  // A plane shown from display levels (no slice in memory): the drawn region's box is read
  // from the file at full resolution on a worker and measured there.
  void measureFromFile();
  void showStats();

  render::SliceView* view_;
  QLabel* label_;
  QDockWidget* dock_ = nullptr;
  std::optional<QRectF> region_;
  bool ellipse_ = false;
  std::optional<io::PixelRegion> ds9_;
  RegionStats stats_;
  std::vector<RegionStats> partStats_;
  render::SliceData slice_;
  int z_ = 0, width_ = 0, height_ = 0;
  std::shared_ptr<const io::StackReader> reader_;
  bool fromFile_ = false;   // the shown slice is not in memory
  quint64 generation_ = 0;  // a later region or slice makes a read from the file stale
  QTimer rest_;
};

}  // namespace stacklens::ui
