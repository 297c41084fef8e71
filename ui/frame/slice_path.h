// The path of a slice index from the slider to the screen: the slider asks for slice z, the open
// stack's store (or, for a plane too large to read whole, its display levels) brings it, and the
// slice goes straight to the view and to the viewer's tools, each after those before it. Only the
// latest request is shown: a result whose generation is stale is dropped.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <algorithm>
#include <memory>
#include <vector>

#include "compute/slice_store.h"
#include "io/stack.h"
#include "render/limits.h"
#include "render/slice_view.h"
#include "ui/frame/viewer_tool.h"

namespace stacklens::ui {

class DisplayPanel;
class LevelView;
class NavigationBar;
class SliceFetcher;
struct OpenedStack;

class SlicePath : public QObject {
  Q_OBJECT
 public:
  // The window's parts the slices go through. tools is the window's tool list, read at each
  // stack and slice (tools added later are told too); reads run on pool.
  struct Parts {
    render::SliceView* view;
    NavigationBar* navigation;
    DisplayPanel* display;  // its limits follow the first slice shown of each stack
    const std::vector<ViewerTool*>* tools;
    QThreadPool* pool;
  };
  explicit SlicePath(const Parts& parts, QObject* parent = nullptr);

  // The byte budget of the next stack's raw slices: host and device copies, the viewer's and the
  // live processing's together (one store).
  void setRawSliceBudget(size_t bytes) { rawSliceBudget_ = bytes; }
  // Planes above this many bytes (a quarter of the raw slice budget, at most 256 MiB) are never
  // read whole: the view draws them from display levels (ui/display/level_view.h).
  size_t largePlaneBytes() const { return std::min(rawSliceBudget_ / 4, size_t(256) << 20); }

  // A new stack: its store (or display levels), the tools told of it, the slider's range, and
  // the slice the opener read first shown.
  void setStack(const OpenedStack& opened);
  // The slider asks for slice z: the tools are told, and the slice is shown once read (unless a
  // later request came first).
  void request(int z);
  // Reads slices [0, count) into the store on a worker; emits preloaded().
  void preload(int count);
  // Sets the display panel's limits from the slice shown by mode (none for Manual).
  void showLimits(render::LimitsMode mode);
  // The window is closing: background reads stop at their next slice.
  void stop();

  int currentZ() const { return currentZ_; }  // the slice shown (the slider may be ahead)
  // The raw slice shown; null for a plane drawn from display levels.
  SliceData currentSlice() const { return current_; }
  // The coarse level of a plane drawn from display levels; null otherwise.
  SliceData overview() const { return overview_; }
  // Whether slices are read whole (false while a plane is drawn from display levels).
  bool wholeSlices() const;
  compute::SliceStore* slices() const;  // the open stack's raw slices
  // Draws the open plane from its display levels when it is large (else inactive).
  LevelView* levelView() const { return levels_; }

 signals:
  // The slider asks for slice z (it is shown later, with sliceShown).
  void sliceRequested(int z);
  void sliceShown(int z);
  void preloaded();
  // A read failed: title says what could not be read.
  void readFailed(const QString& title, const QString& message);

 private:
  void showSlice(int z, SliceData data);
  // A plane shown from display levels: its coarse level stands for the slice.
  void showLevelSlice(int z, const render::LevelPatch& coarse);
  void tellToolsShown(int z);
  void limitsOnFirstSlice();
  void updateWorldLabel();

  render::SliceView* view_;
  NavigationBar* navigation_;
  DisplayPanel* display_;
  const std::vector<ViewerTool*>& tools_;
  LevelView* levels_;
  SliceFetcher* source_;  // the raw slices: reads, the store, read-ahead
  size_t rawSliceBudget_ = size_t(1536) << 20;

  std::shared_ptr<io::StackReader> reader_;
  io::StackInfo info_;
  int currentZ_ = 0;    // the slice shown
  int requestedZ_ = 0;  // the slice asked for (may still be reading)
  SliceData current_;
  SliceData overview_;
  bool limitsValid_ = false;
  // Request tokens: a result whose token is stale is dropped.
  quint64 generation_ = 0;
};

}  // namespace stacklens::ui
