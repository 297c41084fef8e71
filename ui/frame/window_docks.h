// The docks around the slice view — display, histogram, region statistics, line and z profiles,
// XZ and YZ views — and their default layout.
#pragma once

#include <QDockWidget>
#include <QMainWindow>
#include <QThreadPool>
#include <functional>
#include <vector>

#include "render/slice_view.h"
#include "ui/state/viewer_settings.h"

namespace stacklens::ui {

class DisplayPanel;
class ViewerTool;

// What the docks ask of the window: the crosshair and the slider moved to a point of another
// view, an error reported.
struct DockRequests {
  std::function<void(QPoint crosshair, int z)> point;
  std::function<void(const QString& title, const QString& message)> reportError;
};

// The display panel (the frame's own control) and the tools in the docks, in the order they are
// told of stacks and slices: histogram, line profile, region statistics, ortho views.
struct WindowDocks {
  DisplayPanel* display = nullptr;
  std::vector<ViewerTool*> tools;
};

// The tools are children of window; reads run on pool; profiles and regions are drawn on view.
// The docks' links to each other (the histogram's dragged limits to the display panel) are made
// here.
WindowDocks buildWindowDocks(QMainWindow* window, render::SliceView* view, QThreadPool* pool,
                             const DockRequests& requests);

// A SliceView (a QWindow) inside the widget tree; keyboard focus stays with the widgets so the
// window's shortcuts keep working after a click in the view.
QWidget* embedView(render::SliceView* view, QWidget* parent);

// The default layout, made for a 1280 × 1024 screen (a saved layout replaces it).
void arrangeDefaultLayout(QMainWindow* window);
// The window's size, place and docks as saved in settings, or the default size within the
// screen and the default dock sizes.
void restoreWindowLayout(QMainWindow* window, const ViewerSettings& settings);

}  // namespace stacklens::ui
