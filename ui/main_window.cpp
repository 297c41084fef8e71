// The viewer's main window: wiring of the view, navigation, docks, menus and worker reads.
#include "ui/main_window.h"

#include "ui/line_profile_tool.h"
#include "ui/live_processing.h"

#include <QActionGroup>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScreen>
#include <QStatusBar>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <limits>

#include "compute/device_list.h"
#include "io/file_checks.h"
#include "io/stack_writer.h"
#include "ui/catalog_panel.h"
#include "ui/channels_tool.h"
#include "ui/contours_tool.h"
#include "ui/copy_command.h"
#include "ui/header_dialog.h"
#include "ui/histogram_tool.h"
#include "ui/history_tool.h"
#include "ui/library_messages.h"
#include "ui/movie_dialog.h"
#include "ui/ortho_views.h"
#include "ui/pixel_readout.h"
#include "ui/profiles.h"
#include "ui/projection_dialog.h"
#include "ui/psf_dialog.h"
#include "ui/psf_measure_dialog.h"
#include "ui/region_stats_tool.h"
#include "ui/regions_panel.h"
#include "ui/save_tool.h"
#include "ui/session_tool.h"
#include "ui/slice_source.h"
#include "ui/stack_opener.h"
#include "ui/timing_panel.h"
#include "ui/tools_bar.h"
#include "ui/view_decorations.h"
#include "ui/view_export.h"
#include "ui/volume_panel.h"
#include "ui/volume_tool.h"
#include "ui/whole_stack_dialog.h"
#include "ui/window_menus.h"

#include "io/wcs.h"

namespace stacklens::ui {

using render::LimitsMode;
using render::SliceView;

static const char* kStackFilter =
    "Stacks (*.fits *.fit *.fts *.fz *.fits.gz *.tif *.tiff);;FITS (*.fits *.fit *.fts *.fz "
    "*.fits.gz);;TIFF (*.tif *.tiff);;All files (*)";

// A SliceView (a QWindow) inside the widget tree; keyboard focus stays with the widgets so the
// window's shortcuts keep working after a click in the view.
static QWidget* embed(SliceView* view, QWidget* parent) {
  QWidget* box = QWidget::createWindowContainer(view, parent);
  box->setFocusPolicy(Qt::NoFocus);
  return box;
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("StackLens");
  setAcceptDrops(true);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
  readPool_.setMaxThreadCount(2);

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  view_ = new SliceView();
  decorations_ = std::make_unique<ViewDecorations>(view_);
  QWidget* viewBox = embed(view_, central);
  viewBox->setMinimumSize(320, 240);
  nav_ = new NavigationBar(central);
  layout->addWidget(viewBox, 1);
  layout->addWidget(nav_);
  setCentralWidget(central);

  readout_ = new PixelReadout(this);
  shapeLabel_ = new QLabel(this);
  statusBar()->addWidget(readout_, 1);
  statusBar()->addPermanentWidget(shapeLabel_);
  opener_ = new StackOpener(&readPool_, this);
  connect(opener_, &StackOpener::opened, this, [this](const QString& path, const OpenedStack& s) {
    path_ = path;
    install(s.reader, s.z, s.slice);
    if (s.fromFile) rememberFile(path);
    emit stackOpened(path);
  });
  connect(opener_, &StackOpener::failed, this, [this](const QString& path, const QString& why) {
    reportError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), why);
    emit openFailed(why);
  });
  source_ = new SliceSource(&readPool_, this);
  connect(source_, &SliceSource::readFailed, this, [this](int z, const QString& why) {
    reportError(tr("Cannot read slice %1").arg(z), why);
  });
  saveTool_ = new SaveTool(statusBar(), &readPool_, this);
  connect(saveTool_, &SaveTool::saved, this, &MainWindow::saved);
  connect(saveTool_, &SaveTool::cancelled, this, &MainWindow::saveCancelled);
  connect(saveTool_, &SaveTool::failed, this, [this](const QString& path, const QString& why) {
    reportError(tr("Cannot save %1").arg(QFileInfo(path).fileName()), why);
  });

  buildDocks();
  buildMenus();
  live_ = new LiveProcessing(this, view_);
  // Tools that add themselves to the window (menus, docks, overlays).
  SettingsHistory* history = installHistory(this);
  installCopyCommand(this);
  installPsfMeasureTool(this);
  followRegions(history, installRegionsTool(this));
  installCatalogTool(this);
  showLibraryMessages(statusBar());
  connect(SessionTool::install(this), &SessionTool::failed, this,
          [this](const QString& why) { reportError(tr("Open session"), why); });
  connect(live_->dock(), &ProcessingDock::psfGeneratorRequested, this,
          &MainWindow::openPsfGenerator);
  arrangeDefaultLayout();
  connect(live_, &LiveProcessing::processedSliceReady, this, &MainWindow::setProcessedSlice);
  connect(live_, &LiveProcessing::centreOn, this, [this](QPointF p) {
    setCrosshair(QPoint(int(std::lround(p.x())), int(std::lround(p.y()))));
  });

  connect(nav_, &NavigationBar::valueChanged, this, &MainWindow::requestSlice);
  connect(view_, &SliceView::hovered, this, &MainWindow::hoverAt);
  connect(view_, &SliceView::clicked, this, [this](QPointF p) {
    setCrosshair(QPoint(int(std::lround(p.x())), int(std::lround(p.y()))));
  });
  connect(view_, &SliceView::lineDrawn, this, &MainWindow::setLine);
  connect(view_, &SliceView::regionDrawn, this, &MainWindow::setRegion);
  connect(display_, &DisplayPanel::displayChanged, this, &MainWindow::applyDisplay);
  connect(display_, &DisplayPanel::limitsModeChanged, this, &MainWindow::computeLimits);
  connect(histogramTool_, &HistogramTool::limitsDragged, this, [this](double low, double high) {
    display_->setManualLimits({float(low), float(high)});
  });

  settings_ = loadViewerSettings();
  applySettings();
  // The default size, within the screen: on a 1280-wide screen 1400 pixels cut off the docks.
  QSize size(1400, 940);
  if (QScreen* screen = QGuiApplication::primaryScreen())
    size = size.boundedTo(screen->availableGeometry().size() * 0.95);
  resize(size);
  if (!settings_.geometry.isEmpty()) restoreGeometry(settings_.geometry);
  if (!settings_.windowState.isEmpty())
    restoreState(settings_.windowState);
  else
    QTimer::singleShot(0, this, &MainWindow::sizeDefaultDocks);
}

MainWindow::~MainWindow() {
  // Workers post results to this object: stop the long ones (a save, a preload) at their next
  // slice and let them finish before it goes.
  ortho_->cancel();
  source_->stop();
  cancelSave();
  readPool_.waitForDone();
}

void MainWindow::buildDocks() {
  auto dock = [this](const QString& title, const QString& name, QWidget* content,
                     Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);
    d->setWidget(content);
    addDockWidget(area, d);
    return d;
  };
  display_ = new DisplayPanel(this);
  dock(tr("Display"), "displayDock", display_, Qt::RightDockWidgetArea);

  histogramTool_ = new HistogramTool(&readPool_, this);
  histogramDock_ =
      dock(tr("Histogram"), "histogramDock", histogramTool_->widget(), Qt::RightDockWidgetArea);
  histogramTool_->setDock(histogramDock_);
  connect(histogramTool_, &HistogramTool::updated, this, &MainWindow::histogramUpdated);

  regionTool_ = new RegionStatsTool(view_, this);
  dock(tr("Region statistics"), "regionDock", regionTool_->label(), Qt::RightDockWidgetArea);

  ortho_ = new OrthoViews(&readPool_, this);
  QWidget* xzBox = embed(ortho_->xzView(), this);
  QWidget* yzBox = embed(ortho_->yzView(), this);
  xzBox->setMinimumSize(160, 120);
  yzBox->setMinimumSize(120, 160);
  xzDock_ = dock(tr("XZ at crosshair"), "xzDock", xzBox, Qt::BottomDockWidgetArea);
  yzDock_ = dock(tr("YZ at crosshair"), "yzDock", yzBox, Qt::LeftDockWidgetArea);
  connect(ortho_, &OrthoViews::pointed, this, [this](QPoint crosshair, int z) {
    setCrosshair(crosshair);
    nav_->setValue(z);
  });
  connect(ortho_, &OrthoViews::updated, this, &MainWindow::orthoViewsUpdated);
  connect(ortho_, &OrthoViews::failed, this, [this](const QString& why) {
    reportError(tr("Cannot build the orthogonal views"), why);
  });

  lineTool_ = new LineProfileTool(view_, this);
  auto* lineDock =
      dock(tr("Line profile"), "lineProfileDock", lineTool_->plot(), Qt::RightDockWidgetArea);
  auto* zDock =
      dock(tr("Z profile at cursor"), "zProfileDock", ortho_->zProfile(), Qt::RightDockWidgetArea);
  auto* regionDock = findChild<QDockWidget*>("regionDock");
  tabifyDockWidget(regionDock, lineDock);
  tabifyDockWidget(lineDock, zDock);
  zDock->raise();
  resizeDocks({xzDock_}, {230}, Qt::Vertical);
  resizeDocks({yzDock_}, {230}, Qt::Horizontal);
}

// The default layout, made for a 1280 × 1024 screen (a saved layout replaces it). The right
// column takes the full height, and processing joins its analysis tabs: one above another it
// got 60 pixels and a scroll bar. The bottom row (XZ, timings) stays low so that the slice view
// keeps most of the height.
void MainWindow::arrangeDefaultLayout() {
  setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
  auto* zDock = findChild<QDockWidget*>("zProfileDock");
  auto* processing = findChild<QDockWidget*>("processingDock");
  if (zDock && processing) tabifyDockWidget(zDock, processing);
  if (zDock) zDock->raise();
}

// Dock sizes take effect once the window is laid out, hence after the first show.
void MainWindow::sizeDefaultDocks() {
  if (auto* displayDock = findChild<QDockWidget*>("displayDock"))
    resizeDocks({displayDock, histogramDock_}, {190, 150}, Qt::Vertical);
  resizeDocks({xzDock_}, {230}, Qt::Vertical);
  resizeDocks({xzDock_}, {320}, Qt::Horizontal);
}

void MainWindow::buildMenus() {
  const WindowMenus menus = buildWindowMenus(this);
  fileMenu_ = menus.file;
  recentMenu_ = menus.recent;
  editMenu_ = menus.edit;
  analysisMenu_ = menus.analysis;

  toolsBar_ = new ToolsBar(view_, this);
  addToolBar(toolsBar_);
  connect(toolsBar_, &ToolsBar::hduChosen, this, [this](int hdu) {
    io::OpenOptions o;
    o.hdu = hdu;
    openFile(path_, o);
  });
  connect(toolsBar_, &ToolsBar::planeChosen, this, [this](int plane) {
    if (plane == info_.plane || path_.isEmpty()) return;
    io::OpenOptions o;
    o.hdu = info_.hdu;
    o.plane = plane;
    openFile(path_, o);
  });
}

void MainWindow::applySettings() {
  // Each setter feeds back into settings_ through applyDisplay(): apply from a copy.
  applyViewerSettings(display_, ViewerSettings(settings_));
  rebuildRecentMenu();
}

// ---- opening ----

void MainWindow::openFile(const QString& path, io::OpenOptions options) {
  statusBar()->showMessage(tr("Opening %1…").arg(QFileInfo(path).fileName()));
  opener_->open(path, options);
}

void MainWindow::openReader(std::shared_ptr<io::StackReader> reader) {
  opener_->openReader(std::move(reader));
}

void MainWindow::install(std::shared_ptr<io::StackReader> reader, int z, SliceData first) {
  reader_ = std::move(reader);
  decorations_->setStack(reader_);
  info_ = reader_->info();
  emit stackInstalled();
  source_->setStack(reader_, cacheBudget_, z, first);
  // The processing worker copies the slices this window has read instead of reading them again.
  live_->setStack(reader_, [cache = source_->cache()](int64_t k, float* out) {
    return SliceSource::copyCached(*cache, k, out);
  });
  live_->sliceRequested(z);
  ++sliceGeneration_;
  readout_->setStack(reader_);
  limitsValid_ = false;
  crosshair_.reset();
  lineTool_->clear();
  regionTool_->clear();
  ortho_->setStack(reader_, source_->cache());
  view_->setCrosshair(std::nullopt);
  view_->clearSlice();
  // FITS images have their first row at the bottom; microscopy TIFFs at the top.
  view_->setOriginBottom(info_.format == "fits");

  {
    const QSignalBlocker block(nav_);
    nav_->setCount(static_cast<int>(info_.z));
    nav_->setValue(z);
  }
  toolsBar_->showStack(info_);
  const bool cube = info_.z > 1;
  xzDock_->setVisible(cube);
  yzDock_->setVisible(cube);
  if (auto* d = findChild<QDockWidget*>(cube ? "zProfileDock" : "regionDock")) d->raise();
  shapeLabel_->setText(QString("%1 × %2 × %3  %4  %5")
                           .arg(info_.x)
                           .arg(info_.y)
                           .arg(info_.z)
                           .arg(io::dtypeName(info_.dtype))
                           .arg(QString::fromStdString(info_.format)));
  setWindowTitle(QFileInfo(QString::fromStdString(info_.path)).fileName() + " — StackLens");
  statusBar()->clearMessage();
  view_->fitToWindow();
  currentZ_ = requestedZ_ = z;
  showSlice(z, std::move(first));
  // Small cubes get their ortho views straight away; big ones when the user clicks.
  const double bytes = double(info_.x) * info_.y * info_.z * sizeof(float);
  if (cube && bytes <= 512.0 * (1 << 20)) setCrosshair(QPoint(int(info_.x / 2), int(info_.y / 2)));
}

// ---- slices ----

void MainWindow::requestSlice(int z) {
  if (!reader_) return;
  live_->sliceRequested(z);
  emit sliceRequested(z);
  requestedZ_ = z;
  const quint64 generation = ++sliceGeneration_;
  if (!source_->cache()->contains(z)) updateWorldLabel();  // the label leads while it reads
  source_->fetch(z, [this, z, generation](SliceData s) {
    if (generation == sliceGeneration_ && s) showSlice(z, std::move(s));
  });
}

void MainWindow::showSlice(int z, SliceData data) {
  currentZ_ = requestedZ_ = z;
  decorations_->setSlice(z);
  current_ = std::move(data);
  const int width = static_cast<int>(info_.x), height = static_cast<int>(info_.y);
  if (!live_->holdRawSlice(z, current_, width, height)) view_->setSlice(current_, width, height);
  if (!limitsValid_) {
    limitsValid_ = true;
    computeLimits(display_->limitsMode());
  }
  updateWorldLabel();
  readout_->setSlice(z, current_);
  // While scrubbing, the histogram, line profile and region statistics wait until the slider
  // rests.
  histogramTool_->setSlice(current_);
  lineTool_->sliceShown(current_, width, height);
  regionTool_->sliceShown(z, current_, width, height);
  ortho_->followSlice(z);
  source_->prefetchAround(z);
  live_->rawSliceShown(z);
  emit sliceShown(z);
}

void MainWindow::setProcessedSlice(int z, SliceData processed) {
  readout_->setProcessed(z, std::move(processed));
}

void MainWindow::preload(int count) {
  if (!reader_) return;
  source_->preload(count, [this](const QString& error) {
    if (!error.isEmpty()) reportError(tr("Cannot read the stack"), error);
    emit preloaded();
  });
}

// ---- display ----

void MainWindow::applyDisplay(const render::DisplaySettings& display) {
  view_->setDisplay(display);
  ortho_->setDisplay(display);
  histogramTool_->setLimits(display.limits.low, display.limits.high);
  settings_.colormap = display.colormap;
  settings_.scale = render::scaleName(display.scale);
  settings_.invert = display.invert;
  settings_.smooth = display.smooth;
  settings_.nanColour = display.nanColour;
  settings_.limitsMode = render::limitsModeName(display_->limitsMode());
}

void MainWindow::computeLimits(LimitsMode mode) {
  settings_.limitsMode = render::limitsModeName(mode);
  if (mode == LimitsMode::Manual || !current_) return;
  display_->showLimits(render::sliceLimits(mode, current_->data(), current_->size()));
}

// ---- readout and analysis ----

void MainWindow::updateWorldLabel() {
  nav_->setWorldText(
      NavigationBar::worldText(info_, reader_ ? reader_->wcs() : nullptr, requestedZ_));
}

void MainWindow::hoverAt(QPointF imagePos) {
  readout_->hover(imagePos);
  ortho_->hover(imagePos, currentZ_);  // the z profile, when the stack is in memory
}

void MainWindow::setLine(QPointF from, QPointF to) {
  lineTool_->setLine(from, to);
  if (auto* d = findChild<QDockWidget*>("lineProfileDock")) d->raise();
}

void MainWindow::setRegion(QRectF rect, bool ellipse) {
  regionTool_->setRegion(rect, ellipse);
  if (auto* d = findChild<QDockWidget*>("regionDock")) d->raise();
}

void MainWindow::setCrosshair(QPoint pixel) {
  if (!reader_) return;
  pixel.setX(std::clamp<int>(pixel.x(), 0, int(info_.x) - 1));
  pixel.setY(std::clamp<int>(pixel.y(), 0, int(info_.y) - 1));
  crosshair_ = pixel;
  view_->setCrosshair(QPointF(pixel));
  ortho_->setCrosshair(crosshair_, currentZ_);
}

render::SliceView* MainWindow::xzView() const { return ortho_->xzView(); }
render::SliceView* MainWindow::yzView() const { return ortho_->yzView(); }
PlotWidget* MainWindow::zProfilePlot() const { return ortho_->zProfile(); }
QComboBox* MainWindow::hduBox() const { return toolsBar_->hduBox(); }
QSpinBox* MainWindow::planeBox() const { return toolsBar_->planeBox(); }
void MainWindow::addReadoutPart(std::function<QString(QPointF)> part) {
  readout_->addPart(std::move(part));
}
void MainWindow::refreshReadout() { readout_->refresh(); }
QString MainWindow::readout() const { return readout_->text(); }
SliceCache* MainWindow::cache() const { return source_->cache().get(); }
HistogramWidget* MainWindow::histogram() const { return histogramTool_->histogram(); }
PlotWidget* MainWindow::lineProfilePlot() const { return lineTool_->plot(); }
const RegionStats& MainWindow::regionStats() const { return regionTool_->stats(); }

// ---- output ----

QString MainWindow::exportPng(const QString& path, bool colorbar) {
  if (!current_) return tr("nothing to export: no stack is open");
  QImage image = view_->grabFramebuffer();
  if (colorbar) {
    const auto& d = view_->display();
    const std::vector<float>* cdf = d.scale == render::Scale::HistEq ? &view_->cdf() : nullptr;
    image = withColorbar(image, d, cdf);
  }
  return savePngAtomically(image, pngPath(path), QString::fromStdString(info_.path));
}

void MainWindow::saveData(const QString& path, bool wholeStack) {
  if (!reader_) {
    reportError(tr("Cannot save"), tr("no stack is open"));
    return;
  }
  SaveRequest request;
  request.reader = reader_;
  request.cache = source_->cache();
  request.info = info_;
  request.first = wholeStack ? 0 : currentZ_;
  request.count = wholeStack ? info_.z : 1;
  request.path = path.toStdString();
  if (!saveTool_->save(request, path))
    reportError(tr("Cannot save %1").arg(QFileInfo(path).fileName()),
                tr("another save is still running"));
}

void MainWindow::cancelSave() { saveTool_->cancel(); }

// ---- dialogs, files, settings ----

void MainWindow::reportError(const QString& title, const QString& message) {
  statusBar()->showMessage(title + ": " + message, 10000);
  emit errorReported(message);
  if (quiet_) return;
  // Window-modal and non-blocking: no nested event loop in the middle of a slot.
  auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::rememberFile(const QString& path) {
  settings_.addRecent(QFileInfo(path).absoluteFilePath());
  settings_.lastFolder = QFileInfo(path).absolutePath();
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  for (const QString& path : settings_.recentFiles)
    recentMenu_->addAction(path, this, [this, path] { openFile(path); });
  recentMenu_->setEnabled(!settings_.recentFiles.isEmpty());
}

void MainWindow::chooseAndOpen() {
  auto* dialog = new QFileDialog(this, tr("Open stack"), settings_.lastFolder, kStackFilter);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setFileMode(QFileDialog::ExistingFile);
  connect(dialog, &QFileDialog::fileSelected, this,
          [this](const QString& path) { openFile(path); });
  dialog->open();
}

void MainWindow::chooseAndSave(bool wholeStack) {
  if (!reader_) return;
  auto* dialog = new QFileDialog(this, wholeStack ? tr("Save stack") : tr("Save slice"),
                                 settings_.lastFolder, "FITS (*.fits);;TIFF (*.tif *.tiff)");
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setAcceptMode(QFileDialog::AcceptSave);
  dialog->setDefaultSuffix("fits");
  connect(dialog, &QFileDialog::fileSelected, this,
          [this, wholeStack](const QString& path) { saveData(path, wholeStack); });
  dialog->open();
}

void MainWindow::chooseAndExport(bool colorbar) {
  if (!current_) return;
  auto* dialog = new QFileDialog(this, tr("Export view"), settings_.lastFolder, "PNG (*.png)");
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setAcceptMode(QFileDialog::AcceptSave);
  dialog->setDefaultSuffix("png");
  connect(dialog, &QFileDialog::fileSelected, this, [this, colorbar](const QString& path) {
    const QString error = exportPng(path, colorbar);
    if (!error.isEmpty()) reportError(tr("Cannot export the view"), error);
  });
  dialog->open();
}

// The Processing dock's pipeline at every slice, or 3D Richardson–Lucy over the whole stack with
// its settings, into a new file that is opened when done; the dialog runs it off the GUI thread.

void MainWindow::processWholeStack() { openWholeStack(this); }
ProjectionDialog* MainWindow::projectStack() { return openProjection(this); }
PsfDialog* MainWindow::openPsfGenerator() { return ui::openPsfGenerator(this); }
MovieDialog* MainWindow::exportMovie() { return openMovieExport(this); }
void MainWindow::showHeader() { ui::showHeader(this); }

bool MainWindow::gpuChosen() const {
  return live_->dock()->backendChoice() != ProcessingDock::BackendChoice::Cpu &&
         live_->dock()->gpuAvailable();
}

VolumePanel* MainWindow::showVolumeView() { return ui::showVolumeView(this); }

ContoursPanel* MainWindow::showContours() { return ui::showContours(this); }

ChannelsPanel* MainWindow::showChannels() { return ui::showChannels(this); }

void MainWindow::closeEvent(QCloseEvent* event) {
  source_->stop();  // background reads and a save stop at their next slice
  cancelSave();
  settings_.geometry = saveGeometry();
  settings_.windowState = saveState();
  saveViewerSettings(settings_);
  QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() && event->mimeData()->urls().first().isLocalFile())
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.first().isLocalFile()) return;
  openFile(urls.first().toLocalFile());
  event->acceptProposedAction();
}

}  // namespace stacklens::ui
