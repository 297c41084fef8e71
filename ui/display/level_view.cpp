// Each move of the view asks for the tiles it shows, and those half a view ahead in the direction
// of the pan, at the zoom's level; the queue is rebuilt on every move, so what scrolled away is
// never read, and at most maxReads() tiles are read at once whatever the plane's size.
#include "ui/display/level_view.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

#include "ui/frame/future_result.h"

namespace stacklens::ui {

namespace {

// The patch of level pixels [x0, x1) × [y0, y1) read from slice z.
render::LevelPatch readPatch(const io::DisplayLevels& levels, int level, int z, int64_t x0,
                             int64_t y0, int64_t x1, int64_t y1) {
  const io::DisplayLevel& l = levels.levels()[size_t(level)];
  auto pixels = std::make_shared<std::vector<float>>(size_t((x1 - x0) * (y1 - y0)));
  levels.read(level, z, y0, y1, x0, x1, pixels->data());
  return {std::move(pixels), int(x1 - x0),  int(y1 - y0), x0 * l.scaleX,
          y0 * l.scaleY,     x1 * l.scaleX, y1 * l.scaleY};
}

// A pan reads ahead by this much of the view in its direction: tiles arrive before they show.
constexpr double kAhead = 0.5;

}  // namespace

LevelView::LevelView(render::SliceView* view, QThreadPool* pool, QObject* parent)
    : QObject(parent), view_(view), pool_(pool) {
  connect(view_, &render::SliceView::viewMoved, this, [this] { viewMoved(); });
}

render::LevelPatch LevelView::readCoarse(const io::DisplayLevels& levels, int z) {
  const io::DisplayLevel& l = levels.levels().back();
  return readPatch(levels, levels.coarsest(), z, 0, 0, l.width, l.height);
}

int LevelView::maxReads() const { return std::max(2, pool_->maxThreadCount()); }

void LevelView::setStack(std::shared_ptr<const io::DisplayLevels> levels, int width, int height) {
  ++generation_;
  ++fetchGeneration_;
  levels_ = std::move(levels);
  width_ = width;
  height_ = height;
  coarse_ = {};
  shownLevel_ = -1;
  cache_.clear();
  queue_.clear();
  reading_.clear();
  wanted_.clear();
  visible_.clear();
  failed_.clear();
  drawn_.clear();
  motion_ = {};
  counts_ = {};
}

void LevelView::show(int z, render::LevelPatch coarse) {
  if (!levels_) return;
  z_ = z;
  coarse_ = std::move(coarse);
  request();
}

void LevelView::fetch(int z, std::function<void(render::LevelPatch)> done) {
  if (!levels_) return;
  const quint64 generation = ++fetchGeneration_;
  auto current = [this, levels = levels_, generation] {
    return levels == levels_ && generation == fetchGeneration_;
  };
  whenDone(
      this, QtConcurrent::run(pool_, [levels = levels_, z] { return readCoarse(*levels, z); }),
      [current, done](const render::LevelPatch& patch) {
        if (current()) done(patch);
      },
      [this, current](const std::exception& e) {
        if (current()) emit readFailed(QString::fromStdString(e.what()));
      });
}

LevelView::Box LevelView::visibleBox(const io::DisplayLevel& l) const {
  const QPointF a = view_->widgetToImage({0, 0});
  const QPointF b = view_->widgetToImage({double(view_->width()), double(view_->height())});
  auto clampTo = [](double v, int64_t n) { return std::clamp<int64_t>(int64_t(v), 0, n); };
  return {clampTo(std::min(a.x(), b.x()) / l.scaleX, l.width),
          clampTo(std::min(a.y(), b.y()) / l.scaleY, l.height),
          clampTo(std::max(a.x(), b.x()) / l.scaleX + 1, l.width),
          clampTo(std::max(a.y(), b.y()) / l.scaleY + 1, l.height)};
}

std::vector<TileKey> LevelView::tilesOver(int level, const Box& box) const {
  std::vector<TileKey> tiles;
  if (box.x0 >= box.x1 || box.y0 >= box.y1) return tiles;
  for (int64_t ty = box.y0 / kTileSide; ty <= (box.y1 - 1) / kTileSide; ++ty)
    for (int64_t tx = box.x0 / kTileSide; tx <= (box.x1 - 1) / kTileSide; ++tx)
      tiles.push_back({level, z_, tx, ty});
  return tiles;
}

bool LevelView::viewRefined() const {
  if (!levels_) return true;
  const int level = levels_->levelForZoom(view_->zoom());
  if (level >= coarsestLevel()) return true;
  for (const TileKey& key : tilesOver(level, visibleBox(levels_->levels()[size_t(level)])))
    if (!cache_.contains(key)) return false;
  return true;
}

void LevelView::viewMoved() {
  if (!levels_) return;
  const QPointF centre = view_->widgetToImage({view_->width() / 2.0, view_->height() / 2.0});
  if (view_->zoom() != lastZoom_)
    motion_ = {};
  else if (centre != lastCentre_)
    motion_ = centre - lastCentre_;
  lastCentre_ = centre;
  lastZoom_ = view_->zoom();
  request();
}

void LevelView::request() {
  if (!levels_ || !coarse_.pixels || view_->width() <= 0 || view_->height() <= 0) return;
  const int level = levels_->levelForZoom(view_->zoom());
  std::vector<TileKey> order;  // visible tiles first, then those ahead; nearest the centre first
  visible_.clear();
  if (level < coarsestLevel()) {
    const io::DisplayLevel& l = levels_->levels()[size_t(level)];
    const Box v = visibleBox(l);
    Box ahead = v;
    const int64_t w = v.x1 - v.x0, h = v.y1 - v.y0;
    if (motion_.x() > 0) ahead.x1 = std::min(l.width, v.x1 + int64_t(w * kAhead));
    if (motion_.x() < 0) ahead.x0 = std::max<int64_t>(0, v.x0 - int64_t(w * kAhead));
    if (motion_.y() > 0) ahead.y1 = std::min(l.height, v.y1 + int64_t(h * kAhead));
    if (motion_.y() < 0) ahead.y0 = std::max<int64_t>(0, v.y0 - int64_t(h * kAhead));
    const double cx = (v.x0 + v.x1) / 2.0 / kTileSide, cy = (v.y0 + v.y1) / 2.0 / kTileSide;
    auto byDistance = [cx, cy](std::vector<TileKey> tiles) {
      auto d = [cx, cy](const TileKey& k) { return std::hypot(k.tx + 0.5 - cx, k.ty + 0.5 - cy); };
      std::stable_sort(tiles.begin(), tiles.end(),
                       [&d](const TileKey& a, const TileKey& b) { return d(a) < d(b); });
      return tiles;
    };
    order = byDistance(tilesOver(level, v));
    visible_.insert(order.begin(), order.end());
    for (const TileKey& key : byDistance(tilesOver(level, ahead)))
      if (!visible_.count(key)) order.push_back(key);
  }
  wanted_ = std::set<TileKey>(order.begin(), order.end());
  const std::set<TileKey> queued(queue_.begin(), queue_.end());
  for (const TileKey& key : queue_)
    if (!wanted_.count(key)) ++counts_.cancelled;
  queue_.clear();
  for (const TileKey& key : order) {
    if (cache_.contains(key) || reading_.count(key) || failed_.count(key)) continue;
    if (!queued.count(key)) ++counts_.requested;
    queue_.push_back(key);
  }
  startReads();
  draw();
}

void LevelView::startReads() {
  while (int(reading_.size()) < maxReads() && !queue_.empty()) {
    const TileKey key = queue_.front();
    queue_.erase(queue_.begin());
    reading_.insert(key);
    const io::DisplayLevel& l = levels_->levels()[size_t(key.level)];
    const int64_t x0 = key.tx * kTileSide, y0 = key.ty * kTileSide;
    const int64_t x1 = std::min(l.width, x0 + kTileSide), y1 = std::min(l.height, y0 + kTileSide);
    auto read = [levels = levels_, key, x0, y0, x1, y1] {
      return readPatch(*levels, key.level, key.z, x0, y0, x1, y1);
    };
    const quint64 generation = generation_;
    whenDone(
        this, QtConcurrent::run(pool_, read),
        [this, key, generation](const render::LevelPatch& patch) {
          if (generation != generation_) return;
          reading_.erase(key);
          tileRead(key, patch);
        },
        [this, key, generation](const std::exception& e) {
          if (generation != generation_) return;
          reading_.erase(key);
          failed_.insert(key);  // not asked for again for this stack: one message per tile
          emit readFailed(QString::fromStdString(e.what()));
          startReads();
        });
  }
}

void LevelView::tileRead(const TileKey& key, render::LevelPatch patch) {
  ++counts_.read;
  if (!wanted_.count(key)) ++counts_.readStale;
  cache_.insert(key, std::move(patch), visible_);
  startReads();
  if (visible_.count(key)) draw();
}

void LevelView::draw() {
  if (!levels_ || !coarse_.pixels) return;
  std::vector<render::LevelPatch> patches{coarse_};
  int shown = -1;
  const int level = levels_->levelForZoom(view_->zoom());
  if (level < coarsestLevel()) {
    // Until the zoom's level covers the view, coarser tiles still held stand in under it.
    const int from = viewRefined() ? level : coarsestLevel() - 1;
    for (int l = from; l >= level; --l)
      for (const TileKey& key : tilesOver(l, visibleBox(levels_->levels()[size_t(l)])))
        if (const render::LevelPatch* tile = cache_.find(key)) {
          patches.push_back(*tile);
          shown = l;
        }
  }
  shownLevel_ = shown;
  std::vector<const void*> drawn;
  for (const render::LevelPatch& p : patches) drawn.push_back(p.pixels.get());
  if (drawn == drawn_) return;  // the same pixels: moving the view is enough
  drawn_ = std::move(drawn);
  view_->setLevelPatches(std::move(patches), width_, height_);
  if (shown >= 0) emit refined(shown);
}

}  // namespace stacklens::ui
