// Capturing and restoring the window's state. The PSF is put back before the pipeline (the
// pipeline names it); the view's zoom and centre last, after the slice has been shown.
#include "ui/state/session_tool.h"

#include <QAction>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <QTimer>

#include "ui/analysis/regions_panel.h"
#include "ui/display/display_panel.h"
#include "ui/frame/main_window.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"

namespace stacklens::ui {
namespace {

const char* const kOverlayActions[] = {"viewColorbar", "viewCompass", "viewScaleBar", "viewGrid"};

bool overlayOn(const MainWindow* w, const char* name) {
  const auto* a = w->findChild<QAction*>(name);
  return a && a->isChecked();
}

void setOverlay(MainWindow* w, const char* name, bool on) {
  if (auto* a = w->findChild<QAction*>(name)) a->setChecked(on);
}

}  // namespace

SessionTool* SessionTool::install(MainWindow* window) {
  if (auto* existing = window->findChild<SessionTool*>()) return existing;
  auto* tool = new SessionTool(window);
  QMenu* file = window->fileMenu();
  QAction* before = nullptr;  // above "Quit"
  for (QAction* a : file->actions())
    if (a->shortcut() == QKeySequence(QKeySequence::Quit)) before = a;
  auto* open = new QAction(QObject::tr("Open sess&ion…"), tool);
  connect(open, &QAction::triggered, tool, &SessionTool::chooseAndOpen);
  auto* save = new QAction(QObject::tr("Save sessio&n…"), tool);
  connect(save, &QAction::triggered, tool, &SessionTool::chooseAndSave);
  file->insertActions(before, {open, save});
  file->insertSeparator(before);
  // The regions tool's list, as DS9 text in the image frame.
  if (auto* regions = window->findChild<RegionsPanel*>())
    tool->setRegionsAccess(
        [regions] { return QString::fromStdString(io::ds9RegionText(regions->regions())); },
        [regions](const QString& ds9) {
          const io::RegionFile file = io::parseDs9Regions(ds9.toStdString());
          regions->setRegions(io::regionsInPixels(file.regions, nullptr, 0, nullptr));
        });
  return tool;
}

SessionTool::SessionTool(MainWindow* window) : QObject(window), window_(window) {}

void SessionTool::setRegionsAccess(std::function<QString()> capture,
                                   std::function<void(const QString&)> restore) {
  captureRegions_ = std::move(capture);
  restoreRegions_ = std::move(restore);
}

Session SessionTool::capture() const {
  Session s;
  const io::StackInfo& info = window_->info();
  s.file = QString::fromStdString(info.path);
  s.hdu = info.hdu;
  s.plane = info.plane;
  s.slice = window_->slicePath()->currentZ();
  const render::SliceView* view = window_->sliceView();
  s.fit = view->fitsWindow();
  s.zoom = view->zoom();
  s.centre = view->centre();
  if (auto c = window_->crosshair()) s.crosshair = QPointF(*c);
  s.display = window_->displayPanel()->settings();
  s.limitsMode = window_->displayPanel()->limitsMode();
  const ProcessingDock* dock = window_->tool<LiveProcessing>()->dock();
  s.pipeline = dock->pipeline();
  s.psfName = dock->psfName();
  s.psfFile = dock->psfFile();
  s.backend = int(dock->backendChoice());
  s.viewMode = int(dock->viewMode());
  if (captureRegions_) s.regions = captureRegions_();
  s.colorbar = overlayOn(window_, kOverlayActions[0]);
  s.compass = overlayOn(window_, kOverlayActions[1]);
  s.scaleBar = overlayOn(window_, kOverlayActions[2]);
  s.grid = overlayOn(window_, kOverlayActions[3]);
  return s;
}

QString SessionTool::save(const QString& path, QStringList* warnings) const {
  if (!window_->stack()) return tr("No stack is open: there is no session to save.");
  return writeSession(path, capture(), warnings);
}

bool SessionTool::open(const QString& path) {
  QString error;
  std::optional<Session> session = readSession(path, &error);
  if (!session) {
    emit failed(error);
    return false;
  }
  restore(*session);
  return true;
}

void SessionTool::restore(const Session& session) {
  const io::StackInfo& info = window_->info();
  const bool same = window_->stack() && QString::fromStdString(info.path) == session.file &&
                    (session.hdu < 0 || session.hdu == info.hdu) && session.plane == info.plane;
  if (same) {
    applyAfterOpen(session);
    return;
  }
  // One of the two signals answers; the other connection is dropped with it.
  auto opened = std::make_shared<QMetaObject::Connection>();
  auto failedOpen = std::make_shared<QMetaObject::Connection>();
  *opened = connect(window_, &MainWindow::stackOpened, this, [=, this] {
    disconnect(*opened);
    disconnect(*failedOpen);
    applyAfterOpen(session);
  });
  *failedOpen = connect(window_, &MainWindow::openFailed, this, [=, this](const QString& why) {
    disconnect(*opened);
    disconnect(*failedOpen);
    emit failed(why);
  });
  io::OpenOptions options;
  options.hdu = session.hdu;
  options.plane = session.plane;
  window_->openFile(session.file, options);
}

void SessionTool::applyAfterOpen(const Session& s) {
  ProcessingDock* dock = window_->tool<LiveProcessing>()->dock();
  compute::Pipeline pipeline = s.pipeline;
  QString psfName = s.psfName;
  QStringList problems;
  if (!s.psfFile.isEmpty() && pipeline.deconvolution.psf.empty()) {
    QString error;
    if (dock->loadPsf(s.psfFile, &error)) {
      pipeline.deconvolution.psf = dock->pipeline().deconvolution.psf;
      psfName = dock->psfName();
    } else {
      problems << tr("PSF not restored: %1").arg(error);
    }
  }
  dock->setPipeline(pipeline, psfName, s.psfFile);
  dock->setBackendChoice(ProcessingDock::BackendChoice(s.backend));
  dock->setViewMode(ProcessingDock::ViewMode(s.viewMode));
  window_->displayPanel()->setSettings(s.display, s.limitsMode);
  setOverlay(window_, kOverlayActions[0], s.colorbar);
  setOverlay(window_, kOverlayActions[1], s.compass);
  setOverlay(window_, kOverlayActions[2], s.scaleBar);
  setOverlay(window_, kOverlayActions[3], s.grid);
  if (restoreRegions_) restoreRegions_(s.regions);
  const int last = int(std::max<int64_t>(1, window_->info().z)) - 1;
  window_->navigation()->setValue(std::clamp(s.slice, 0, last));
  if (s.crosshair) window_->setCrosshair(s.crosshair->toPoint());
  render::SliceView* view = window_->sliceView();
  if (s.fit)
    view->fitToWindow();
  else
    view->setView(s.zoom, s.centre);
  if (!problems.isEmpty()) window_->statusBar()->showMessage(problems.join("; "), 10000);
  emit restored();
}

void SessionTool::chooseAndSave() {
  const QString path = QFileDialog::getSaveFileName(window_, tr("Save session"), QString(),
                                                    tr("StackLens sessions (*.json)"));
  if (path.isEmpty()) return;
  QStringList warnings;
  const QString error = save(path, &warnings);
  if (!error.isEmpty())
    QMessageBox::warning(window_, tr("Save session"), error);
  else
    window_->statusBar()->showMessage(
        warnings.isEmpty() ? tr("Session saved to %1").arg(path) : warnings.join(" "), 8000);
}

void SessionTool::chooseAndOpen() {
  const QString path = QFileDialog::getOpenFileName(
      window_, tr("Open session"), QString(), tr("StackLens sessions (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  QString error;
  if (!open(path)) return;
}

}  // namespace stacklens::ui
