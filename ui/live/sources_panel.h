// The sources panel: the current slice's segmented sources in a sortable table (with sky
// coordinates when the file has a WCS), the sigma-clipped background, CSV and DS9 region export.
#pragma once

#include <QLabel>
#include <QPointF>
#include <QTableWidget>
#include <QWidget>

#include "compute/params.h"
#include "io/wcs.h"

namespace stacklens::ui {

class SourcesPanel : public QWidget {
  Q_OBJECT
 public:
  enum Column { Label, X, Y, World, Flux, Npix, Peak };
  static constexpr size_t kMaxRows = 2000;  // rows in the table (exports hold every source)

  explicit SourcesPanel(QWidget* parent = nullptr);

  // Shows the sources of slice z; wcs (may be null) is used only during the call.
  void showSources(const std::vector<compute::Source>& sources, int z, const io::Wcs* wcs);
  // Clipped median, σ and iterations of slice z ("" clears).
  void showBackground(const compute::ClipStats& stats, int z);
  void clear();

  QTableWidget* table() const { return table_; }
  // Every source of the slice shown (not only the table's rows) and that slice (-1: none).
  std::vector<compute::Source> sources() const;
  int slice() const { return z_; }
  QString background() const { return background_->text(); }
  QString asCsv() const;
  QString ds9Regions() const;  // DS9 4.1 "image" circles, 1-based pixel coordinates
  bool exportCsv(const QString& path, QString* error = nullptr) const;
  bool exportRegions(const QString& path, QString* error = nullptr) const;

 signals:
  // A row was clicked: centre the view on this 0-based pixel position.
  void sourceActivated(QPointF pixel);
  // New sources are shown (slice z), or cleared (z = -1).
  void sourcesShown(int z);

 private:
  struct Row {
    compute::Source source;
    QString world;
  };
  std::vector<Row> rows_;
  int z_ = -1;
  QLabel* background_;
  QLabel* count_;
  QTableWidget* table_;
};

}  // namespace stacklens::ui
