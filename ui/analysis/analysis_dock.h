// A tool of the Analysis menu that lives in a dock of the window: the dock (hidden until asked
// for) and two actions, one that shows it and one that shows it and starts an import.
#pragma once

#include <QDockWidget>
#include <QString>
#include <functional>

namespace stacklens::ui {

class MainWindow;

struct AnalysisDockSpec {
  QString title;       // the dock's title, e.g. "Regions"
  QString objectName;  // the dock's, for saved layouts
  QString showText;    // "&Regions…"
  QString importText;  // "Import DS9 &regions…"
};

QDockWidget* addAnalysisDock(MainWindow* window, QWidget* panel, const AnalysisDockSpec& spec,
                             std::function<void()> import);

}  // namespace stacklens::ui
