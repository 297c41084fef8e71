#include "ui/jobs/psf_measure_dialog.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineF>
#include <QMenu>
#include <QPainter>
#include <QStatusBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <functional>

#include "compute/backend.h"
#include "compute/blocked/block_plan.h"
#include "compute/stack_spacing.h"
#include "io/stack_writer.h"
#include "ui/display/view_decorations.h"
#include "ui/frame/main_window.h"
#include "ui/jobs/dialog_job.h"
#include "ui/live/live_processing.h"

namespace stacklens::ui {
namespace {

using compute::psf::PsfStar;

constexpr const char* kDialogName = "psfMeasureDialog";
// A marker's radius on the view before a cut-out size is known (image pixels).
constexpr double kDefaultMarkerRadius = 6;
// Stars closer than this (pixels) to one in the list are the same star.
constexpr double kSameStar = 1.0;

QString position(const PsfStar& s, bool threeD) {
  return threeD
             ? QString("(%1, %2, %3)").arg(s.x, 0, 'f', 2).arg(s.y, 0, 'f', 2).arg(s.z, 0, 'f', 2)
             : QString("(%1, %2)").arg(s.x, 0, 'f', 2).arg(s.y, 0, 'f', 2);
}

QTableWidgetItem* cell(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

// One plane of the PSF on a preview, on a log scale down to 10⁻⁴ of its peak.
void showPlane(render::SliceView* view, std::vector<float> plane, int width, int height) {
  const float high = *std::max_element(plane.begin(), plane.end());
  view->setSlice(std::make_shared<const std::vector<float>>(std::move(plane)), width, height);
  view->setLimits(high * 1e-4f, high);
  view->fitToWindow();
}

}  // namespace

PsfMeasureDialog::PsfMeasureDialog(MainWindow* window)
    : JobDialog(tr("Measure"), window), window_(window) {
  setWindowTitle(tr("Measure PSF from stars or beads"));
  setObjectName(kDialogName);

  mode_ = new QComboBox;
  mode_->addItems({tr("2D stars (the slice shown)"), tr("3D beads (the whole stack)")});
  mode_->setToolTip(
      tr("2D: cut-outs of the slice shown. 3D: cut-out boxes of the whole stack, read into "
         "memory; click each bead on the slice where it is brightest."));

  table_ = new QTableWidget(0, 5);
  table_->setHorizontalHeaderLabels({tr("#"), tr("x"), tr("y"), tr("z"), tr("Status")});
  table_->horizontalHeaderItem(X)->setToolTip(tr("0-based pixels"));
  table_->horizontalHeaderItem(Y)->setToolTip(tr("0-based pixels"));
  table_->horizontalHeaderItem(Z)->setToolTip(tr("0-based slice"));
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setMinimumWidth(280);

  addByClicking_ = new QPushButton(tr("Add by clicking"));
  addByClicking_->setCheckable(true);
  addByClicking_->setToolTip(
      tr("While on, each click on the view adds a star at that pixel; "
         "the cut-out is centred on the star afterwards."));
  pick_ = new QPushButton(tr("Pick from detected sources"));
  pick_->setToolTip(tr("The brightest isolated sources of the slice shown, away from the edges"));
  pickCount_ = new QSpinBox;
  pickCount_->setRange(1, 1000);
  pickCount_->setValue(20);
  pickCount_->setPrefix(tr("up to "));
  remove_ = new QPushButton(tr("Remove selected"));
  clear_ = new QPushButton(tr("Clear"));

  size_ = new QSpinBox;
  size_->setRange(0, 1001);
  size_->setSingleStep(2);
  size_->setSpecialValueText(tr("auto"));
  size_->setSuffix(tr(" px"));
  size_->setToolTip(tr("Side of the cut-outs and of the PSF (odd); auto: from the stars' FWHM"));
  sizeZ_ = new QSpinBox;
  sizeZ_->setRange(0, 1001);
  sizeZ_->setSingleStep(2);
  sizeZ_->setSpecialValueText(tr("auto"));
  sizeZ_->setSuffix(tr(" planes"));
  sizeZ_->setToolTip(tr("Depth of the cut-outs and of the PSF (odd); auto: from the beads' FWHM"));
  clip_ = new QDoubleSpinBox;
  clip_->setRange(1, 10);
  clip_->setDecimals(1);
  clip_->setValue(3);
  clip_->setSuffix(tr(" σ"));
  clip_->setToolTip(tr("The background of each cut-out: the sigma-clipped median of its border"));
  saturation_ = new QDoubleSpinBox;
  saturation_->setRange(0, 1e12);
  saturation_->setDecimals(1);
  saturation_->setSpecialValueText(tr("none"));
  saturation_->setToolTip(
      tr("The detector's saturation level: stars with a pixel at or above it are not used"));

  auto* form = new QFormLayout;
  form->addRow(tr("Mode:"), mode_);
  form->addRow(tr("Cut-out size:"), size_);
  form->addRow(tr("Cut-out depth:"), sizeZ_);
  form->addRow(tr("Background clip:"), clip_);
  form->addRow(tr("Saturation:"), saturation_);
  auto* picking = new QHBoxLayout;
  picking->addWidget(pick_);
  picking->addWidget(pickCount_);
  auto* editing = new QHBoxLayout;
  editing->addWidget(addByClicking_);
  editing->addWidget(remove_);
  editing->addWidget(clear_);
  auto* left = new QVBoxLayout;
  left->addLayout(form);
  left->addLayout(editing);
  left->addLayout(picking);
  left->addWidget(table_, 1);

  preview_ = new render::SliceView;
  section_ = new render::SliceView;
  QWidget* previewHolder = QWidget::createWindowContainer(preview_, this);
  sectionHolder_ = QWidget::createWindowContainer(section_, this);
  previewHolder->setMinimumSize(200, 200);
  sectionHolder_->setMinimumSize(200, 120);
  render::DisplaySettings d;
  d.colormap = "magma";
  d.scale = render::Scale::Log;
  preview_->setDisplay(d);
  section_->setDisplay(d);
  fwhm_ = new QLabel;
  fwhm_->setWordWrap(true);
  fwhm_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* right = new QVBoxLayout;
  right->addWidget(new QLabel(tr("PSF, central plane:")));
  right->addWidget(previewHolder, 2);
  right->addWidget(sectionHolder_, 1);
  right->addWidget(fwhm_);

  status_->setWordWrap(true);
  use_ = new QPushButton(tr("Use for deconvolution"));
  saveButton_ = new QPushButton(tr("Save…"));
  use_->setEnabled(false);
  saveButton_->setEnabled(false);
  auto* columns = new QHBoxLayout;
  columns->addLayout(left, 1);
  columns->addLayout(right, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(columns, 1);
  addJobRows(layout, {use_, saveButton_});

  connect(mode_, &QComboBox::currentIndexChanged, this, [this] { setMode(mode()); });
  connect(pick_, &QPushButton::clicked, this, &PsfMeasureDialog::pickFromSources);
  connect(remove_, &QPushButton::clicked, this, &PsfMeasureDialog::removeSelected);
  connect(clear_, &QPushButton::clicked, this, &PsfMeasureDialog::clearStars);
  connect(size_, &QSpinBox::valueChanged, this, &PsfMeasureDialog::refreshOverlay);
  connect(sizeZ_, &QSpinBox::valueChanged, this, &PsfMeasureDialog::refreshOverlay);
  connect(use_, &QPushButton::clicked, this, &PsfMeasureDialog::useForDeconvolution);
  connect(saveButton_, &QPushButton::clicked, this, &PsfMeasureDialog::chooseAndSave);
  // Closed (not destroyed with the window, whose decorations are gone by then): the markers go.
  connect(this, &QDialog::finished, this, [this] {
    cancel();
    pendingPick_.reset();
    removeOverlay();
    setObjectName({});  // openPsfMeasure makes a new one while this one is being deleted
  });

  connect(window_->sliceView(), &render::SliceView::clicked, this, [this](QPointF p) {
    if (!addByClicking_->isChecked() || running() || !isVisible()) return;
    addStar({std::round(p.x()), std::round(p.y()), double(window_->slicePath()->currentZ())});
  });
  connect(window_->slicePath(), &SlicePath::sliceShown, this, &PsfMeasureDialog::refreshOverlay);
  connect(window_, &MainWindow::stackOpened, this, [this] {
    cancel();
    ++measureGeneration_;
    pendingPick_.reset();
    ++pickGeneration_;
    clearStars();
    forgetResult();
  });
  SourcesPanel* sources = window_->tool<LiveProcessing>()->sourcesPanel();
  connect(sources, &SourcesPanel::sourcesShown, this, [this, sources](int z) {
    if (!pendingPick_ || *pendingPick_ != z) return;
    pendingPick_.reset();
    addPicked(sources->sources(), z, tr("the sources table"));
  });
  setMode(Mode::Stars2D);
}

PsfMeasureDialog::~PsfMeasureDialog() {
  stop_ = true;
  ++pickGeneration_;
  future_.waitForFinished();
  pool_.waitForDone();
}

void PsfMeasureDialog::showEvent(QShowEvent* event) {
  QDialog::showEvent(event);
  refreshOverlay();
}

void PsfMeasureDialog::setMode(Mode mode) {
  if (mode_->currentIndex() != int(mode)) {
    mode_->setCurrentIndex(int(mode));  // comes back here through currentIndexChanged
    return;
  }
  const bool threeD = mode == Mode::Beads3D;
  sizeZ_->setEnabled(threeD);
  table_->setColumnHidden(Z, !threeD);
  refreshOverlay();
}

void PsfMeasureDialog::addStar(PsfStar star) {
  const io::StackReader* stack = window_->stack();
  if (!stack) {
    status_->setText(tr("Open a stack first."));
    return;
  }
  const io::StackInfo& info = stack->info();
  if (star.x < 0 || star.y < 0 || star.x > double(info.x - 1) || star.y > double(info.y - 1) ||
      star.z < 0 || star.z > double(info.z - 1))
    return;
  const bool threeD = mode() == Mode::Beads3D;
  for (const PsfStar& s : stars_)
    if (std::hypot(s.x - star.x, s.y - star.y) < kSameStar &&
        (!threeD || std::abs(s.z - star.z) < kSameStar))
      return;
  stars_.push_back(star);
  reports_.emplace_back();
  refreshTable();
  refreshOverlay();
  status_->setText(tr("%n star(s) in the list.", "", int(stars_.size())));
  emit starsChanged();
}

void PsfMeasureDialog::removeSelected() {
  std::vector<int> rows;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows())
    rows.push_back(index.row());
  std::sort(rows.rbegin(), rows.rend());
  for (int row : rows) {
    if (row < 0 || size_t(row) >= stars_.size()) continue;
    stars_.erase(stars_.begin() + row);
    reports_.erase(reports_.begin() + row);
  }
  if (rows.empty()) return;
  refreshTable();
  refreshOverlay();
  emit starsChanged();
}

void PsfMeasureDialog::clearStars() {
  stars_.clear();
  reports_.clear();
  refreshTable();
  refreshOverlay();
  emit starsChanged();
}

void PsfMeasureDialog::refreshTable() {
  const bool threeD = mode() == Mode::Beads3D;
  table_->setRowCount(int(stars_.size()));
  for (size_t i = 0; i < stars_.size(); ++i) {
    const PsfStar& s = stars_[i];
    const int row = int(i);
    table_->setItem(row, Number, cell(QString::number(i + 1)));
    table_->setItem(row, X, cell(QString::number(s.x, 'f', 1)));
    table_->setItem(row, Y, cell(QString::number(s.y, 'f', 1)));
    table_->setItem(row, Z, cell(QString::number(s.z, 'f', 1)));
    auto* status = new QTableWidgetItem;
    if (const auto& report = reports_[i]) {
      if (report->used) {
        status->setText(tr("used"));
        status->setToolTip(tr("Centred at %1").arg(position(report->refined, threeD)));
      } else {
        status->setText(tr("rejected: %1").arg(QString::fromStdString(report->reason)));
        status->setToolTip(QString::fromStdString(report->reason));
        status->setForeground(QColor(200, 0, 0));
      }
    } else {
      status->setText(tr("not measured"));
    }
    table_->setItem(row, Status, status);
  }
}

// Circles with numbers where the stars are, rejected ones crossed in red; in 3D, beads away from
// the slice shown (farther than half the cut-out depth) are dashed.
void PsfMeasureDialog::refreshOverlay() {
  ViewDecorations* decorations = window_->tool<ViewDecorations>();
  if (!decorations || !isVisible() || stars_.empty()) {
    removeOverlay();
    return;
  }
  struct Marker {
    double x, y, z;
    int number;
    bool rejected;
  };
  std::vector<Marker> markers;
  for (size_t i = 0; i < stars_.size(); ++i)
    markers.push_back(
        {stars_[i].x, stars_[i].y, stars_[i].z, int(i + 1), reports_[i] && !reports_[i]->used});
  const compute::Shape measured = result_.psf.empty() ? compute::Shape{} : result_.psf.shape();
  const double radius = size_->value() > 0     ? size_->value() / 2.0
                        : !result_.psf.empty() ? double(measured.x / 2)
                                               : kDefaultMarkerRadius;
  const double halfDepth = sizeZ_->value() > 0    ? sizeZ_->value() / 2.0
                           : !result_.psf.empty() ? double(std::max<int64_t>(measured.z / 2, 1))
                                                  : 2.0;
  const bool threeD = mode() == Mode::Beads3D;
  const double z = window_->slicePath()->currentZ();
  decorations->setOverlay(kOverlayKey, [markers = std::move(markers), radius, halfDepth, threeD, z](
                                           QPainter& p, const render::SliceView& view) {
    p.save();
    // Crisp lines, as DS9 draws regions: the colour is the data's contrast.
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setBrush(Qt::NoBrush);
    for (const Marker& m : markers) {
      const QPointF c = view.imageToWidget({m.x, m.y});
      const double r = std::max(6.0, QLineF(c, view.imageToWidget({m.x + radius, m.y})).length());
      const bool near = !threeD || std::abs(m.z - z) <= halfDepth;
      const QColor colour = m.rejected ? QColor(255, 40, 40) : QColor(40, 255, 40);
      p.setPen(QPen(colour, 2, near ? Qt::SolidLine : Qt::DashLine));
      p.drawEllipse(c, r, r);
      if (m.rejected) {
        const double d = r * M_SQRT1_2;
        p.drawLine(c + QPointF(-d, -d), c + QPointF(d, d));
        p.drawLine(c + QPointF(-d, d), c + QPointF(d, -d));
      }
      p.drawText(c + QPointF(r * M_SQRT1_2 + 2, -r * M_SQRT1_2 - 2), QString::number(m.number));
    }
    p.restore();
  });
  overlayShown_ = true;
}

void PsfMeasureDialog::removeOverlay() {
  if (!overlayShown_) return;
  if (ViewDecorations* decorations = window_->tool<ViewDecorations>())
    decorations->setOverlay(kOverlayKey, {});
  overlayShown_ = false;
}

void PsfMeasureDialog::pickFromSources() {
  const io::StackReader* stack = window_->stack();
  const render::SliceData slice = window_->slicePath()->currentSlice();
  if (!stack || !slice) {
    status_->setText(tr("Open a stack first."));
    return;
  }
  const int z = window_->slicePath()->currentZ();
  SourcesPanel* panel = window_->tool<LiveProcessing>()->sourcesPanel();
  if (panel->slice() == z) {
    addPicked(panel->sources(), z, tr("the sources table"));
    return;
  }
  if (window_->tool<LiveProcessing>()->dock()->pipeline().segmentation.enabled) {
    pendingPick_ = z;  // the table of this slice is on its way
    status_->setText(tr("Waiting for the sources of slice %1…").arg(z));
    return;
  }
  // No table: segment the slice shown here, as the dock's segmentation would without its blur.
  status_->setText(
      tr("Segmentation is off in the Processing dock (tick Segmentation there, or choose its "
         "\"astronomy sources\" preset, to see the sources table); detecting sources 5σ above the "
         "clipped background of slice %1 here…")
          .arg(z));
  const quint64 generation = ++pickGeneration_;
  const int64_t width = stack->info().x, height = stack->info().y;
  QtConcurrent::run(&pool_,
                    [slice, width, height] {
                      compute::Image image = compute::Image::hostUninitialized({1, height, width});
                      std::copy(slice->begin(), slice->end(), image.data());
                      compute::SegmentParams p;
                      p.minPixels = 5;  // single hot pixels are no stars
                      return compute::makeCpuBackend(1)->segment(image, p).sources;
                    })
      .then(this,
            [this, generation, z](std::vector<compute::Source> sources) {
              if (generation != pickGeneration_) return;
              addPicked(sources, z, tr("a 5σ segmentation of the slice"));
            })
      .onFailed(this, [this, generation](const std::exception& e) {
        if (generation != pickGeneration_) return;
        status_->setText(tr("Detecting sources failed: %1").arg(QString::fromUtf8(e.what())));
      });
}

void PsfMeasureDialog::addPicked(const std::vector<compute::Source>& sources, int z,
                                 const QString& from) {
  const io::StackReader* stack = window_->stack();
  if (!stack) return;
  const io::StackInfo& info = stack->info();
  // In 3D the shown slice's sources are beads at that slice (kept away from the stack's ends).
  const bool threeD = mode() == Mode::Beads3D;
  const compute::Shape shape{threeD ? info.z : 1, info.y, info.x};
  std::vector<compute::Source> ofSlice = sources;
  for (compute::Source& s : ofSlice) s.z = threeD ? z : 0;
  const std::vector<PsfStar> picks =
      compute::psf::pickPsfStars(ofSlice, shape, pickCount_->value(), params().saturation);
  const size_t before = stars_.size();
  for (PsfStar s : picks) {
    s.z = z;
    addStar(s);
  }
  const int added = int(stars_.size() - before);
  status_->setText(picks.empty()
                       ? tr("No isolated source away from the edges among the %n source(s) of %1.",
                            "", int(sources.size()))
                             .arg(from)
                       : tr("Added %1 of the %2 brightest isolated sources of %3 (%4 in the list).")
                             .arg(added)
                             .arg(picks.size())
                             .arg(from)
                             .arg(stars_.size()));
  emit picked(added);
}

compute::psf::MeasuredPsfParams PsfMeasureDialog::params() const {
  compute::psf::MeasuredPsfParams p;
  p.threeD = mode() == Mode::Beads3D;
  p.size = size_->value();
  p.sizeZ = p.threeD ? sizeZ_->value() : 0;
  p.clipSigma = clip_->value();
  if (saturation_->value() > 0) p.saturation = saturation_->value();
  return p;
}

void PsfMeasureDialog::setInputsEnabled(bool enabled) {
  for (QWidget* w : std::initializer_list<QWidget*>{mode_, pick_, remove_, clear_, addByClicking_,
                                                    size_, clip_, saturation_})
    w->setEnabled(enabled);
  sizeZ_->setEnabled(enabled && mode() == Mode::Beads3D);
  use_->setEnabled(enabled && !result_.psf.empty());
  saveButton_->setEnabled(enabled && !result_.psf.empty());
}

void PsfMeasureDialog::forgetResult() {
  result_ = {};
  resultStars_.clear();
  preview_->clearSlice();
  section_->clearSlice();
  fwhm_->clear();
  use_->setEnabled(false);
  saveButton_->setEnabled(false);
}

// Why the stars cannot be measured now (empty when they can); in 2D, the slice shown.
QString PsfMeasureDialog::whyNotMeasurable(bool threeD, render::SliceData* slice) const {
  const io::StackReader* stack = window_->stack();
  if (!stack) return tr("Open a stack first.");
  if (stars_.empty())
    return tr(
        "Add stars first: click them on the view with \"Add by clicking\" on, or pick them "
        "from the detected sources.");
  if (!threeD) {
    *slice = window_->slicePath()->currentSlice();
    if (!*slice) return tr("The slice shown is still being read; try again.");
    return {};
  }
  // The beads' boxes may lie anywhere in the stack, so all of it is read into memory.
  const io::StackInfo info = stack->info();
  const double bytes = double(info.z) * double(info.y) * double(info.x) * sizeof(float);
  const double budget = double(compute::defaultHostBudget());
  if (bytes > budget)
    return tr("Measuring beads in 3D reads the whole stack into memory: %1 MiB, more "
              "than the %2 MiB this viewer may use (half of this machine's memory). "
              "Crop the stack around the beads first, or measure stars in 2D on the "
              "slice shown.")
        .arg(bytes / 1048576.0, 0, 'f', 0)
        .arg(budget / 1048576.0, 0, 'f', 0);
  if (info.path.empty()) return tr("3D needs the stack's file, and this stack has none.");
  return {};
}

namespace {

// On the worker: the slice shown (2D), or the whole stack read again from its file (3D, the
// first half of the progress).
compute::Image measuredData(const io::StackInfo& info, bool threeD, const render::SliceData& slice,
                            const compute::Job& reading,
                            const std::function<void(double)>& progress) {
  if (!threeD) {
    compute::Image data = compute::Image::hostUninitialized({1, info.y, info.x});
    std::copy(slice->begin(), slice->end(), data.data());
    return data;
  }
  io::OpenOptions options;
  options.hdu = info.hdu;
  options.plane = info.plane;
  const auto reader = io::openStack(info.path, options);
  compute::Image data = compute::Image::hostUninitialized({info.z, info.y, info.x});
  for (int64_t k = 0; k < info.z; ++k) {
    reading.checkCancelled();
    reader->readSlice(k, data.slice(k));
    progress(0.5 * double(k + 1) / double(info.z));
  }
  return data;
}

}  // namespace

void PsfMeasureDialog::measure() {
  if (running()) return;
  render::SliceData slice;
  const compute::psf::MeasuredPsfParams p = params();
  if (const QString why = whyNotMeasurable(p.threeD, &slice); !why.isEmpty()) {
    status_->setText(why);
    return;
  }
  const io::StackInfo info = window_->stack()->info();
  std::vector<PsfStar> stars = stars_;
  if (!p.threeD)
    for (PsfStar& s : stars) s.z = 0;
  begin(p.threeD ? tr("Reading the stack…") : tr("Measuring…"));
  resultSlice_ = window_->slicePath()->currentZ();
  const quint64 generation = ++measureGeneration_;
  future_ = runForDialog<PsfMeasureDialog>(
      pool_, this,
      [this, info, p, stars, slice, generation](const PostToDialog<PsfMeasureDialog>& post) {
        auto progress = [&post](double f) {
          post([f](PsfMeasureDialog* d) { d->progress_->setValue(int(f * 1000)); });
        };
        compute::Image data = measuredData(info, p.threeD, slice, compute::Job(&stop_), progress);
        if (p.threeD) post([](PsfMeasureDialog* d) { d->status_->setText(tr("Measuring…")); });
        data.spacing = compute::spacingOf(info);
        const double start = p.threeD ? 0.5 : 0;
        compute::psf::MeasuredPsf result = compute::psf::measurePsf(
            data, stars, p,
            compute::Job(&stop_, [&](double f) { progress(start + (1 - start) * f); }));
        if (!result.psf.spacing.known) result.psf.spacing = data.spacing;
        post([result = std::move(result), stars, generation](PsfMeasureDialog* d) mutable {
          if (generation != d->measureGeneration_) {
            d->jobEnded(0, tr("Another stack was opened; measure again."));
            return;
          }
          d->showResult(std::move(result), stars);
        });
      });
}

void PsfMeasureDialog::showResult(compute::psf::MeasuredPsf result, std::vector<PsfStar> stars) {
  resultParams_ = params();
  for (size_t i = 0; i < reports_.size() && i < result.stars.size(); ++i) {
    reports_[i] = result.stars[i];
    if (resultParams_.threeD) continue;
    reports_[i]->refined.z = stars_[i].z;  // measured on the slice shown
  }
  result_ = std::move(result);
  resultStars_ = std::move(stars);
  refreshTable();
  refreshOverlay();
  const int rejected = int(result_.stars.size()) - result_.used;
  if (result_.psf.empty() || result_.used == 0) {
    forgetResult();
    jobEnded(1000, tr("No star could be used: the list's tooltips say why."));
    emit measured();
    return;
  }
  const compute::Shape s = result_.psf.shape();
  const float* centre = result_.psf.slice(s.z / 2);
  showPlane(preview_, std::vector<float>(centre, centre + s.sliceCount()), int(s.x), int(s.y));
  sectionHolder_->setVisible(s.z > 1);
  if (s.z > 1) {
    std::vector<float> xz(size_t(s.z * s.x));
    for (int64_t k = 0; k < s.z; ++k)
      for (int64_t x = 0; x < s.x; ++x) xz[size_t(k * s.x + x)] = result_.psf.at(k, s.y / 2, x);
    const compute::Spacing& sp = result_.psf.spacing;
    section_->setPixelAspect(sp.known && sp.x > 0 ? sp.z / sp.x : 1.0);
    showPlane(section_, std::move(xz), int(s.x), int(s.z));
  }

  const bool threeD = s.z > 1;
  QString text =
      threeD ? tr("FWHM x %1, y %2, z %3 px")
                   .arg(result_.fwhmX, 0, 'f', 2)
                   .arg(result_.fwhmY, 0, 'f', 2)
                   .arg(result_.fwhmZ, 0, 'f', 2)
             : tr("FWHM x %1, y %2 px").arg(result_.fwhmX, 0, 'f', 2).arg(result_.fwhmY, 0, 'f', 2);
  const compute::Spacing& sp = result_.psf.spacing;
  if (sp.known) {
    const QString unit = QString::fromStdString(sp.unit);
    text += threeD ? tr(" = %1, %2, %3 %4")
                         .arg(result_.fwhmX * sp.x, 0, 'g', 4)
                         .arg(result_.fwhmY * sp.y, 0, 'g', 4)
                         .arg(result_.fwhmZ * sp.z, 0, 'g', 4)
                         .arg(unit)
                   : tr(" = %1, %2 %3")
                         .arg(result_.fwhmX * sp.x, 0, 'g', 4)
                         .arg(result_.fwhmY * sp.y, 0, 'g', 4)
                         .arg(unit);
  }
  fwhm_->setText(text);
  jobEnded(1000, tr("%1 × %2 × %3, sum 1, from %4 of %5 %6%7.")
                     .arg(s.z)
                     .arg(s.y)
                     .arg(s.x)
                     .arg(result_.used)
                     .arg(result_.stars.size())
                     .arg(resultParams_.threeD ? tr("beads") : tr("stars"))
                     .arg(rejected > 0
                              ? tr("; %n rejected (red in the list and on the view)", "", rejected)
                              : QString()));
  emit measured();
}

QString PsfMeasureDialog::describe() const {
  const QString what = resultParams_.threeD ? (result_.used == 1 ? tr("bead") : tr("beads"))
                                            : (result_.used == 1 ? tr("star") : tr("stars"));
  return tr("measured from %1 %2").arg(result_.used).arg(what);
}

void PsfMeasureDialog::useForDeconvolution() {
  if (result_.psf.empty()) return;
  ProcessingDock* dock = window_->tool<LiveProcessing>()->dock();
  if (dock->setPsf(compute::cloneHost(result_.psf), describe())) {
    status_->setText(tr("The Processing dock deconvolves with the PSF %1.").arg(describe()));
    window_->statusBar()->showMessage(tr("Deconvolution uses the PSF %1").arg(describe()), 5000);
  } else {
    status_->setText(tr("The PSF sums to zero; the Processing dock keeps its own."));
  }
}

std::vector<std::string> PsfMeasureDialog::history() const {
  std::vector<std::string> lines;
  if (result_.psf.empty()) return lines;
  const bool threeD = resultParams_.threeD;
  const io::StackReader* stack = window_->stack();
  const QString file =
      stack ? QFileInfo(QString::fromStdString(stack->info().path)).fileName() : QString();
  auto add = [&lines](const QString& line) { lines.push_back(line.toStdString()); };
  add(QString("stacklens measured PSF: median of %1 background-subtracted, recentred cut-outs, "
              "normalised to sum 1")
          .arg(result_.used));
  add(threeD ? QString("from %1, 3D beads").arg(file)
             : QString("from %1, slice %2, 2D stars").arg(file).arg(resultSlice_));
  add(QString("size=%1 sizez=%2 clip=%3 sigma recentre=%4 iterations%5")
          .arg(resultParams_.size > 0 ? QString::number(resultParams_.size) : "auto")
          .arg(!threeD                   ? "1"
               : resultParams_.sizeZ > 0 ? QString::number(resultParams_.sizeZ)
                                         : "auto")
          .arg(resultParams_.clipSigma)
          .arg(resultParams_.recentreIterations)
          .arg(std::isfinite(resultParams_.saturation)
                   ? QString(" saturation=%1").arg(resultParams_.saturation)
                   : QString()));
  QStringList used, rejected;
  for (size_t i = 0; i < result_.stars.size() && i < resultStars_.size(); ++i) {
    const auto& report = result_.stars[i];
    if (report.used)
      used << position(report.refined, threeD);
    else
      rejected << QString("%1 %2").arg(position(resultStars_[i], threeD),
                                       QString::fromStdString(report.reason));
  }
  add(QString("stars used (0-based x, y%1): %2").arg(threeD ? ", z" : "", used.join(' ')));
  if (!rejected.isEmpty()) add(QString("stars rejected: %1").arg(rejected.join("; ")));
  return lines;
}

void PsfMeasureDialog::save(const QString& path) {
  if (result_.psf.empty()) {
    status_->setText(tr("Measure a PSF first."));
    emit saved(path, status_->text());
    return;
  }
  io::WriteOptions options;
  options.history = history();
  const compute::Spacing& sp = result_.psf.spacing;
  if (sp.known) {
    options.spacing = {sp.z, sp.y, sp.x};
    options.units = {sp.unit, sp.unit, sp.unit};
    options.spacingKnown = true;
  }
  if (const io::StackReader* stack = window_->stack()) options.sourcePath = stack->info().path;
  const compute::Image psf = result_.psf;  // shares the pixels, which are never changed
  status_->setText(tr("Saving %1…").arg(path));
  QtConcurrent::run(&pool_, [psf, options, path]() -> QString {
    try {
      const compute::Shape s = psf.shape();
      io::writeStack(path.toStdString(), psf.data(), s.z, s.y, s.x, options);
    } catch (const std::exception& e) {
      return QString::fromUtf8(e.what());
    }
    return {};
  }).then(this, [this, path](const QString& error) {
    status_->setText(error.isEmpty() ? tr("Saved %1").arg(path) : error);
    emit saved(path, error);
  });
}

void PsfMeasureDialog::chooseAndSave() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save the PSF as"), "psf.fits",
                                                    tr("Images (*.fits *.tif *.tiff)"));
  if (!path.isEmpty()) save(path);
}

PsfMeasureDialog* openPsfMeasure(MainWindow* window) {
  if (auto* open = window->findChild<PsfMeasureDialog*>(kDialogName, Qt::FindDirectChildrenOnly)) {
    open->show();
    open->raise();
    open->activateWindow();
    return open;
  }
  auto* dialog = new PsfMeasureDialog(window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  return dialog;
}

void installPsfMeasureTool(MainWindow* window) {
  if (window->findChild<QAction*>("analysisMeasurePsf")) return;  // once per window
  QAction* action =
      window->analysisMenu()->addAction(QObject::tr("Measure &PSF from stars/beads…"));
  action->setObjectName("analysisMeasurePsf");
  QObject::connect(action, &QAction::triggered, window, [window] { openPsfMeasure(window); });
}

}  // namespace stacklens::ui
