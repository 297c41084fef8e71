// The common interface of the viewer's tools (as MRtrix3's mrview tool/base.h): MainWindow tells
// each tool when a stack is opened and when a slice is shown; the tool does the rest itself.
#pragma once

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

class ViewerTool {
 public:
  virtual ~ViewerTool() = default;
  // A new stack is open: drop what was shown of the last one.
  virtual void stackOpened(const OpenedStackView& stack) = 0;
  // The view shows a new slice. Called while scrubbing: tools whose work is slow wait until the
  // slider rests.
  virtual void sliceShown(const ShownSlice& slice) = 0;
};

}  // namespace stacklens::ui
