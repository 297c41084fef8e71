// Analysis ▸ Catalog: a catalog (CSV, VOTable, FITS table; io/catalog.h) read off the GUI thread,
// its positions (sky through the WCS, or pixels) drawn over the view as circles, and cross-matched
// with the sources detected in the slice shown (compute/crossmatch.h): matched catalog rows in
// green, unmatched in red, unmatched sources in yellow, the matched table exported as CSV.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QThreadPool>
#include <QWidget>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "compute/crossmatch.h"
#include "compute/params.h"
#include "io/catalog.h"
#include "render/slice_view.h"
#include "ui/analysis/catalog_columns_dialog.h"

namespace stacklens::ui {

class MainWindow;
class ViewDecorations;

// What the catalog overlay draws, shared with the view's painter (a copy: it may paint after the
// panel is gone).
struct CatalogMarkers {
  std::vector<std::array<double, 2>> catalog;  // 0-based pixels; NaN: not drawn
  std::vector<std::array<double, 2>> sources;  // drawn only after a match
  // After a match: per catalog row / source, whether it matched.
  std::vector<bool> catalogMatched, sourceMatched;
  bool matched = false;
  double radius = 5;  // image pixels
  QColor colour;
};
void paintCatalogMarkers(QPainter& p, const render::SliceView& view, const CatalogMarkers& m);

class CatalogPanel : public QWidget {
  Q_OBJECT
 public:
  static constexpr const char* kOverlayKey = "catalog";
  // The match's colours (DS9's green, red and yellow).
  static QColor matchedColour() { return QColor(0, 255, 0); }
  static QColor unmatchedCatalogColour() { return QColor(255, 0, 0); }
  static QColor unmatchedSourceColour() { return QColor(255, 255, 0); }

  CatalogPanel(ViewDecorations* decorations, render::SliceView* view, QWidget* parent = nullptr);
  ~CatalogPanel() override;

  // Where the WCS of the stack shown is found (null: none), asked whenever positions are placed.
  void setWcsSource(std::function<const io::Wcs*()> source) { wcsSource_ = std::move(source); }
  // Another stack is shown (at slice z): positions placed again, the match dropped.
  void placeAgain(int z);

  // Reads a catalog on a worker, then asks for its columns (the dialog, preset from the guess)
  // unless columns are given; emits imported() or importFailed().
  void importFile(const QString& path, std::optional<CatalogColumns> columns = std::nullopt);
  // Applies a column choice to the catalog read (positions and markers).
  void setColumns(const CatalogColumns& columns);
  const CatalogColumns& columns() const { return columns_; }
  const io::CatalogTable* table() const { return table_.get(); }
  // Each row's 0-based pixel position (NaN where it has none) and how many have none.
  const std::vector<std::array<double, 2>>& positions() const { return positions_; }
  int skippedRows() const { return skipped_; }

  // The sources detected in slice z (-1: none); a match follows them when followSlice is on.
  void setSources(std::vector<compute::Source> sources, int z);
  // Match settings: radius in arcsec (needs a celestial WCS) or pixels.
  void setMatchRadius(double radius, bool arcsec);
  void setOneToOne(bool on);
  bool arcsecUnit() const;
  // Cross-matches the catalog with the sources on a worker; emits matched() later.
  void match();
  bool hasMatch() const { return matchZ_ >= 0; }
  const compute::CrossMatch& result() const { return result_; }
  QString counts() const { return counts_->text(); }  // "N matched, M catalog unmatched, …"
  // The matched rows: every catalog column, then the source's label, x, y (0-based), flux, peak,
  // sky position (with a celestial WCS) and the separation; written atomically. Error or "".
  QString exportMatched(const QString& path) const;
  QString status() const { return status_->text(); }

  // What the buttons do: ask for a file (or columns), then the functions above.
  void chooseAndImport();
  QDialog* chooseColumns();  // window-modal, deleted when closed; null without a catalog
  void chooseAndExport();

 signals:
  void imported(int rows);
  void importFailed(const QString& message);
  void matched(int z);  // result() holds the match with slice z's sources

 private:
  void place();
  void dropMatch();
  void redraw();
  void updateUnits();

  ViewDecorations* decorations_;
  render::SliceView* view_;
  QLabel* status_;
  QPushButton *columnsButton_, *match_, *export_;
  QDoubleSpinBox* radius_;
  QComboBox* unit_;
  QCheckBox *oneToOne_, *follow_;
  QLabel* counts_;
  QThreadPool pool_;
  quint64 importGeneration_ = 0, matchGeneration_ = 0;
  std::function<const io::Wcs*()> wcsSource_ = [] { return nullptr; };
  double z_ = 0;

  std::shared_ptr<const io::CatalogTable> table_;
  CatalogColumns columns_;
  std::vector<std::array<double, 2>> positions_;
  int skipped_ = 0;
  std::vector<compute::Source> sources_;
  int sourcesZ_ = -1;

  compute::CrossMatch result_;
  int matchZ_ = -1;
  bool matchWanted_ = false;  // Match was pressed: later source lists are matched too
  bool matchSky_ = false;     // result_'s separations are arcsec (else pixels)
  // The sources and their sky positions the result refers to (for the export).
  std::vector<compute::Source> matchedSources_;
};

// Adds Analysis ▸ Catalog… and Import catalog… to window (once; later calls return the panel),
// with the panel in a dock that stays hidden until one of them shows it, following the stacks
// opened and the sources of the processing dock's segmentation.
CatalogPanel* installCatalogTool(MainWindow* window);

}  // namespace stacklens::ui
