// The viewer's tool list (as MRtrix3's mrview tool/list.h): each tool, the menu actions that open
// it and where they go, in the order the tools are installed. MainWindow is the frame and knows
// none of them.
#include <QAction>
#include <QFileInfo>
#include <QStatusBar>
#include <cmath>
#include <functional>

#include "ui/analysis/catalog_panel.h"
#include "ui/analysis/regions_panel.h"
#include "ui/display/channels_tool.h"
#include "ui/display/contours_tool.h"
#include "ui/frame/about_box.h"
#include "ui/frame/library_messages.h"
#include "ui/frame/main_window.h"
#include "ui/frame/pixel_readout.h"
#include "ui/jobs/movie_dialog.h"
#include "ui/jobs/projection_dialog.h"
#include "ui/jobs/psf_dialog.h"
#include "ui/jobs/psf_measure_dialog.h"
#include "ui/jobs/whole_stack_dialog.h"
#include "ui/lab/speedup_lab_tool.h"
#include "ui/live/copy_command.h"
#include "ui/live/live_processing.h"
#include "ui/stack/file_choosers.h"
#include "ui/stack/header_dialog.h"
#include "ui/stack/save_tool.h"
#include "ui/state/history_tool.h"
#include "ui/state/session_tool.h"
#include "ui/volume/volume_tool.h"

namespace stacklens::ui {
namespace {

void addAction(MainWindow* window, MenuPlace place, const QString& text, const QKeySequence& key,
               std::function<void()> run) {
  auto* action = new QAction(text, window);
  action->setShortcut(key);
  QObject::connect(action, &QAction::triggered, window, std::move(run));
  window->addMenuAction(place, action);
}

// Processing while scrubbing: its docks, worker and backends; its processed values go to the
// readout, and a source clicked in its table is centred.
void installLiveProcessing(MainWindow* window) {
  auto* live = new LiveProcessing(window, window->sliceView());
  QObject::connect(live, &LiveProcessing::processedSliceReady, window->tool<PixelReadout>(),
                   &PixelReadout::setProcessed);
  QObject::connect(live, &LiveProcessing::centreOn, window, [window](QPointF p) {
    window->setCrosshair(QPoint(int(std::lround(p.x())), int(std::lround(p.y()))));
  });
  window->addTool(live);
}

// Saving the stack or the slice shown, with its progress and Cancel in the status bar.
void installSaving(MainWindow* window) {
  auto* save = new SaveTool(window->statusBar(), window);
  QObject::connect(
      save, &SaveTool::failed, window, [window](const QString& path, const QString& why) {
        window->reportError(QObject::tr("Cannot save %1").arg(QFileInfo(path).fileName()), why);
      });
  window->addTool(save);
}

}  // namespace

void installViewerTools(MainWindow* w) {
  installLiveProcessing(w);  // first: the tools below follow its pipeline

  using Key = QKeySequence;
  const auto ctrl = Qt::CTRL, shift = Qt::SHIFT;
  addAction(w, MenuPlace::FileOpen, QObject::tr("&Open…"), Key::Open,
            [w] { chooseStackToOpen(w); });
  addAction(w, MenuPlace::FileOpen, QObject::tr("Open &folder (Zarr)…"),
            Key(ctrl | Qt::ALT | Qt::Key_O), [w] { chooseFolderToOpen(w); });
  addAction(w, MenuPlace::FileOpen, QObject::tr("Open &URL…"), Key(ctrl | shift | Qt::Key_O),
            [w] { chooseUrlToOpen(w); });
  addAction(w, MenuPlace::FileInfo, QObject::tr("&Header…"), Key(ctrl | Qt::Key_H),
            [w] { showHeader(w); });
  addAction(w, MenuPlace::FileExport, QObject::tr("&Export view as PNG…"), Key(ctrl | Qt::Key_E),
            [w] { chooseWhereToExport(w, false); });
  addAction(w, MenuPlace::FileExport, QObject::tr("Export view with &colorbar…"), Key(),
            [w] { chooseWhereToExport(w, true); });
  addAction(w, MenuPlace::FileExport, QObject::tr("Export &movie…"), Key(),
            [w] { openMovieExport(w); });
  installSaving(w);
  addAction(w, MenuPlace::FileSave, QObject::tr("Save &slice as…"), Key::Save,
            [w] { chooseWhereToSave(w, false); });
  addAction(w, MenuPlace::FileSave, QObject::tr("Save s&tack as…"), Key::SaveAs,
            [w] { chooseWhereToSave(w, true); });
  addAction(w, MenuPlace::FileJobs, QObject::tr("&Process whole stack…"),
            Key(ctrl | shift | Qt::Key_P), [w] { openWholeStack(w); });
  addAction(w, MenuPlace::FileJobs, QObject::tr("Z projection / &moment map…"),
            Key(ctrl | shift | Qt::Key_M), [w] { openProjection(w); });
  addAction(w, MenuPlace::ViewPanels, QObject::tr("&3D view"), Key(ctrl | Qt::Key_3),
            [w] { showVolumeView(w); });
  addAction(w, MenuPlace::ViewPanels, QObject::tr("C&hannels (composite)"), Key(ctrl | Qt::Key_K),
            [w] { showChannels(w); });
  addAction(w, MenuPlace::ViewPanels, QObject::tr("Con&tours"), Key(), [w] { showContours(w); });

  // Tools that add their own actions (Edit, Analysis, File's sessions, Tools, Help) and docks.
  SettingsHistory* history = installHistory(w);
  installCopyCommand(w);
  installPsfMeasureTool(w);
  followRegions(history, installRegionsTool(w));
  installCatalogTool(w);
  installSpeedupLab(w);
  showLibraryMessages(w->statusBar());
  QObject::connect(SessionTool::install(w), &SessionTool::failed, w,
                   [w](const QString& why) { w->reportError(QObject::tr("Open session"), why); });
  QObject::connect(w->tool<LiveProcessing>()->dock(), &ProcessingDock::psfGeneratorRequested, w,
                   [w] { openPsfGenerator(w); });
  installAboutBox(w);
}

}  // namespace stacklens::ui
