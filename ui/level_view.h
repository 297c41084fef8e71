// Draws a plane too large to hold whole from its display levels (io/display_levels.h): the
// coarse level of the slice at once, then the visible part at the level matching the zoom, read
// on the pool after the view rests. A read for an older view or slice is dropped on arrival.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <QTimer>
#include <functional>
#include <memory>

#include "io/display_levels.h"
#include "render/slice_view.h"

namespace stacklens::ui {

class LevelView : public QObject {
  Q_OBJECT
 public:
  LevelView(render::SliceView* view, QThreadPool* pool, QObject* parent = nullptr);

  // The coarse level of slice z of the whole plane (on the calling thread: the opener's worker).
  static render::LevelPatch readCoarse(const io::DisplayLevels& levels, int z);

  // A new plane of width × height full-resolution pixels (null: none; the view is left alone).
  void setStack(std::shared_ptr<const io::DisplayLevels> levels, int width, int height);
  bool active() const { return levels_ != nullptr; }
  // Shows slice z from its coarse level and starts refining it.
  void show(int z, render::LevelPatch coarse);
  // Reads the coarse level of slice z on the pool; done runs on the GUI thread unless the
  // stack changed or a later fetch came first.
  void fetch(int z, std::function<void(render::LevelPatch)> done);
  // The finest level drawn now (for tests and the status).
  int levelShown() const { return fineLevel_ >= 0 ? fineLevel_ : coarsestLevel(); }
  // Whether the visible part is drawn from the level the zoom asks for, not from a coarser
  // placeholder (true when no levels are in use).
  bool viewRefined() const;
  // The level drawn at this zoom once refined, and how many levels there are (0: none in use).
  int levelForZoom(double zoom) const { return levels_ ? levels_->levelForZoom(zoom) : 0; }
  int levelCount() const { return levels_ ? coarsestLevel() + 1 : 0; }

 signals:
  void refined(int level);  // a finer part was drawn over the coarse level
  void readFailed(const QString& message);

 private:
  int coarsestLevel() const { return levels_ ? levels_->coarsest() : -1; }
  void refine();
  void draw();
  // The level's pixels [x0, x1) × [y0, y1) that the view shows now (no margin).
  struct Box {
    int64_t x0, y0, x1, y1;
  };
  Box visibleBox(const io::DisplayLevel& l) const;

  render::SliceView* view_;
  QThreadPool* pool_;
  QTimer rest_;  // refine once the zoom and pan rest
  std::shared_ptr<const io::DisplayLevels> levels_;
  int width_ = 0, height_ = 0, z_ = 0;
  render::LevelPatch coarse_, fine_;
  int fineLevel_ = -1;
  // The level box [x0, x1) × [y0, y1) the fine patch (or the read under way) holds.
  int64_t boxX0_ = 0, boxY0_ = 0, boxX1_ = 0, boxY1_ = 0;
  int boxLevel_ = -1;
  quint64 generation_ = 0;       // refinements: a newer view or slice makes a read stale
  quint64 fetchGeneration_ = 0;  // coarse reads of another slice
};

}  // namespace stacklens::ui
