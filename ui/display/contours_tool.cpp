// The panel follows the window's stack, the slice shown and the display limits; its export asks
// the window's user for a file name.
#include "ui/display/contours_tool.h"

#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>

#include "ui/display/contours_panel.h"
#include "ui/display/display_panel.h"
#include "ui/display/view_decorations.h"
#include "ui/frame/main_window.h"

namespace stacklens::ui {

ContoursPanel* showContours(MainWindow* window) {
  auto* panel = window->findChild<ContoursPanel*>();
  if (!panel) {
    panel = new ContoursPanel(window->tool<ViewDecorations>());
    auto* dock = new QDockWidget(QObject::tr("Contours"), window);
    dock->setObjectName("contoursDock");
    dock->setWidget(panel);
    window->addDockWidget(Qt::RightDockWidgetArea, dock);
    if (auto* display = window->findChild<QDockWidget*>("displayDock"))
      window->tabifyDockWidget(display, dock);
    QObject::connect(panel, &ContoursPanel::exportRequested, window, [window, panel] {
      const QString path =
          QFileDialog::getSaveFileName(window, QObject::tr("Export the contours as"),
                                       QFileInfo(window->filePath()).completeBaseName() + ".reg",
                                       QObject::tr("DS9 regions (*.reg)"));
      if (path.isEmpty()) return;
      const QString error = panel->exportRegions(path);
      if (!error.isEmpty()) QMessageBox::warning(window, QObject::tr("Export contours"), error);
    });
    auto followSlice = [window, panel] {
      panel->setSlice(window->slicePath()->currentZ(), window->slicePath()->currentSlice(),
                      int(window->info().x), int(window->info().y));
    };
    auto followLimits = [panel](const render::DisplaySettings& d) {
      panel->setLimits(d.limits.low, d.limits.high);
    };
    QObject::connect(window, &MainWindow::stackInstalled, panel,
                     [window, panel] { panel->setStack(window->sharedStack()); });
    QObject::connect(window->slicePath(), &SlicePath::sliceShown, panel, followSlice);
    QObject::connect(window->displayPanel(), &DisplayPanel::displayChanged, panel, followLimits);
    panel->setStack(window->sharedStack());
    followLimits(window->displayPanel()->settings());
    followSlice();
  }
  if (auto* dock = qobject_cast<QDockWidget*>(panel->parentWidget())) {
    dock->show();
    dock->raise();
  }
  panel->setDrawing(true);
  return panel;
}

}  // namespace stacklens::ui
