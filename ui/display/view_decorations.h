// What DS9 draws over an image besides the data: a colorbar with ticks in data units, the
// north/east compass, a scale bar (from the WCS or the pixel spacing) and a coordinate grid (RA/Dec
// from the WCS, or physical units from the spacing). Painted by the view in every frame when
// switched on (View ▸ Colorbar, Compass, Scale bar, Coordinate grid).
#pragma once

#include <QPointF>
#include <QString>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "compute/contours.h"
#include "io/stack.h"
#include "render/slice_view.h"
#include "ui/frame/viewer_tool.h"

namespace stacklens::ui {

// The unit vectors, in widget coordinates (y down), towards north and east at image point at of
// slice z, from the WCS's celestial axes (east is the direction of increasing longitude); none
// without a celestial WCS or where it has no value.
std::optional<std::pair<QPointF, QPointF>> compassDirections(const io::Wcs& wcs,
                                                             const render::SliceView& view,
                                                             QPointF at, double z);

// A coordinate grid: lines of constant longitude and latitude over the part of the image the
// view shows, each a list of widget-coordinate segments, at a "nice" step (1, 2, 5 × 10^n
// degrees, or 1, 2, 5, 10, 15, 30 arcmin or arcsec) that gives a few lines across the view.
struct GridLine {
  bool longitude = false;  // a line of constant longitude (else latitude)
  double value = 0;        // degrees
  QString label;           // e.g. "83.82°"
  std::vector<std::pair<QPointF, QPointF>> segments;
};
std::vector<GridLine> coordinateGrid(const io::Wcs& wcs, const render::SliceView& view, double z);

class ViewDecorations : public ViewerTool {
 public:
  explicit ViewDecorations(render::SliceView* view) : view_(view) {}
  ~ViewDecorations() { view_->setDecoration({}); }  // the view may paint once more
  ViewDecorations(const ViewDecorations&) = delete;
  ViewDecorations& operator=(const ViewDecorations&) = delete;
  // The stack whose WCS the compass follows (null: none) and the slice shown.
  void stackOpened(const OpenedStackView& stack) override { reader_ = stack.reader; }
  void sliceShown(const ShownSlice& slice) override { z_ = slice.z; }
  void setColorbar(bool on);
  void setCompass(bool on);
  void setGrid(bool on);
  void setScaleBar(bool on);
  // Contour lines in image coordinates (ui/display/contours_panel.h); empty: none.
  void setContours(std::vector<compute::ContourLine> lines);
  // A tool's own drawing over the view (regions, catalog markers, PSF stars), painted after the
  // contours and below the colorbar, in the order the keys sort; an empty function removes it.
  using Overlay = std::function<void(QPainter&, const render::SliceView&)>;
  void setOverlay(const QString& key, Overlay paint);
  bool hasOverlay(const QString& key) const { return overlays_.count(key) > 0; }
  bool colorbar() const { return colorbar_; }
  bool compass() const { return compass_; }
  bool grid() const { return grid_; }

  // Where the colorbar is drawn in the view (widget coordinates; its top is the high limit).
  static QRectF colorbarRect(const render::SliceView& view);
  // Where the scale bar's line starts (its left end, widget coordinates).
  static QPointF scaleBarOrigin(const render::SliceView& view);

 private:
  void install();
  void paint(QPainter& p, const render::SliceView& view) const;
  void paintColorbar(QPainter& p, const render::SliceView& view) const;
  void paintScaleBar(QPainter& p, const render::SliceView& view) const;
  void paintPhysicalGrid(QPainter& p, const render::SliceView& view) const;
  void paintContours(QPainter& p, const render::SliceView& view) const;

  render::SliceView* view_;
  std::shared_ptr<const io::StackReader> reader_;
  int z_ = 0;
  bool colorbar_ = false, compass_ = false, grid_ = false, scaleBar_ = false;
  std::vector<compute::ContourLine> contours_;
  std::map<QString, Overlay> overlays_;
};

}  // namespace stacklens::ui
