// A volume wants more room than a side dock has: the dock floats at first (dock it to keep it).
#include "ui/volume/volume_tool.h"

#include <QDockWidget>

#include "ui/display/display_panel.h"
#include "ui/frame/main_window.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"
#include "ui/live/timing_panel.h"
#include "ui/volume/volume_panel.h"

namespace stacklens::ui {

VolumePanel* showVolumeView(MainWindow* window) {
  auto* panel = window->findChild<VolumePanel*>();
  if (!panel) {
    panel = new VolumePanel;
    auto* dock = new QDockWidget(QObject::tr("3D view"), window);
    dock->setObjectName("volumeDock");
    dock->setWidget(panel);
    window->addDockWidget(Qt::RightDockWidgetArea, dock);
    dock->setFloating(true);
    dock->resize(720, 760);
    ProcessingDock* processing = window->tool<LiveProcessing>()->dock();
    auto followStack = [window, panel] {
      if (window->sharedStack())
        panel->setStack(window->sharedStack(), window->tool<LiveProcessing>()->gpuChosen());
    };
    panel->setDisplay(window->displayPanel()->settings());
    panel->setPipeline(processing->pipeline());
    followStack();
    QObject::connect(window, &MainWindow::stackInstalled, panel, followStack);
    QObject::connect(window->displayPanel(), &DisplayPanel::displayChanged, panel,
                     &VolumePanel::setDisplay);
    QObject::connect(processing, &ProcessingDock::pipelineChanged, panel,
                     [panel, processing] { panel->setPipeline(processing->pipeline()); });
    QObject::connect(processing, &ProcessingDock::backendChanged, panel, [=] {
      panel->setPipeline(processing->pipeline());
      followStack();
    });
    QObject::connect(panel, &VolumePanel::operationTimed, window, [window](const TimingRow& row) {
      window->tool<LiveProcessing>()->timingPanel()->showOperation(row);
    });
  }
  auto* dock = qobject_cast<QDockWidget*>(panel->parentWidget());
  if (dock) {
    dock->show();
    dock->raise();
  }
  return panel;
}

}  // namespace stacklens::ui
