// The common interface of the viewer's tools (as MRtrix3's mrview tool/base.h): the window's
// slice path (ui/frame/slice_path.h) tells each tool when a stack is opened, a slice requested
// and a slice shown, MainWindow what the user does in the view; the tool does the rest itself.
// Tools put their menu actions at the places of the window's menus named here.
#pragma once

#include <QPoint>
#include <QPointF>
#include <QRectF>
#include <memory>

#include "compute/slice_store.h"
#include "io/stack.h"
#include "render/slice_view.h"

namespace stacklens::ui {

using render::SliceData;  // a slice's pixels, shared by the store, the view and the tools

// The stack just opened, as the tools see it.
struct OpenedStackView {
  std::shared_ptr<io::StackReader> reader;
  // The stack's raw slices, shared with the viewer and the live processing.
  std::shared_ptr<compute::SliceStore> slices;
};

// A slice the view has just shown (width × height values). A plane shown from display levels
// has no data: overview holds its coarse level instead (for what a sample serves, such as the
// histogram), and full-resolution values are read from the reader where needed.
struct ShownSlice {
  int z = 0;
  render::SliceData data;
  int width = 0, height = 0;
  render::SliceData overview;
};

// Where in the window's menus a tool's action goes: each place keeps its actions together, in
// the order they were added (MainWindow::addMenuAction).
enum class MenuPlace {
  FileOpen,    // File: opening stacks (above Open Recent)
  FileInfo,    // File: about the open stack (below Open Recent)
  FileExport,  // File: writing what the view shows
  FileSave,    // File: writing the stack's data
  FileJobs,    // File: jobs over the whole stack, each with its dialog
  ViewPanels,  // View: panels that show the stack another way (below the overlays)
};
inline constexpr int kMenuPlaces = int(MenuPlace::ViewPanels) + 1;

class ViewerTool {
 public:
  virtual ~ViewerTool() = default;
  // A new stack is open: drop what was shown of the last one.
  virtual void stackOpened(const OpenedStackView& stack) = 0;
  // The slider asks for slice z, which is read whole (not told for planes drawn from display
  // levels). It is shown later, with sliceShown.
  virtual void sliceRequested(int z) { (void)z; }
  // The view is about to draw this raw slice: a tool that puts something else up in its place
  // (live processing, its processed slice) returns true and draws the slice itself if need be.
  virtual bool holdSlice(const ShownSlice& slice) {
    (void)slice;
    return false;
  }
  // The view shows a new slice. Called while scrubbing: tools whose work is slow wait until the
  // slider rests.
  virtual void sliceShown(const ShownSlice& slice) = 0;

  // What the user does in the view and the display panel, told to every tool; a tool follows
  // what concerns it.
  // The display settings changed (colormap, scale, limits): tools that draw the data follow.
  virtual void displayChanged(const render::DisplaySettings& display) { (void)display; }
  // The mouse is over image position imagePos of slice z.
  virtual void pointerAt(QPointF imagePos, int z) {
    (void)imagePos;
    (void)z;
  }
  // A line or a region was drawn on the view (or set by a script).
  virtual void lineDrawn(QPointF from, QPointF to) {
    (void)from;
    (void)to;
  }
  virtual void regionDrawn(QRectF rect, bool ellipse) {
    (void)rect;
    (void)ellipse;
  }
  // The crosshair moved to pixel on slice z. wholeSlices is false for a plane drawn from display
  // levels, which is never read whole: tools that cut through whole slices leave it alone.
  virtual void crosshairMoved(QPoint pixel, int z, bool wholeSlices) {
    (void)pixel;
    (void)z;
    (void)wholeSlices;
  }
  // The window is going: long work stops at its next step and shows nothing.
  virtual void stop() {}
};

}  // namespace stacklens::ui
