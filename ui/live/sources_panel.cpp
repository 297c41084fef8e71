// The sources panel: table, background statistics, CSV and DS9 region files.
#include "ui/live/sources_panel.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QSaveFile>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace stacklens::ui {
namespace {

bool writeAtomically(const QString& path, const QString& text, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(text.toUtf8()) < 0 ||
      !file.commit()) {
    if (error) *error = QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

// Sorts by the number, not by the text shown.
class NumberItem : public QTableWidgetItem {
 public:
  using QTableWidgetItem::QTableWidgetItem;
  bool operator<(const QTableWidgetItem& other) const override {
    return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
  }
};

QTableWidgetItem* sortable(double v, int decimals) {
  auto* item = new NumberItem(decimals < 0 ? QString::number(qlonglong(v))
                                           : QString::number(v, 'f', decimals));
  item->setData(Qt::UserRole, v);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

SourcesPanel::SourcesPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  background_ = new QLabel(this);
  background_->setWordWrap(true);
  background_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  background_->setToolTip(
      tr("Kappa–sigma clipped statistics of the processed slice (astropy "
         "sigma_clip semantics: median centre, population σ)."));
  count_ = new QLabel(this);
  table_ = new QTableWidget(0, 7, this);
  table_->setHorizontalHeaderLabels(
      {tr("Label"), tr("x"), tr("y"), tr("World"), tr("Flux"), tr("Pixels"), tr("Peak")});
  table_->horizontalHeaderItem(X)->setToolTip(tr("Flux-weighted centroid, 0-based pixels"));
  table_->horizontalHeaderItem(Y)->setToolTip(tr("Flux-weighted centroid, 0-based pixels"));
  table_->horizontalHeaderItem(Flux)->setToolTip(tr("Σ (value − background median)"));
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSortingEnabled(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // Column widths from the first rows only: measuring thousands of rows per slice stalls the GUI.
  table_->horizontalHeader()->setResizeContentsPrecision(64);

  auto* buttons = new QHBoxLayout();
  auto* csv = new QPushButton(tr("Export CSV…"), this);
  auto* regions = new QPushButton(tr("Export DS9 regions…"), this);
  buttons->addWidget(count_, 1);
  buttons->addWidget(csv);
  buttons->addWidget(regions);
  layout->addWidget(background_);
  layout->addWidget(table_, 1);
  layout->addLayout(buttons);

  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) {
    const auto* x = table_->item(row, X);
    const auto* y = table_->item(row, Y);
    if (x && y)
      emit sourceActivated(
          QPointF(x->data(Qt::UserRole).toDouble(), y->data(Qt::UserRole).toDouble()));
  });
  connect(csv, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export sources"), "sources.csv", "CSV (*.csv)");
    QString error;
    if (!path.isEmpty() && !exportCsv(path, &error)) count_->setText(error);
  });
  connect(regions, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export DS9 regions"), "sources.reg",
                                                      "DS9 regions (*.reg)");
    QString error;
    if (!path.isEmpty() && !exportRegions(path, &error)) count_->setText(error);
  });
  clear();
}

void SourcesPanel::clear() {
  rows_.clear();
  z_ = -1;
  table_->setRowCount(0);
  count_->setText(tr("No segmentation (enable it in the processing dock)."));
  background_->setText(tr("Background: —"));
  emit sourcesShown(-1);
}

void SourcesPanel::showBackground(const compute::ClipStats& stats, int z) {
  background_->setText(tr("Background of slice %1 (σ-clipped): median %2, σ %3, %4 iterations, "
                          "%5 of %6 pixels kept")
                           .arg(z)
                           .arg(stats.clipped.median, 0, 'g', 6)
                           .arg(stats.clipped.std, 0, 'g', 4)
                           .arg(stats.iterations)
                           .arg(stats.clipped.n)
                           .arg(stats.all.n));
}

std::vector<compute::Source> SourcesPanel::sources() const {
  std::vector<compute::Source> out;
  out.reserve(rows_.size());
  for (const Row& row : rows_) out.push_back(row.source);
  return out;
}

void SourcesPanel::showSources(const std::vector<compute::Source>& sources, int z,
                               const io::Wcs* wcs) {
  rows_.clear();
  z_ = z;
  const bool sky = wcs && wcs->hasCelestial();
  for (const auto& s : sources) {
    Row row{s, {}};
    if (sky) row.world = QString::fromStdString(wcs->formatCelestial(s.centroidX, s.centroidY, z));
    rows_.push_back(std::move(row));
  }
  // A table of many thousand rows would stall the GUI thread on every slice: it shows the
  // brightest kMaxRows; the exports hold them all.
  std::vector<const Row*> shown;
  for (const auto& row : rows_) shown.push_back(&row);
  if (shown.size() > kMaxRows) {
    std::partial_sort(shown.begin(), shown.begin() + kMaxRows, shown.end(),
                      [](const Row* a, const Row* b) { return a->source.flux > b->source.flux; });
    shown.resize(kMaxRows);
  }
  // Fill first, then let the header sort and size the columns once: sorting or a
  // ResizeToContents header would otherwise react to every one of the thousands of setItem calls
  // (seconds for 2000 rows).
  QHeaderView* header = table_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  table_->setSortingEnabled(false);
  table_->setUpdatesEnabled(false);
  table_->setRowCount(int(shown.size()));
  for (int r = 0; r < int(shown.size()); ++r) {
    const auto& s = shown[r]->source;
    table_->setItem(r, Label, sortable(s.label, -1));
    table_->setItem(r, X, sortable(s.centroidX, 2));
    table_->setItem(r, Y, sortable(s.centroidY, 2));
    table_->setItem(r, World, new QTableWidgetItem(sky ? shown[r]->world : tr("(no WCS)")));
    table_->setItem(r, Flux, sortable(s.flux, 3));
    table_->setItem(r, Npix, sortable(double(s.npix), -1));
    table_->setItem(r, Peak, sortable(s.peak, 3));
  }
  table_->setSortingEnabled(true);
  table_->setColumnHidden(World, !sky);
  table_->setUpdatesEnabled(true);
  header->setSectionResizeMode(QHeaderView::ResizeToContents);
  count_->setText(rows_.size() > kMaxRows
                      ? tr("%1 sources in slice %2; the table shows the %3 brightest")
                            .arg(rows_.size())
                            .arg(z)
                            .arg(kMaxRows)
                      : tr("%n source(s) in slice %1", nullptr, int(rows_.size())).arg(z));
  emit sourcesShown(z);
}

QString SourcesPanel::asCsv() const {
  QString out = "label,z,x,y,world,flux,npix,peak,peak_x,peak_y,x_min,x_max,y_min,y_max\n";
  for (const auto& row : rows_) {
    const auto& s = row.source;
    QString world = row.world;
    world.replace('"', "\"\"");
    out += QStringList{QString::number(s.label),
                       QString::number(z_),
                       QString::number(s.centroidX, 'g', 10),
                       QString::number(s.centroidY, 'g', 10),
                       "\"" + world + "\"",
                       QString::number(s.flux, 'g', 10),
                       QString::number(s.npix),
                       QString::number(s.peak, 'g', 8),
                       QString::number(s.peakX),
                       QString::number(s.peakY),
                       QString::number(s.xMin),
                       QString::number(s.xMax),
                       QString::number(s.yMin),
                       QString::number(s.yMax)}
               .join(',') +
           "\n";
  }
  return out;
}

QString SourcesPanel::ds9Regions() const {
  QString out = "# Region file format: DS9 version 4.1\n";
  out += QString("# StackLens sources of slice %1\n").arg(z_);
  out += "global color=green width=1\nimage\n";
  for (const auto& row : rows_) {
    const auto& s = row.source;
    // Area-equivalent radius, at least 2 pixels so small sources stay visible.
    const double radius = std::max(2.0, std::sqrt(double(s.npix) / M_PI));
    out += QString("circle(%1,%2,%3) # text={%4}\n")
               .arg(s.centroidX + 1.0, 0, 'f', 3)
               .arg(s.centroidY + 1.0, 0, 'f', 3)
               .arg(radius, 0, 'f', 2)
               .arg(s.label);
  }
  return out;
}

bool SourcesPanel::exportCsv(const QString& path, QString* error) const {
  return writeAtomically(path, asCsv(), error);
}

bool SourcesPanel::exportRegions(const QString& path, QString* error) const {
  return writeAtomically(path, ds9Regions(), error);
}

}  // namespace stacklens::ui
