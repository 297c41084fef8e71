// The viewer's main window: it assembles the view, the navigation, the docks and the menus, has
// the tools it is given install themselves, and wires the slider to the slice path, which takes
// each slice to the view and the tools. It tells the tools what the user does in the view.
#include "ui/frame/main_window.h"

#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QMessageBox>
#include <QMimeData>
#include <QStatusBar>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <atomic>
#include <cmath>

#include "io/read_stop.h"
#include "ui/display/view_decorations.h"
#include "ui/display/view_export.h"
#include "ui/frame/pixel_readout.h"
#include "ui/frame/tools_bar.h"
#include "ui/frame/window_docks.h"
#include "ui/frame/window_menus.h"
#include "ui/stack/stack_opener.h"
#include "ui/state/recent_files.h"

namespace stacklens::ui {

using render::LimitsMode;
using render::SliceView;

namespace {
// A local file or folder, or an http(s) URL (a link dragged from a browser: OME-Zarr over HTTP).
QString droppedFile(const QMimeData* mime) {
  const auto urls = mime->urls();
  if (urls.isEmpty()) return {};
  const QUrl& url = urls.first();
  if (url.isLocalFile()) return url.toLocalFile();
  const QString scheme = url.scheme().toLower();
  return scheme == "http" || scheme == "https" ? url.toString() : QString();
}

QPoint nearestPixel(QPointF p) { return QPoint(int(std::lround(p.x())), int(std::lround(p.y()))); }
}  // namespace

MainWindow::MainWindow(void (*installTools)(MainWindow*), QWidget* parent) : QMainWindow(parent) {
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
  QWidget* viewBox = embedView(view_, central);
  viewBox->setMinimumSize(320, 240);
  nav_ = new NavigationBar(central);
  layout->addWidget(viewBox, 1);
  layout->addWidget(nav_);
  setCentralWidget(central);

  readout_ = new PixelReadout(this);
  statusBar()->addWidget(readout_, 1);
  statusBar()->addPermanentWidget(readout_->shapeLabel());
  opener_ = new StackOpener(&readPool_, this);
  connect(opener_, &StackOpener::opened, this, [this](const QString& path, const OpenedStack& s) {
    path_ = path;
    install(s);
    if (s.fromFile) recent_->remember(path);
    emit stackOpened(path);
  });
  connect(opener_, &StackOpener::failed, this, [this](const QString& path, const QString& why) {
    reportError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), why);
    emit openFailed(why);
  });

  const DockRequests requests{
      [this](QPoint crosshair, int z) {
        setCrosshair(crosshair);
        nav_->setValue(z);
      },
      [this](const QString& title, const QString& message) { reportError(title, message); }};
  WindowDocks docks = buildWindowDocks(this, view_, &readPool_, requests);
  display_ = docks.display;
  connect(display_, &DisplayPanel::displayChanged, this, &MainWindow::applyDisplay);
  connect(display_, &DisplayPanel::limitsModeChanged, this, &MainWindow::computeLimits);
  // The tools that follow the open stack and the slice shown, in the order they are told.
  tools_ = {decorations_.get(), readout_};
  tools_.insert(tools_.end(), docks.tools.begin(), docks.tools.end());
  slicePath_ = new SlicePath({view_, nav_, display_, &tools_, &readPool_}, this);
  connect(slicePath_, &SlicePath::readFailed, this, &MainWindow::reportError);
  buildMenus();
  installTools(this);
  arrangeDefaultLayout(this);

  connect(nav_, &NavigationBar::valueChanged, slicePath_, &SlicePath::request);
  connect(view_, &SliceView::hovered, this, &MainWindow::hoverAt);
  connect(view_, &SliceView::clicked, this, [this](QPointF p) { setCrosshair(nearestPixel(p)); });
  connect(view_, &SliceView::lineDrawn, this, &MainWindow::setLine);
  connect(view_, &SliceView::regionDrawn, this, &MainWindow::setRegion);

  settings_ = loadViewerSettings();
  applySettings();
  restoreWindowLayout(this, settings_);
}

MainWindow::~MainWindow() {
  // Workers post results to this object and the tools: stop the long ones (a save, a preload) at
  // their next slice and let them finish before it goes.
  for (ViewerTool* tool : tools_) tool->stop();
  slicePath_->stop();
  // A read waiting on a stalled server ends now rather than at its timeout; later windows (the
  // tests make several) read again.
  std::atomic<bool> stopReads{true};
  io::stopReadsWhen(&stopReads);
  readPool_.waitForDone();
  io::stopReadsWhen(nullptr);
}

void MainWindow::buildMenus() {
  menus_ = buildWindowMenus(this, view_, decorations_.get(), nav_);
  recent_ = new RecentFiles(menus_.recent, &settings_, this);
  connect(recent_, &RecentFiles::chosen, this, [this](const QString& path) { openFile(path); });

  toolsBar_ = new ToolsBar(view_, this);
  addToolBar(toolsBar_);
  // Another HDU (at its first plane) or another plane of this HDU: the file is opened again.
  connect(toolsBar_, &ToolsBar::hduChosen, this, [this](int hdu) {
    openFile(path_, io::OpenOptions{hdu, 0});
  });
  connect(toolsBar_, &ToolsBar::planeChosen, this, [this](int plane) {
    if (plane != info_.plane && !path_.isEmpty())
      openFile(path_, io::OpenOptions{info_.hdu, plane});
  });
}

void MainWindow::applySettings() {
  // Each setter feeds back into settings_ through applyDisplay(): apply from a copy.
  applyViewerSettings(display_, ViewerSettings(settings_));
  recent_->rebuild();
}

void MainWindow::openFile(const QString& path, io::OpenOptions options) {
  openingMessage_ = tr("Opening %1…").arg(QFileInfo(path).fileName());
  statusBar()->showMessage(openingMessage_);
  opener_->setLargePlaneBytes(slicePath_->largePlaneBytes());
  opener_->open(path, options);
}

void MainWindow::openReader(std::shared_ptr<io::StackReader> reader) {
  opener_->setLargePlaneBytes(slicePath_->largePlaneBytes());
  opener_->openReader(std::move(reader));
}

void MainWindow::install(const OpenedStack& opened) {
  reader_ = opened.reader;
  info_ = reader_->info();
  emit stackInstalled();
  crosshair_.reset();
  view_->setCrosshair(std::nullopt);
  toolsBar_->showStack(info_);
  setWindowTitle(QFileInfo(QString::fromStdString(info_.path)).fileName() + " — StackLens");
  // Only "Opening…": a reader's warning while opening (chunks answered 403) must stay readable.
  if (statusBar()->currentMessage() == openingMessage_) statusBar()->clearMessage();
  slicePath_->setStack(opened);
  // Small cubes get their ortho views straight away; big ones when the user clicks.
  const double bytes = double(info_.x) * info_.y * info_.z * sizeof(float);
  if (info_.z > 1 && slicePath_->wholeSlices() && bytes <= 512.0 * (1 << 20))
    setCrosshair(QPoint(int(info_.x / 2), int(info_.y / 2)));
}

void MainWindow::applyDisplay(const render::DisplaySettings& display) {
  view_->setDisplay(display);
  for (ViewerTool* tool : tools_) tool->displayChanged(display);
  settings_.colormap = display.colormap;
  settings_.scale = render::scaleName(display.scale);
  settings_.invert = display.invert;
  settings_.smooth = display.smooth;
  settings_.nanColour = display.nanColour;
  settings_.limitsMode = render::limitsModeName(display_->limitsMode());
}

void MainWindow::computeLimits(LimitsMode mode) {
  settings_.limitsMode = render::limitsModeName(mode);
  slicePath_->showLimits(mode);
}

void MainWindow::hoverAt(QPointF imagePos) {
  for (ViewerTool* tool : tools_) tool->pointerAt(imagePos, slicePath_->currentZ());
}

void MainWindow::setLine(QPointF from, QPointF to) {
  for (ViewerTool* tool : tools_) tool->lineDrawn(from, to);
}

void MainWindow::setRegion(QRectF rect, bool ellipse) {
  for (ViewerTool* tool : tools_) tool->regionDrawn(rect, ellipse);
}

void MainWindow::setCrosshair(QPoint pixel) {
  if (!reader_) return;
  pixel.setX(std::clamp<int>(pixel.x(), 0, int(info_.x) - 1));
  pixel.setY(std::clamp<int>(pixel.y(), 0, int(info_.y) - 1));
  crosshair_ = pixel;
  view_->setCrosshair(QPointF(pixel));
  for (ViewerTool* tool : tools_)
    tool->crosshairMoved(pixel, slicePath_->currentZ(), slicePath_->wholeSlices());
}

QString MainWindow::exportPng(const QString& path, bool colorbar) {
  if (!slicePath_->currentSlice() && !slicePath_->overview())
    return tr("nothing to export: no stack is open");
  return exportViewPng(view_, path, colorbar, QString::fromStdString(info_.path));
}

void MainWindow::reportError(const QString& title, const QString& message) {
  statusBar()->showMessage(title + ": " + message, 10000);
  emit errorReported(message);
  if (quiet_) return;
  // Window-modal and non-blocking: no nested event loop in the middle of a slot.
  auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::addMenuAction(MenuPlace place, QAction* action) {
  const WindowMenus::Place& at = menus_.places[size_t(place)];
  at.menu->insertAction(at.before, action);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  slicePath_->stop();  // background reads and a save stop at their next slice
  for (ViewerTool* tool : tools_) tool->stop();
  settings_.geometry = saveGeometry();
  settings_.windowState = saveState();
  saveViewerSettings(settings_);
  QMainWindow::closeEvent(event);
}

// A file, folder or http(s) URL dropped on the window is opened (the first, when several are).
void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedFile(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = droppedFile(event->mimeData());
  if (path.isEmpty()) return;
  openFile(path);
  event->acceptProposedAction();
}

}  // namespace stacklens::ui
