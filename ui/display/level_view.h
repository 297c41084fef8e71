// Draws a plane too large to hold whole from its display levels (io/display_levels.h): the
// coarse level of the slice at once, then tiles of the level matching the zoom, requested as the
// view moves (while a drag goes on) and read on the pool, those nearest the view first. A queued
// tile that leaves the view is never read; a read for another stack is dropped on arrival.
#pragma once

#include <QObject>
#include <QPointF>
#include <QThreadPool>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "io/display_levels.h"
#include "render/slice_view.h"
#include "ui/display/level_tiles.h"

namespace stacklens::ui {

class LevelView : public QObject {
  Q_OBJECT
 public:
  // Tiles are this many level pixels on a side: a few per view, each one read in one go.
  static constexpr int kTileSide = 512;
  // The tiles read are kept up to this many bytes (those the view shows always).
  static constexpr int64_t kTileCacheBytes = int64_t(128) << 20;

  LevelView(render::SliceView* view, QThreadPool* pool, QObject* parent = nullptr);

  // The coarse level of slice z of the whole plane (on the calling thread: the opener's worker).
  static render::LevelPatch readCoarse(const io::DisplayLevels& levels, int z);

  // A new plane of width × height full-resolution pixels (null: none; the view is left alone).
  void setStack(std::shared_ptr<const io::DisplayLevels> levels, int width, int height);
  bool active() const { return levels_ != nullptr; }
  // Shows slice z from its coarse level and requests the tiles of the view's level.
  void show(int z, render::LevelPatch coarse);
  // Reads the coarse level of slice z on the pool; done runs on the GUI thread unless the
  // stack changed or a later fetch came first.
  void fetch(int z, std::function<void(render::LevelPatch)> done);
  // The finest level drawn now (for tests and the status).
  int levelShown() const { return shownLevel_ >= 0 ? shownLevel_ : coarsestLevel(); }
  // Whether the visible part is drawn from the level the zoom asks for, not from a coarser
  // placeholder (true when no levels are in use).
  bool viewRefined() const;
  // The level drawn at this zoom once refined, and how many levels there are (0: none in use).
  int levelForZoom(double zoom) const { return levels_ ? levels_->levelForZoom(zoom) : 0; }
  int levelCount() const { return levels_ ? coarsestLevel() + 1 : 0; }

  // What the tile requests came to since the stack was set (for tests and the benchmark).
  struct TileCounts {
    int requested = 0;  // queued for reading
    int cancelled = 0;  // taken off the queue unread: they left the view first
    int read = 0;       // reads finished
    int readStale = 0;  // reads that finished after their tile had left the view
  };
  const TileCounts& tileCounts() const { return counts_; }
  // Reads under way and queued: none of either once the view's tiles are all in.
  int readsPending() const { return int(reading_.size() + queue_.size()); }
  // At most this many tiles are read at once.
  int maxReads() const;
  void setTileCacheBytes(int64_t bytes) { cache_.setBudget(bytes); }
  const TileCache& tileCache() const { return cache_; }

 signals:
  // Tiles of a finer level (the finest drawn: level) were given to the view over the coarse one.
  void refined(int level);
  void readFailed(const QString& message);

 private:
  int coarsestLevel() const { return levels_ ? levels_->coarsest() : -1; }
  // The level's pixels [x0, x1) × [y0, y1) that the view shows now (no margin).
  struct Box {
    int64_t x0, y0, x1, y1;
  };
  Box visibleBox(const io::DisplayLevel& l) const;
  // The tiles of a level covering a box of its pixels.
  std::vector<TileKey> tilesOver(int level, const Box& box) const;
  void viewMoved();
  void request();
  void startReads();
  void tileRead(const TileKey& key, render::LevelPatch patch);
  void draw();

  render::SliceView* view_;
  QThreadPool* pool_;
  std::shared_ptr<const io::DisplayLevels> levels_;
  int width_ = 0, height_ = 0, z_ = 0;
  render::LevelPatch coarse_;
  int shownLevel_ = -1;  // the finest level among the tiles drawn (−1: the coarse level alone)
  TileCache cache_{kTileCacheBytes};
  std::vector<TileKey> queue_;  // wanted and not read yet, the first read first
  std::set<TileKey> reading_, wanted_, visible_, failed_;
  std::vector<const void*> drawn_;  // the pixels of the patches last given to the view
  QPointF lastCentre_;
  double lastZoom_ = 0;
  QPointF motion_;               // the direction of the last pan (0: none since the zoom changed)
  quint64 generation_ = 0;       // stacks: a read for an older stack is dropped
  quint64 fetchGeneration_ = 0;  // coarse reads of another slice
  TileCounts counts_;
};

}  // namespace stacklens::ui
