// Analysis ▸ Regions: DS9 region files over the view — imported (every shape, image or sky
// coordinates through the WCS, read off the GUI thread), listed, selected (and measured),
// deleted, added from the rectangle or ellipse drawn with the view's tools, drawn as DS9 draws
// them (its colours, widths, dashes, point markers, text, every ring of an annulus and every
// sector of a panda) and exported in DS9's image frame.
#pragma once

#include <QColor>
#include <QLabel>
#include <QPainterPath>
#include <QPen>
#include <QPushButton>
#include <QRectF>
#include <QStringList>
#include <QTableWidget>
#include <QThreadPool>
#include <QWidget>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "io/ds9_regions.h"
#include "render/slice_view.h"

class QPainter;

namespace stacklens::ui {

class MainWindow;
class ViewDecorations;

// DS9's colour names (its green is #00ff00, not the SVG green) and #rrggbb; others: green.
QColor ds9Colour(const std::string& name);
// The pen a region is outlined with: its colour and width, dashed for dash=1 and for exclude
// regions; wider when selected.
QPen regionPen(const io::PixelRegion& region, bool selected = false);
// The outline of a region in widget coordinates of view (empty for points and text).
QPainterPath regionOutline(const io::PixelRegion& region, const render::SliceView& view);
// Draws regions over view as DS9 does: outlines, point markers (pointSize screen pixels), text
// labels above their shape, a red stroke across exclude regions; `selected` (index or -1) gets
// handles at its vertices or corners.
void paintRegions(QPainter& p, const render::SliceView& view,
                  const std::vector<io::PixelRegion>& regions, int selected);

class RegionsPanel : public QWidget {
  Q_OBJECT
 public:
  enum Column { Shape, Centre, Size, Text };
  static constexpr const char* kOverlayKey = "regions";

  RegionsPanel(ViewDecorations* decorations, render::SliceView* view, QWidget* parent = nullptr);
  ~RegionsPanel() override;

  // Where the WCS of the stack shown is found (null: none), asked whenever regions are placed.
  void setWcsSource(std::function<const io::Wcs*()> source) { wcsSource_ = std::move(source); }
  // The physical pixels (LTM/LTV) of the stack shown, for regions in DS9's physical coordinates.
  void setPhysicalSource(std::function<io::PhysicalToImage()> source) {
    physicalSource_ = std::move(source);
  }
  // Another stack is shown (at slice z): regions read from files are placed again through its
  // WCS; those it cannot place keep their pixels (with a warning).
  void placeAgain(int z);

  // Reads a DS9 region file on a worker and adds its regions to the list (DS9's Load does the
  // same); emits imported() and regionsEdited(), or importFailed().
  void importFile(const QString& path);
  // Writes the regions in DS9's image frame, atomically; returns an error or "".
  QString exportFile(const QString& path) const;

  // The undo/redo contract: the regions as they stand, and putting a list back (no signal).
  std::vector<io::PixelRegion> regions() const;
  void setRegions(std::vector<io::PixelRegion> regions);

  // The rectangle or ellipse last drawn on the view (image coordinates of the corner pixels'
  // centres, as SliceView::regionDrawn gives it); addDrawnRegion() makes it a box or an ellipse.
  void setDrawnRegion(QRectF rect, bool ellipse);
  bool addDrawnRegion();
  void select(int index);  // highlights it and centres the view on it (-1: none)
  int selected() const;
  void deleteSelected();
  void clear();

  QTableWidget* table() const { return table_; }
  QString status() const { return status_->text(); }
  const QStringList& warnings() const { return warnings_; }
  // What the Import and Export buttons do: ask for a file, then importFile() / exportFile().
  void chooseAndImport();
  void chooseAndExport();

 signals:
  // After every edit by the user (import, add, delete, clear), with what it did for an undo
  // step's name, e.g. "import 7 regions".
  void regionsEdited(const QString& what);
  void imported(int count);
  void importFailed(const QString& message);
  // The region chosen in the list (-1: none, also after the list changes): the window measures
  // it in the Region statistics dock.
  void regionSelected(int index);

 private:
  struct Entry {
    io::PixelRegion pixels;
    std::optional<io::Region> parsed;  // as read from a file: placed again for another WCS
  };
  void placeImported(const io::RegionFile& file, const QString& name);
  void edited(const QString& what);
  void refresh();  // the table and the drawing from entries_
  void redraw();

  ViewDecorations* decorations_;
  render::SliceView* view_;
  QTableWidget* table_;
  QLabel* status_;
  QPushButton *add_, *delete_, *clear_, *export_;
  QThreadPool pool_;
  quint64 generation_ = 0;
  std::vector<Entry> entries_;
  // Every region imported while this stack is shown, so that undo/redo (setRegions) keeps their
  // sky positions.
  std::vector<Entry> imported_;
  std::function<const io::Wcs*()> wcsSource_ = [] { return nullptr; };
  std::function<io::PhysicalToImage()> physicalSource_ = [] { return io::PhysicalToImage{}; };
  double z_ = 0;
  std::optional<std::pair<QRectF, bool>> drawn_;
  QStringList warnings_;
  bool updatingTable_ = false;
};

// Adds Analysis ▸ Regions… and Import DS9 regions… to window (once; later calls return the
// panel), with the panel in a dock that stays hidden until one of them shows it, following the
// stacks opened and the regions drawn on the view; the region chosen in the list is measured in
// the Region statistics dock.
RegionsPanel* installRegionsTool(MainWindow* window);

}  // namespace stacklens::ui
