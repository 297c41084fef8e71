// Hidden at first: the tools are asked for from the Analysis menu, not part of the default layout.
#include "ui/analysis/analysis_dock.h"

#include <QMenu>

#include "ui/frame/main_window.h"

namespace stacklens::ui {

QDockWidget* addAnalysisDock(MainWindow* window, QWidget* panel, const AnalysisDockSpec& spec,
                             std::function<void()> import) {
  auto* dock = new QDockWidget(spec.title, window);
  dock->setObjectName(spec.objectName);
  dock->setWidget(panel);
  window->addDockWidget(Qt::RightDockWidgetArea, dock);
  dock->hide();
  auto show = [dock] {
    dock->show();
    dock->raise();
  };
  QMenu* menu = window->analysisMenu();
  menu->addAction(spec.showText, dock, show);
  menu->addAction(spec.importText, panel, [show, import] {
    show();
    import();
  });
  return dock;
}

}  // namespace stacklens::ui
