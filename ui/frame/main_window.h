// The viewer's main window, a frame: slice view, navigation, docks (display, histogram, ortho
// views, profiles, region statistics), menus and the status-bar readout; the tools it is given
// add their menu actions and docks and follow the stack and the slice shown. Disk work runs off
// the GUI thread.
#pragma once

#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QLabel>
#include <QMainWindow>
#include <QPointer>
#include <QProgressBar>
#include <QSpinBox>
#include <QThreadPool>
#include <QTimer>
#include <QToolButton>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "compute/slice_store.h"
#include "io/stack.h"
#include "render/slice_view.h"
#include "ui/display/display_panel.h"
#include "ui/frame/navigation_bar.h"
#include "ui/frame/slice_path.h"
#include "ui/frame/viewer_tool.h"
#include "ui/frame/window_menus.h"
#include "ui/state/viewer_settings.h"

namespace stacklens::ui {

class HistogramTool;
class LineProfileTool;
class RegionStatsTool;
class PixelReadout;
class ToolsBar;
class StackOpener;
struct OpenedStack;
class OrthoViews;
class ViewDecorations;
class RecentFiles;
class MainWindow;

// The viewer's tools, in the order they are installed (the tool list, ui/frame/viewer_tools.cpp).
void installViewerTools(MainWindow* window);

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // installTools adds the tools once the frame's docks and menus exist, before the saved layout
  // is restored.
  explicit MainWindow(void (*installTools)(MainWindow*) = installViewerTools,
                      QWidget* parent = nullptr);
  ~MainWindow() override;

  // A tool told of each opened stack, requested slice and shown slice (after those before it).
  void addTool(ViewerTool* tool) { tools_.push_back(tool); }
  // The first tool of type Tool added, or null.
  template <class Tool>
  Tool* tool() const {
    for (ViewerTool* t : tools_)
      if (auto* found = dynamic_cast<Tool*>(t)) return found;
    return nullptr;
  }
  // Puts action at place in the menus, after the actions added there before.
  void addMenuAction(MenuPlace place, QAction* action);

  // Opens a stack on a worker thread (reading only the slice shown first); emits stackOpened()
  // or openFailed(). Errors also go to an error dialog unless quiet.
  void openFile(const QString& path, io::OpenOptions options = {});
  // Shows an already opened stack (tests use in-memory readers).
  void openReader(std::shared_ptr<io::StackReader> reader);
  // Quiet: errors are reported only through errorReported() and the status bar, never a dialog.
  void setQuiet(bool quiet) { quiet_ = quiet; }
  // Where the slider's slice index goes: the slice shown, the store of raw slices, the display
  // levels of a large plane, the raw slice budget.
  SlicePath* slicePath() const { return slicePath_; }

  // Tools for scripted use (tests, benchmarks) doing what the mouse does.
  void setCrosshair(QPoint pixel);
  void setLine(QPointF from, QPointF to);
  void setRegion(QRectF rect, bool ellipse);
  void hoverAt(QPointF imagePos);
  // The folder file dialogs start in: the last one a stack was opened from.
  QString lastFolder() const { return settings_.lastFolder; }
  // Writes the view (optionally with a colorbar) as PNG; returns an error message or "".
  QString exportPng(const QString& path, bool colorbar);

  const io::StackReader* stack() const { return reader_.get(); }
  std::shared_ptr<io::StackReader> sharedStack() const { return reader_; }
  QString filePath() const { return path_; }
  const io::StackInfo& info() const { return info_; }
  std::optional<QPoint> crosshair() const { return crosshair_; }
  render::SliceView* sliceView() const { return view_; }
  NavigationBar* navigation() const { return nav_; }
  DisplayPanel* displayPanel() const { return display_; }
  ToolsBar* toolsBar() const { return toolsBar_; }  // mouse tools, HDU and plane choosers
  // Menus that tools in their own files add their actions to (Edit: history and commands;
  // Analysis: measurements over the view such as PSFs and catalogs).
  QMenu* fileMenu() const { return menus_.file; }
  QMenu* editMenu() const { return menus_.edit; }
  QMenu* analysisMenu() const { return menus_.analysis; }
  // Shows the error in the status bar and, unless quiet, in a window-modal box; emits
  // errorReported().
  void reportError(const QString& title, const QString& message);

 signals:
  void stackOpened(const QString& path);
  // A new stack is in place (before its first slice is shown): tools follow it.
  void stackInstalled();
  void openFailed(const QString& message);
  void errorReported(const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void applySettings();
  void install(const OpenedStack& opened);
  void applyDisplay(const render::DisplaySettings& display);
  void computeLimits(render::LimitsMode mode);

  // Reader and state of the open stack.
  std::shared_ptr<io::StackReader> reader_;
  io::StackInfo info_;
  QString path_;
  QString openingMessage_;  // shown while a file opens; cleared when it has opened
  StackOpener* opener_;     // opens files on a worker
  std::optional<QPoint> crosshair_;
  QThreadPool readPool_;

  bool quiet_ = false;
  ViewerSettings settings_;

  render::SliceView* view_;
  std::unique_ptr<ViewDecorations> decorations_;  // colorbar and compass over view_
  NavigationBar* nav_;
  DisplayPanel* display_ = nullptr;  // the frame's own control, as the navigation bar
  std::vector<ViewerTool*> tools_;   // told of each opened stack and shown slice
  SlicePath* slicePath_;             // the slider's slices to the view and the tools
  PixelReadout* readout_;
  ToolsBar* toolsBar_;             // mouse tools, HDU and plane choosers
  RecentFiles* recent_ = nullptr;  // File ▸ Open Recent
  WindowMenus menus_{};
};

}  // namespace stacklens::ui
