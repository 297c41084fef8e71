#include "ui/analysis/catalog_panel.h"
#include "ui/analysis/analysis_dock.h"
#include "ui/frame/future_result.h"

#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QMenu>
#include <QPainter>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "ui/display/view_decorations.h"
#include "ui/frame/main_window.h"
#include "ui/live/live_processing.h"
#include "ui/live/sources_panel.h"

namespace stacklens::ui {
namespace {

bool finite(const std::array<double, 2>& p) { return std::isfinite(p[0]) && std::isfinite(p[1]); }

QString columnLabel(const io::CatalogTable& t, size_t k) {
  const QString name = QString::fromStdString(t.columns[k]);
  return k < t.units.size() && !t.units[k].empty()
             ? QString("%1 [%2]").arg(name, QString::fromStdString(t.units[k]))
             : name;
}

}  // namespace

void paintCatalogMarkers(QPainter& p, const render::SliceView& view, const CatalogMarkers& m) {
  const QPointF o = view.imageToWidget({0, 0});
  const QPointF ex = view.imageToWidget({1, 0}) - o, ey = view.imageToWidget({0, 1}) - o;
  // Circles of the marker radius in image pixels, never smaller than 3 screen pixels.
  const double rx = std::max(3.0, m.radius * std::hypot(ex.x(), ex.y()));
  const double ry = std::max(3.0, m.radius * std::hypot(ey.x(), ey.y()));
  const QRectF visible = QRectF(0, 0, view.width(), view.height()).adjusted(-rx, -ry, rx, ry);
  p.save();
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setBrush(Qt::NoBrush);
  for (size_t k = 0; k < m.catalog.size(); ++k) {
    if (!finite(m.catalog[k])) continue;
    const QPointF c = view.imageToWidget({m.catalog[k][0], m.catalog[k][1]});
    if (!visible.contains(c)) continue;
    QColor colour = m.colour;
    if (m.matched)
      colour = k < m.catalogMatched.size() && m.catalogMatched[k]
                   ? CatalogPanel::matchedColour()
                   : CatalogPanel::unmatchedCatalogColour();
    p.setPen(QPen(colour, 1));
    p.drawEllipse(c, rx, ry);
  }
  if (m.matched) {  // the sources as crosses, so that they read apart from the catalog's circles
    for (size_t k = 0; k < m.sources.size(); ++k) {
      const QPointF c = view.imageToWidget({m.sources[k][0], m.sources[k][1]});
      if (!visible.contains(c)) continue;
      const bool hit = k < m.sourceMatched.size() && m.sourceMatched[k];
      p.setPen(
          QPen(hit ? CatalogPanel::matchedColour() : CatalogPanel::unmatchedSourceColour(), 1));
      p.drawLine(QPointF(c.x() - 4, c.y()), QPointF(c.x() + 4, c.y()));
      p.drawLine(QPointF(c.x(), c.y() - 4), QPointF(c.x(), c.y() + 4));
    }
  }
  p.restore();
}

CatalogPanel::CatalogPanel(ViewDecorations* decorations, render::SliceView* view, QWidget* parent)
    : QWidget(parent), decorations_(decorations), view_(view) {
  pool_.setMaxThreadCount(1);
  auto* importButton = new QPushButton(tr("Import catalog…"));
  columnsButton_ = new QPushButton(tr("Columns…"));
  status_ = new QLabel(tr("No catalog"));
  status_->setWordWrap(true);
  radius_ = new QDoubleSpinBox;
  radius_->setRange(0.01, 3600);
  radius_->setDecimals(2);
  radius_->setValue(5);
  unit_ = new QComboBox;
  unit_->addItems({tr("arcsec"), tr("pixels")});
  oneToOne_ = new QCheckBox(tr("One-to-one"));
  oneToOne_->setToolTip(tr("Each source matches at most one catalog row, the closest pairs first"));
  follow_ = new QCheckBox(tr("Follow slice"));
  follow_->setChecked(true);
  follow_->setToolTip(tr("Match again whenever the sources of another slice are shown"));
  match_ = new QPushButton(tr("Match"));
  counts_ = new QLabel;
  counts_->setWordWrap(true);
  export_ = new QPushButton(tr("Export matched table…"));

  auto* files = new QHBoxLayout;
  files->addWidget(importButton);
  files->addWidget(columnsButton_);
  auto* radiusRow = new QHBoxLayout;
  radiusRow->addWidget(radius_, 1);
  radiusRow->addWidget(unit_);
  auto* group = new QGroupBox(tr("Cross-match with the detected sources"));
  auto* form = new QFormLayout(group);
  form->addRow(tr("Radius:"), radiusRow);
  form->addRow(oneToOne_);
  form->addRow(follow_);
  form->addRow(match_);
  form->addRow(counts_);
  form->addRow(export_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(files);
  layout->addWidget(status_);
  layout->addWidget(group);
  layout->addStretch(1);

  connect(importButton, &QPushButton::clicked, this, &CatalogPanel::chooseAndImport);
  connect(columnsButton_, &QPushButton::clicked, this, &CatalogPanel::chooseColumns);
  connect(match_, &QPushButton::clicked, this, &CatalogPanel::match);
  connect(export_, &QPushButton::clicked, this, &CatalogPanel::chooseAndExport);
  columnsButton_->setEnabled(false);
  match_->setEnabled(false);
  export_->setEnabled(false);
  updateUnits();
}

// The decorations are not touched here: the window destroys them before its docks, and the
// overlay holds its own copy of the markers.
CatalogPanel::~CatalogPanel() {
  ++importGeneration_;
  ++matchGeneration_;
  pool_.waitForDone();
}

void CatalogPanel::placeAgain(int z) {
  z_ = z;
  place();
}

void CatalogPanel::importFile(const QString& path, std::optional<CatalogColumns> columns) {
  const quint64 generation = ++importGeneration_;
  status_->setText(tr("Reading %1…").arg(QFileInfo(path).fileName()));
  const std::string file = path.toStdString();
  whenDone(
      this,
      QtConcurrent::run(
          &pool_,
          [file] { return std::make_shared<const io::CatalogTable>(io::readCatalog(file)); }),
      [this, generation, columns](std::shared_ptr<const io::CatalogTable> table) {
        if (generation != importGeneration_) return;
        table_ = std::move(table);
        matchWanted_ = false;
        CatalogColumns choice = columns_;
        static_cast<compute::CatalogPositions&>(choice) =
            compute::guessCatalogPositions(*table_, columns_);
        columnsButton_->setEnabled(true);
        if (columns) {
          setColumns(*columns);
        } else {
          setColumns(choice);  // drawn with the guess while the dialog is open
          if (QDialog* dialog = chooseColumns())
            connect(dialog, &QDialog::rejected, this, [this, generation] {
              if (generation != importGeneration_) return;
              table_.reset();  // a cancelled import loads nothing, as in DS9
              columnsButton_->setEnabled(false);
              place();
              status_->setText(tr("No catalog"));
            });
        }
        emit imported(int(table_->cells.size()));
      },
      [this, generation, path](const std::exception& e) {
        if (generation != importGeneration_) return;
        const QString message = QString::fromUtf8(e.what());
        status_->setText(tr("Cannot read %1: %2").arg(QFileInfo(path).fileName(), message));
        emit importFailed(message);
      });
}

void CatalogPanel::setColumns(const CatalogColumns& columns) {
  columns_ = columns;
  place();
}

void CatalogPanel::place() {
  dropMatch();
  positions_.clear();
  skipped_ = 0;
  if (!table_) {
    redraw();
    return;
  }
  const io::CatalogTable& t = *table_;
  const size_t rows = t.cells.size();
  const CatalogColumns& c = columns_;
  compute::CatalogPlacement placed = compute::placeCatalog(t, c, wcsSource_(), z_);
  positions_ = std::move(placed.pixels);
  skipped_ = int(placed.skipped);
  const bool placeable = placed.placeable;
  QString text =
      tr("<b>%1</b>: %2 rows").arg(QString::fromStdString(t.name).toHtmlEscaped()).arg(rows);
  if (!c.valid())
    text += tr(", no position columns chosen");
  else if (!placeable)
    text += tr(", not drawn: the image has no celestial WCS");
  else if (skipped_ > 0)
    text += tr(", %1 without a position (skipped)").arg(skipped_);
  if (!t.note.empty()) text += "<br>" + QString::fromStdString(t.note).toHtmlEscaped();
  status_->setText(text);
  match_->setEnabled(placeable);
  updateUnits();
  redraw();
}

void CatalogPanel::setSources(std::vector<compute::Source> sources, int z) {
  sources_ = std::move(sources);
  sourcesZ_ = z;
  if (!matchWanted_ || !follow_->isChecked()) return;
  if (z < 0) {
    dropMatch();
    counts_->setText(tr("No sources in the slice shown"));
    redraw();
  } else {
    match();
  }
}

void CatalogPanel::setMatchRadius(double radius, bool arcsec) {
  radius_->setValue(radius);
  unit_->setCurrentIndex(arcsec ? 0 : 1);
}
void CatalogPanel::setOneToOne(bool on) { oneToOne_->setChecked(on); }

bool CatalogPanel::arcsecUnit() const { return unit_->currentIndex() == 0 && unit_->isEnabled(); }

// Arcseconds need a celestial WCS: without one the radius is in pixels.
void CatalogPanel::updateUnits() {
  const io::Wcs* wcs = wcsSource_();
  const bool celestial = wcs && wcs->hasCelestial();
  unit_->setEnabled(celestial);
  if (!celestial) unit_->setCurrentIndex(1);
}

void CatalogPanel::match() {
  if (!table_ || positions_.empty()) {
    counts_->setText(tr("No catalog"));
    return;
  }
  matchWanted_ = true;
  if (sourcesZ_ < 0) {
    counts_->setText(tr("No sources: turn on segmentation in the processing dock"));
    return;
  }
  const int width = view_ ? view_->sliceWidth() : 0, height = view_ ? view_->sliceHeight() : 0;
  compute::CatalogPlacement placed;
  placed.pixels = positions_;
  placed.z = z_;
  compute::CatalogMatchInput input = compute::catalogMatchInput(
      *table_, columns_, placed, wcsSource_(), width, height, sources_, sourcesZ_,
      {radius_->value(), arcsecUnit(), oneToOne_->isChecked()});
  const quint64 generation = ++matchGeneration_;
  counts_->setText(tr("Matching…"));
  whenDone(
      this,
      QtConcurrent::run(
          &pool_,
          [input = std::move(input)]() mutable { return compute::matchCatalog(std::move(input)); }),
      [this, generation](compute::CatalogMatch match) {
        if (generation != matchGeneration_) return;
        result_ = std::move(match.result);
        matchZ_ = int(match.sourcesZ);
        matchSky_ = match.sky;
        matchedSources_ = std::move(match.sources);
        const int64_t outside = match.outsideImage;
        const size_t catalogUnmatched = result_.unmatchedA.size() - size_t(outside);
        QString text = tr("%1 matched, %2 catalog unmatched, %3 sources unmatched")
                           .arg(result_.matched.size())
                           .arg(catalogUnmatched)
                           .arg(result_.unmatchedB.size());
        if (outside > 0) text += tr(" (%1 catalog rows not on the image)").arg(outside);
        counts_->setText(text);
        export_->setEnabled(!result_.matched.empty());
        redraw();
        emit matched(matchZ_);
      },
      [this](const std::exception& e) {
        counts_->setText(tr("Match failed: %1").arg(QString::fromUtf8(e.what())));
      });
}

void CatalogPanel::dropMatch() {
  ++matchGeneration_;
  result_ = {};
  matchZ_ = -1;
  matchedSources_.clear();
  counts_->clear();
  export_->setEnabled(false);
}

QString CatalogPanel::exportMatched(const QString& path) const {
  if (!table_ || !hasMatch()) return tr("No match to export");
  compute::CatalogMatch match;
  match.result = result_;
  match.sky = matchSky_;
  match.sources = matchedSources_;
  match.sourcesZ = matchZ_;
  const io::CatalogTable out = compute::matchedTable(*table_, match, wcsSource_());
  try {
    io::writeCsv(out, path.toStdString());  // a temporary renamed into place
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

void CatalogPanel::redraw() {
  if (!decorations_) return;
  if (positions_.empty()) {
    decorations_->setOverlay(kOverlayKey, {});
  } else {
    auto markers = std::make_shared<CatalogMarkers>();
    markers->catalog = positions_;
    markers->radius = columns_.markerRadius;
    markers->colour = columns_.colour;
    if (hasMatch()) {
      markers->matched = true;
      markers->catalogMatched.assign(positions_.size(), false);
      markers->sourceMatched.assign(matchedSources_.size(), false);
      for (const compute::Match& m : result_.matched) {
        markers->catalogMatched[size_t(m.a)] = true;
        markers->sourceMatched[size_t(m.b)] = true;
      }
      for (const compute::Source& s : matchedSources_)
        markers->sources.push_back({s.centroidX, s.centroidY});
    }
    decorations_->setOverlay(kOverlayKey,
                             [markers = std::shared_ptr<const CatalogMarkers>(markers)](
                                 QPainter& p, const render::SliceView& view) {
                               paintCatalogMarkers(p, view, *markers);
                             });
  }
  if (view_) view_->scheduleFrame();
}

void CatalogPanel::chooseAndImport() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Import catalog"), QString(),
      tr("Catalogs (*.csv *.tsv *.txt *.dat *.tbl *.xml *.vot *.fits *.fit *.fits.gz);;"
         "All files (*)"));
  if (!path.isEmpty()) importFile(path);
}

QDialog* CatalogPanel::chooseColumns() {
  if (!table_) return nullptr;
  QStringList names;
  for (size_t k = 0; k < table_->columns.size(); ++k) names << columnLabel(*table_, k);
  auto* dialog =
      new CatalogColumnsDialog(QString::fromStdString(table_->name), names, columns_, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog] { setColumns(dialog->choice()); });
  dialog->open();
  return dialog;
}

void CatalogPanel::chooseAndExport() {
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export the matched table"),
      table_ ? QString::fromStdString(table_->name) + "_matched.csv" : QString(),
      tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  const QString error = exportMatched(path);
  if (!error.isEmpty())
    counts_->setText(counts_->text() + "\n" + tr("Export failed: %1").arg(error));
}

CatalogPanel* installCatalogTool(MainWindow* window) {
  if (auto* existing = window->findChild<CatalogPanel*>()) return existing;
  auto* panel = new CatalogPanel(window->tool<ViewDecorations>(), window->sliceView());
  addAnalysisDock(window, panel,
                  {QObject::tr("Catalog"), "catalogToolDock", QObject::tr("&Catalog…"),
                   QObject::tr("Import &catalog…")},
                  [panel] { panel->chooseAndImport(); });
  panel->setWcsSource(
      [window]() -> const io::Wcs* { return window->stack() ? window->stack()->wcs() : nullptr; });
  SourcesPanel* sources = window->tool<LiveProcessing>()->sourcesPanel();
  QObject::connect(window, &MainWindow::stackOpened, panel,
                   [panel, window] { panel->placeAgain(window->slicePath()->currentZ()); });
  QObject::connect(sources, &SourcesPanel::sourcesShown, panel,
                   [panel, sources](int z) { panel->setSources(sources->sources(), z); });
  if (window->stack()) panel->placeAgain(window->slicePath()->currentZ());
  panel->setSources(sources->sources(), sources->slice());
  return panel;
}

}  // namespace stacklens::ui
