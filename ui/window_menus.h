// The window's menu bar: File, Edit, View, Analysis and Navigate. Tools in their own files add
// their actions to Edit (history, commands) and Analysis (measurements) later.
#pragma once

class QMenu;

namespace stacklens::ui {

class MainWindow;

struct WindowMenus {
  QMenu* file;
  QMenu* recent;  // File ▸ Open Recent, filled by the window
  QMenu* edit;
  QMenu* analysis;
};

WindowMenus buildWindowMenus(MainWindow* window);

}  // namespace stacklens::ui
