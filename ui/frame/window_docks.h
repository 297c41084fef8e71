// The docks around the slice view — display, histogram, region statistics, line and z profiles,
// XZ and YZ views — and their default layout. The window connects them to the view.
#pragma once

#include <QDockWidget>
#include <QMainWindow>
#include <QThreadPool>

#include "render/slice_view.h"
#include "ui/state/viewer_settings.h"

namespace stacklens::ui {

class DisplayPanel;
class HistogramTool;
class LineProfileTool;
class OrthoViews;
class RegionStatsTool;

struct WindowDocks {
  DisplayPanel* display = nullptr;
  HistogramTool* histogram = nullptr;
  RegionStatsTool* region = nullptr;
  LineProfileTool* line = nullptr;
  OrthoViews* ortho = nullptr;  // XZ, YZ and the z profile through the crosshair
  QDockWidget* histogramDock = nullptr;
  QDockWidget* xzDock = nullptr;
  QDockWidget* yzDock = nullptr;
};

// The tools are children of window; reads run on pool; profiles and regions are drawn on view.
WindowDocks buildWindowDocks(QMainWindow* window, render::SliceView* view, QThreadPool* pool);

// A SliceView (a QWindow) inside the widget tree; keyboard focus stays with the widgets so the
// window's shortcuts keep working after a click in the view.
QWidget* embedView(render::SliceView* view, QWidget* parent);

// The default layout, made for a 1280 × 1024 screen (a saved layout replaces it).
void arrangeDefaultLayout(QMainWindow* window);
// The window's size, place and docks as saved in settings, or the default size within the
// screen and the default dock sizes.
void restoreWindowLayout(QMainWindow* window, const ViewerSettings& settings,
                         const WindowDocks& docks);

}  // namespace stacklens::ui
