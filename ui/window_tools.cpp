// Installing the self-contained tools on the main window.
#include "ui/window_tools.h"

#include <QStatusBar>

#include "ui/about_box.h"
#include "ui/catalog_panel.h"
#include "ui/copy_command.h"
#include "ui/history_tool.h"
#include "ui/library_messages.h"
#include "ui/live_processing.h"
#include "ui/main_window.h"
#include "ui/psf_measure_dialog.h"
#include "ui/regions_panel.h"
#include "ui/session_tool.h"
#include "ui/speedup_lab_tool.h"

namespace stacklens::ui {

void installWindowTools(MainWindow* window) {
  SettingsHistory* history = installHistory(window);
  installCopyCommand(window);
  installPsfMeasureTool(window);
  followRegions(history, installRegionsTool(window));
  installCatalogTool(window);
  installSpeedupLab(window);
  showLibraryMessages(window->statusBar());
  QObject::connect(
      SessionTool::install(window), &SessionTool::failed, window,
      [window](const QString& why) { window->reportError(QObject::tr("Open session"), why); });
  QObject::connect(window->liveProcessing()->dock(), &ProcessingDock::psfGeneratorRequested, window,
                   &MainWindow::openPsfGenerator);
  installAboutBox(window);
}

}  // namespace stacklens::ui
