// The window's menu bar: File, Edit, View, Analysis and Navigate, with the frame's own actions
// (quit, zoom, overlays, dock toggles, slice steps) and the places where tools add theirs.
#pragma once

#include <array>

#include "ui/frame/viewer_tool.h"

class QAction;
class QMainWindow;
class QMenu;

namespace stacklens::render {
class SliceView;
}

namespace stacklens::ui {

class NavigationBar;
class ViewDecorations;

struct WindowMenus {
  QMenu* file;
  QMenu* recent;  // File ▸ Open Recent, filled by the window
  QMenu* edit;
  QMenu* analysis;
  // Each place's menu and the action its actions go above.
  struct Place {
    QMenu* menu;
    QAction* before;
  };
  std::array<Place, kMenuPlaces> places;
};

// After the window's docks exist: View lists their toggles.
WindowMenus buildWindowMenus(QMainWindow* window, render::SliceView* view,
                             ViewDecorations* decorations, NavigationBar* navigation);

}  // namespace stacklens::ui
