#include "ui/analysis/regions_panel.h"
#include "ui/analysis/analysis_dock.h"
#include "ui/frame/future_result.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFont>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMenu>
#include <QPainter>
#include <QSaveFile>
#include <QTransform>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

#include "io/region_placement.h"

#include "ui/analysis/region_outline.h"
#include "ui/analysis/region_stats_tool.h"
#include "ui/display/view_decorations.h"
#include "ui/frame/main_window.h"

namespace stacklens::ui {
namespace {

using io::RegionShape;

// The affine map from image to widget coordinates that the view applies (pixel centres at
// integers, y flipped when row 0 is at the bottom).
QTransform imageToWidget(const render::SliceView& view) {
  const QPointF o = view.imageToWidget({0, 0});
  const QPointF ex = view.imageToWidget({1, 0}) - o, ey = view.imageToWidget({0, 1}) - o;
  return QTransform(ex.x(), ex.y(), ey.x(), ey.y(), o.x(), o.y());
}

QPointF point(const std::array<double, 2>& p) { return {p[0], p[1]}; }

QPointF centreOf(const io::PixelRegion& r) {
  if (r.points.empty()) return {};
  if (r.shape == RegionShape::Polygon || r.shape == RegionShape::Line) {
    QPointF sum;
    for (const auto& p : r.points) sum += point(p);
    return sum / double(r.points.size());
  }
  return point(r.points.front());
}

double sizeAt(const io::PixelRegion& r, size_t k) { return k < r.sizes.size() ? r.sizes[k] : 0; }

QFont ds9Font(const std::string& spec) {
  // "helvetica 10 normal roman": family, size in points, weight, slant.
  const QStringList parts = QString::fromStdString(spec).split(' ', Qt::SkipEmptyParts);
  QFont font(parts.value(0, "helvetica"));
  bool ok = false;
  const int size = parts.value(1).toInt(&ok);
  font.setPointSize(ok && size > 0 ? size : 10);
  font.setBold(parts.contains("bold"));
  font.setItalic(parts.contains("italic"));
  return font;
}

// DS9's point markers, size screen pixels across, centred at c.
void paintPoint(QPainter& p, QPointF c, const std::string& type, int size) {
  const double h = std::max(2, size) / 2.0;
  const QRectF box(c.x() - h, c.y() - h, 2 * h, 2 * h);
  if (type == "circle") {
    p.drawEllipse(c, h, h);
  } else if (type == "box") {
    p.drawRect(box);
  } else if (type == "diamond") {
    p.drawPolygon(
        QPolygonF{{c.x(), c.y() - h}, {c.x() + h, c.y()}, {c.x(), c.y() + h}, {c.x() - h, c.y()}});
  } else if (type == "cross") {
    p.drawLine(QPointF(c.x() - h, c.y()), QPointF(c.x() + h, c.y()));
    p.drawLine(QPointF(c.x(), c.y() - h), QPointF(c.x(), c.y() + h));
  } else if (type == "x") {
    p.drawLine(box.topLeft(), box.bottomRight());
    p.drawLine(box.bottomLeft(), box.topRight());
  } else if (type == "arrow") {
    // DS9's arrow comes in from the lower left with its head at the position.
    p.drawLine(QPointF(c.x() - 2 * h, c.y() + 2 * h), c);
    p.drawLine(c, QPointF(c.x() - h, c.y()));
    p.drawLine(c, QPointF(c.x(), c.y() + h));
  } else {  // boxcircle, DS9's default
    p.drawRect(box);
    p.drawEllipse(c, h, h);
  }
}

QString shapeName(const io::PixelRegion& r) {
  switch (r.shape) {
    case RegionShape::Circle:
      return QObject::tr("circle");
    case RegionShape::Ellipse:
      return QObject::tr("ellipse");
    case RegionShape::Box:
      return QObject::tr("box");
    case RegionShape::Polygon:
      return QObject::tr("polygon");
    case RegionShape::Point:
      return QObject::tr("point (%1)").arg(QString::fromStdString(r.pointType));
    case RegionShape::Line:
      return QObject::tr("line");
    case RegionShape::Text:
      return QObject::tr("text");
    case RegionShape::Annulus:
      return QObject::tr("annulus");
    case RegionShape::EllipseAnnulus:
      return QObject::tr("ellipse annulus");
    case RegionShape::BoxAnnulus:
      return QObject::tr("box annulus");
    case RegionShape::Panda:
      return QObject::tr("panda");
    case RegionShape::Epanda:
      return QObject::tr("epanda");
    case RegionShape::Bpanda:
      return QObject::tr("bpanda");
  }
  return {};
}

QString sizeText(const io::PixelRegion& r) {
  auto n = [](double v) { return QString::number(v, 'f', 2); };
  const QString angle = r.angle != 0 ? QString(", %1°").arg(r.angle, 0, 'f', 1) : QString();
  switch (r.shape) {
    case RegionShape::Circle:
      return QObject::tr("r %1").arg(n(sizeAt(r, 0)));
    case RegionShape::Ellipse:
      return QObject::tr("%1 × %2 (semi-axes)%3").arg(n(sizeAt(r, 0)), n(sizeAt(r, 1)), angle);
    case RegionShape::Box:
      return QString("%1 × %2%3").arg(n(sizeAt(r, 0)), n(sizeAt(r, 1)), angle);
    case RegionShape::Polygon:
      return QObject::tr("%1 vertices").arg(r.points.size());
    case RegionShape::Line:
      if (r.points.size() >= 2) {
        const QPointF d = point(r.points[1]) - point(r.points[0]);
        return QObject::tr("length %1").arg(n(std::hypot(d.x(), d.y())));
      }
      return {};
    case RegionShape::Point:
    case RegionShape::Text:
      return {};
    case RegionShape::Annulus:
    case RegionShape::EllipseAnnulus:
    case RegionShape::BoxAnnulus:
    case RegionShape::Panda:
    case RegionShape::Epanda:
    case RegionShape::Bpanda: {
      // The innermost and outermost boundary, the rings and the sectors.
      const size_t stride =
          r.shape == RegionShape::Annulus || r.shape == RegionShape::Panda ? 1 : 2;
      if (r.sizes.size() < 2 * stride) return {};
      auto boundary = [&](size_t k) {
        return stride == 1 ? n(r.sizes[k])
                           : QString("%1 × %2").arg(n(r.sizes[k * 2]), n(r.sizes[k * 2 + 1]));
      };
      const size_t last = r.sizes.size() / stride - 1;
      QString text = QObject::tr("%1 to %2, %3 rings").arg(boundary(0), boundary(last)).arg(last);
      if (r.angles.size() >= 2)
        text += QObject::tr(", %1 sectors %2° to %3°")
                    .arg(r.angles.size() - 1)
                    .arg(r.angles.front(), 0, 'f', 1)
                    .arg(r.angles.back(), 0, 'f', 1);
      return text + angle;
    }
  }
  return {};
}

bool sameRegion(const io::PixelRegion& a, const io::PixelRegion& b) {
  return a.shape == b.shape && a.points == b.points && a.sizes == b.sizes && a.angle == b.angle &&
         a.angles == b.angles && a.text == b.text && a.color == b.color && a.tag == b.tag &&
         a.exclude == b.exclude && a.dash == b.dash && a.fill == b.fill && a.width == b.width &&
         a.pointType == b.pointType;
}

QString plural(size_t n, const char* one) {
  return n == 1 ? QString("1 %1").arg(one) : QString("%1 %2s").arg(n).arg(one);
}

}  // namespace

QColor ds9Colour(const std::string& name) {
  static const std::pair<const char*, QColor> kNamed[] = {
      {"white", QColor(255, 255, 255)}, {"black", QColor(0, 0, 0)},
      {"red", QColor(255, 0, 0)},       {"green", QColor(0, 255, 0)},
      {"blue", QColor(0, 0, 255)},      {"cyan", QColor(0, 255, 255)},
      {"magenta", QColor(255, 0, 255)}, {"yellow", QColor(255, 255, 0)}};
  const QString lower = QString::fromStdString(name).trimmed().toLower();
  for (const auto& [n, c] : kNamed)
    if (lower == n) return c;
  const QColor other(lower);
  return other.isValid() ? other : QColor(0, 255, 0);
}

QPen regionPen(const io::PixelRegion& region, bool selected) {
  QPen pen(ds9Colour(region.color), std::max(1, region.width) + (selected ? 2 : 0));
  pen.setCosmetic(true);
  if (region.dash || region.exclude) pen.setStyle(Qt::DashLine);
  return pen;
}

QPainterPath regionOutline(const io::PixelRegion& region, const render::SliceView& view) {
  return imageToWidget(view).map(regionImageOutline(region));
}

void paintRegions(QPainter& p, const render::SliceView& view,
                  const std::vector<io::PixelRegion>& regions, int selected) {
  const QTransform toWidget = imageToWidget(view);
  p.save();
  p.setRenderHint(QPainter::Antialiasing, false);  // crisp one-pixel lines, as DS9
  p.setBrush(Qt::NoBrush);
  for (size_t k = 0; k < regions.size(); ++k) {
    const io::PixelRegion& r = regions[k];
    if (r.points.empty()) continue;
    const bool isSelected = int(k) == selected;
    p.setPen(regionPen(r, isSelected));
    const QPointF at = toWidget.map(centreOf(r));
    QRectF bounds(at, at);
    if (r.shape == RegionShape::Point) {
      paintPoint(p, at, r.pointType, r.pointSize);
      const double h = r.pointSize / 2.0;
      bounds = QRectF(at.x() - h, at.y() - h, 2 * h, 2 * h);
    } else if (r.shape != RegionShape::Text) {
      const QPainterPath path = toWidget.map(regionImageOutline(r));
      // fill=1: DS9 fills circles, ellipses, boxes and polygons in their colour.
      if (r.fill && (r.shape == RegionShape::Circle || r.shape == RegionShape::Ellipse ||
                     r.shape == RegionShape::Box || r.shape == RegionShape::Polygon))
        p.fillPath(path, ds9Colour(r.color));
      p.drawPath(path);
      bounds = path.boundingRect();
      if (r.exclude) {  // DS9 strikes excluded regions through in red
        p.setPen(QPen(QColor(255, 0, 0), 1));
        p.drawLine(bounds.bottomLeft(), bounds.topRight());
      }
    }
    if (!r.text.empty()) {
      p.setPen(ds9Colour(r.color));
      p.setFont(ds9Font(r.font));
      const QString text = QString::fromStdString(r.text);
      const QFontMetricsF metrics(p.font());
      const double w = metrics.horizontalAdvance(text);
      if (r.shape == RegionShape::Text) {  // centred on its position, along its textangle
        const double a = r.angle * M_PI / 180;
        const QPointF along = toWidget.map(centreOf(r) + QPointF(std::cos(a), std::sin(a))) - at;
        p.save();
        p.translate(at);
        p.rotate(std::atan2(along.y(), along.x()) * 180 / M_PI);
        p.drawText(QPointF(-w / 2, metrics.ascent() / 2 - 1), text);
        p.restore();
      } else {
        // above the shape, as DS9 puts a region's text
        p.drawText(QPointF(bounds.center().x() - w / 2, bounds.top() - metrics.descent() - 2),
                   text);
      }
    }
    if (isSelected) {  // handles at the corners of its extent, DS9's selection
      p.setPen(QPen(ds9Colour(r.color), 1));
      p.setBrush(ds9Colour(r.color));
      for (QPointF c :
           {bounds.topLeft(), bounds.topRight(), bounds.bottomLeft(), bounds.bottomRight()})
        p.drawRect(QRectF(c.x() - 2, c.y() - 2, 4, 4));
      p.setBrush(Qt::NoBrush);
    }
  }
  p.restore();
}

RegionsPanel::RegionsPanel(ViewDecorations* decorations, render::SliceView* view, QWidget* parent)
    : QWidget(parent), decorations_(decorations), view_(view) {
  pool_.setMaxThreadCount(1);
  auto* importButton = new QPushButton(tr("Import DS9 regions…"));
  export_ = new QPushButton(tr("Export DS9…"));
  add_ = new QPushButton(tr("Add drawn region"));
  add_->setToolTip(
      tr("The rectangle or ellipse drawn with the view's Rectangle or Ellipse tool "
         "becomes a box or an ellipse region"));
  delete_ = new QPushButton(tr("Delete"));
  clear_ = new QPushButton(tr("Clear"));
  table_ = new QTableWidget(0, 4);
  table_->setHorizontalHeaderLabels({tr("Shape"), tr("Centre (x, y)"), tr("Size"), tr("Text")});
  table_->horizontalHeaderItem(Centre)->setToolTip(tr("DS9 image coordinates: 1-based pixels"));
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  status_ = new QLabel(tr("No regions"));
  status_->setWordWrap(true);

  auto* files = new QHBoxLayout;
  files->addWidget(importButton);
  files->addWidget(export_);
  auto* edits = new QHBoxLayout;
  edits->addWidget(add_);
  edits->addWidget(delete_);
  edits->addWidget(clear_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(files);
  layout->addWidget(table_, 1);
  layout->addLayout(edits);
  layout->addWidget(status_);

  auto* deleteKey = new QAction(this);
  deleteKey->setShortcuts({QKeySequence::Delete, QKeySequence(Qt::Key_Backspace)});
  deleteKey->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  addAction(deleteKey);
  connect(deleteKey, &QAction::triggered, this, &RegionsPanel::deleteSelected);
  connect(importButton, &QPushButton::clicked, this, &RegionsPanel::chooseAndImport);
  connect(export_, &QPushButton::clicked, this, &RegionsPanel::chooseAndExport);
  connect(add_, &QPushButton::clicked, this, &RegionsPanel::addDrawnRegion);
  connect(delete_, &QPushButton::clicked, this, &RegionsPanel::deleteSelected);
  connect(clear_, &QPushButton::clicked, this, &RegionsPanel::clear);
  connect(table_, &QTableWidget::itemSelectionChanged, this, [this] {
    if (updatingTable_) return;
    select(selected());
  });
  refresh();
}

// The decorations are not touched here: the window destroys them before its docks, and the
// overlay holds its own copy of the regions.
RegionsPanel::~RegionsPanel() {
  ++generation_;
  pool_.waitForDone();
}

void RegionsPanel::importFile(const QString& path) {
  const quint64 generation = ++generation_;
  status_->setText(tr("Reading %1…").arg(QFileInfo(path).fileName()));
  const std::string file = path.toStdString();
  whenDone(
      this, QtConcurrent::run(&pool_, [file] { return io::readDs9Regions(file); }),
      [this, generation, name = QFileInfo(path).fileName()](io::RegionFile regions) {
        if (generation != generation_) return;
        placeImported(regions, name);
      },
      [this, generation, path](const std::exception& e) {
        if (generation != generation_) return;
        const QString message = QString::fromUtf8(e.what());
        status_->setText(tr("Cannot read %1: %2").arg(QFileInfo(path).fileName(), message));
        emit importFailed(message);
      });
}

void RegionsPanel::placeImported(const io::RegionFile& file, const QString& name) {
  warnings_.clear();
  io::RegionPlacement placement = io::placeRegions(file, wcsSource_(), z_, physicalSource_());
  for (const std::string& w : placement.warnings) warnings_ << QString::fromStdString(w);
  size_t placed = 0;
  for (io::PlacedRegion& p : placement.regions) {
    Entry entry{std::move(p.pixels), file.regions[p.region]};
    imported_.push_back(entry);
    entries_.push_back(std::move(entry));
    ++placed;
  }
  refresh();
  QString text = tr("%1: %2").arg(name, plural(placed, "region"));
  if (!warnings_.isEmpty()) text += tr(", %1").arg(plural(size_t(warnings_.size()), "warning"));
  status_->setText(text);
  status_->setToolTip(warnings_.join('\n'));
  emit imported(int(placed));
  if (placed > 0) edited(tr("import %1").arg(plural(placed, "region")));
}

void RegionsPanel::placeAgain(int z) {
  z_ = z;
  imported_.clear();
  const io::Wcs* wcs = wcsSource_();
  const io::PhysicalToImage physical = physicalSource_();
  int kept = 0;
  for (Entry& e : entries_) {
    if (!e.parsed) continue;
    std::vector<io::PixelRegion> pixels =
        io::regionsInPixels({*e.parsed}, wcs, z_, nullptr, physical);
    if (pixels.size() == 1)
      e.pixels = std::move(pixels.front());
    else
      ++kept;
    imported_.push_back(e);
  }
  refresh();
  if (kept > 0)
    status_->setText(tr("%1 not placed on this image (no celestial WCS): "
                        "kept at their previous pixels")
                         .arg(plural(size_t(kept), "region")));
}

QString RegionsPanel::exportFile(const QString& path) const {
  QSaveFile file(path);  // written whole or not at all: a temporary renamed over path
  if (!file.open(QIODevice::WriteOnly)) return file.errorString();
  const std::string text = io::ds9RegionText(regions());
  if (file.write(text.data(), qint64(text.size())) != qint64(text.size()))
    return file.errorString();
  return file.commit() ? QString() : file.errorString();
}

std::vector<io::PixelRegion> RegionsPanel::regions() const {
  std::vector<io::PixelRegion> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.pixels);
  return out;
}

void RegionsPanel::setRegions(std::vector<io::PixelRegion> regions) {
  std::vector<Entry> entries;
  entries.reserve(regions.size());
  for (io::PixelRegion& r : regions) {
    Entry e{std::move(r), std::nullopt};
    for (const Entry& known : imported_)
      if (sameRegion(known.pixels, e.pixels)) {
        e.parsed = known.parsed;
        break;
      }
    entries.push_back(std::move(e));
  }
  entries_ = std::move(entries);
  refresh();
}

void RegionsPanel::setDrawnRegion(QRectF rect, bool ellipse) {
  drawn_ = std::make_pair(rect.normalized(), ellipse);
  add_->setEnabled(true);
}

bool RegionsPanel::addDrawnRegion() {
  if (!drawn_) return false;
  const auto [rect, ellipse] = *drawn_;
  io::PixelRegion r;
  r.shape = ellipse ? RegionShape::Ellipse : RegionShape::Box;
  r.points = {{rect.center().x(), rect.center().y()}};
  // The drawn corners are pixel centres and the view outlines the pixels' edges around them.
  const double w = rect.width() + 1, h = rect.height() + 1;
  r.sizes = ellipse ? std::vector<double>{w / 2, h / 2} : std::vector<double>{w, h};
  entries_.push_back({std::move(r), std::nullopt});
  refresh();
  select(int(entries_.size()) - 1);
  edited(ellipse ? tr("add ellipse region") : tr("add box region"));
  return true;
}

int RegionsPanel::selected() const {
  const auto rows = table_->selectionModel()->selectedRows();
  return rows.isEmpty() ? -1 : rows.front().row();
}

void RegionsPanel::select(int index) {
  if (index < 0 || index >= int(entries_.size())) index = -1;
  if (index != selected()) {
    updatingTable_ = true;
    if (index < 0)
      table_->clearSelection();
    else
      table_->selectRow(index);
    updatingTable_ = false;
  }
  delete_->setEnabled(index >= 0);
  if (index >= 0 && view_) view_->setView(view_->zoom(), centreOf(entries_[size_t(index)].pixels));
  redraw();
  emit regionSelected(index);
}

void RegionsPanel::deleteSelected() {
  const int index = selected();
  if (index < 0) return;
  const QString what = tr("delete %1 region").arg(shapeName(entries_[size_t(index)].pixels));
  entries_.erase(entries_.begin() + index);
  refresh();
  edited(what);
}

void RegionsPanel::clear() {
  if (entries_.empty()) return;
  entries_.clear();
  refresh();
  edited(tr("clear regions"));
}

void RegionsPanel::edited(const QString& what) { emit regionsEdited(what); }

void RegionsPanel::refresh() {
  updatingTable_ = true;
  table_->setRowCount(int(entries_.size()));
  for (size_t k = 0; k < entries_.size(); ++k) {
    const io::PixelRegion& r = entries_[k].pixels;
    const QPointF c = centreOf(r);
    QString centre = QString("%1, %2").arg(c.x() + 1, 0, 'f', 2).arg(c.y() + 1, 0, 'f', 2);
    QString shape = shapeName(r);
    if (r.exclude) shape = "−" + shape;  // DS9 writes exclude regions with a leading minus
    const QStringList cells{shape, centre, sizeText(r), QString::fromStdString(r.text)};
    for (int col = 0; col < cells.size(); ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      if (col == Shape) item->setForeground(ds9Colour(r.color).darker(130));
      table_->setItem(int(k), col, item);
    }
  }
  table_->clearSelection();
  updatingTable_ = false;
  const bool any = !entries_.empty();
  clear_->setEnabled(any);
  export_->setEnabled(any);
  delete_->setEnabled(false);
  add_->setEnabled(drawn_.has_value());
  if (!any) status_->setText(tr("No regions"));
  redraw();
  emit regionSelected(-1);
}

void RegionsPanel::redraw() {
  if (!decorations_) return;
  if (entries_.empty()) {
    decorations_->setOverlay(kOverlayKey, {});
  } else {
    // The overlay holds its own copy: it may be painted after this panel is gone.
    auto shown = std::make_shared<const std::vector<io::PixelRegion>>(regions());
    const int chosen = selected();
    decorations_->setOverlay(kOverlayKey,
                             [shown, chosen](QPainter& p, const render::SliceView& view) {
                               paintRegions(p, view, *shown, chosen);
                             });
  }
  if (view_) view_->scheduleFrame();
}

void RegionsPanel::chooseAndImport() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Import DS9 regions"), QString(),
                                                    tr("DS9 regions (*.reg *.txt);;All files (*)"));
  if (!path.isEmpty()) importFile(path);
}

void RegionsPanel::chooseAndExport() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export DS9 regions"), "regions.reg",
                                                    tr("DS9 regions (*.reg)"));
  if (path.isEmpty()) return;
  const QString error = exportFile(path);
  status_->setText(error.isEmpty()
                       ? tr("Exported %1 to %2")
                             .arg(plural(entries_.size(), "region"), QFileInfo(path).fileName())
                       : tr("Export failed: %1").arg(error));
}

RegionsPanel* installRegionsTool(MainWindow* window) {
  if (auto* existing = window->findChild<RegionsPanel*>()) return existing;
  auto* panel = new RegionsPanel(window->tool<ViewDecorations>(), window->sliceView());
  addAnalysisDock(window, panel,
                  {QObject::tr("Regions"), "regionsToolDock", QObject::tr("&Regions…"),
                   QObject::tr("Import DS9 &regions…")},
                  [panel] { panel->chooseAndImport(); });
  panel->setWcsSource(
      [window]() -> const io::Wcs* { return window->stack() ? window->stack()->wcs() : nullptr; });
  panel->setPhysicalSource([window] {
    return window->stack() ? io::PhysicalToImage::fromHeader(window->stack()->info().header)
                           : io::PhysicalToImage{};
  });
  QObject::connect(window, &MainWindow::stackOpened, panel,
                   [panel, window] { panel->placeAgain(window->slicePath()->currentZ()); });
  QObject::connect(window->sliceView(), &render::SliceView::regionDrawn, panel,
                   &RegionsPanel::setDrawnRegion);
  if (auto* stats = window->findChild<RegionStatsTool*>()) {
    QObject::connect(panel, &RegionsPanel::regionSelected, stats, [panel, stats, window](int k) {
      const std::vector<io::PixelRegion> shown = panel->regions();
      if (k < 0 || k >= int(shown.size())) return stats->clearDs9Region();
      stats->setDs9Region(shown[size_t(k)]);
      if (auto* dock = window->findChild<QDockWidget*>("regionDock")) dock->raise();
    });
  }
  if (window->stack()) panel->placeAgain(window->slicePath()->currentZ());
  return panel;
}

}  // namespace stacklens::ui
