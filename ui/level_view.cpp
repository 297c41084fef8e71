// The refinement reads at most about three times the view's pixels (a level whose pixels are
// between half and one screen pixel, and a margin for panning), whatever the plane's size.
#include "ui/level_view.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

#include "ui/future_result.h"

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

// Panning by a quarter of the view on each side needs no new read.
constexpr double kMargin = 0.25;
// The view rests this long before a refinement is read (a wheel turn is many events).
constexpr int kRestMs = 60;

}  // namespace

LevelView::LevelView(render::SliceView* view, QThreadPool* pool, QObject* parent)
    : QObject(parent), view_(view), pool_(pool) {
  rest_.setSingleShot(true);
  rest_.setInterval(kRestMs);
  connect(&rest_, &QTimer::timeout, this, &LevelView::refine);
  connect(view_, &render::SliceView::viewMoved, this, [this] {
    if (levels_) rest_.start();
  });
}

render::LevelPatch LevelView::readCoarse(const io::DisplayLevels& levels, int z) {
  const io::DisplayLevel& l = levels.levels().back();
  return readPatch(levels, levels.coarsest(), z, 0, 0, l.width, l.height);
}

void LevelView::setStack(std::shared_ptr<const io::DisplayLevels> levels, int width, int height) {
  ++generation_;
  ++fetchGeneration_;
  rest_.stop();
  levels_ = std::move(levels);
  width_ = width;
  height_ = height;
  coarse_ = fine_ = {};
  fineLevel_ = boxLevel_ = -1;
}

void LevelView::show(int z, render::LevelPatch coarse) {
  if (!levels_) return;
  if (z != z_) {
    fine_ = {};
    fineLevel_ = boxLevel_ = -1;
    ++generation_;
  }
  z_ = z;
  coarse_ = std::move(coarse);
  draw();
  rest_.start();
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

void LevelView::draw() {
  std::vector<render::LevelPatch> patches{coarse_};
  if (fine_.pixels) patches.push_back(fine_);
  view_->setLevelPatches(std::move(patches), width_, height_);
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

bool LevelView::viewRefined() const {
  if (!levels_) return true;
  const int level = levels_->levelForZoom(view_->zoom());
  if (level >= coarsestLevel()) return true;
  if (fineLevel_ != level || !fine_.pixels) return false;
  // The fine patch's box in the level's pixels (its full-resolution box divided back).
  const io::DisplayLevel& l = levels_->levels()[size_t(level)];
  const Box v = visibleBox(l);
  return v.x0 >= std::llround(fine_.x0 / l.scaleX) && v.x1 <= std::llround(fine_.x1 / l.scaleX) &&
         v.y0 >= std::llround(fine_.y0 / l.scaleY) && v.y1 <= std::llround(fine_.y1 / l.scaleY);
}

void LevelView::refine() {
  if (!levels_ || !coarse_.pixels || view_->width() <= 0 || view_->height() <= 0) return;
  const int level = levels_->levelForZoom(view_->zoom());
  if (level >= levels_->coarsest()) {
    if (fine_.pixels) {
      fine_ = {};
      fineLevel_ = boxLevel_ = -1;
      ++generation_;
      draw();
    }
    return;
  }
  // The visible full-resolution box, with a margin, in the level's pixels.
  const QPointF a = view_->widgetToImage({0, 0});
  const QPointF b = view_->widgetToImage({double(view_->width()), double(view_->height())});
  const double mx = std::abs(b.x() - a.x()) * kMargin, my = std::abs(b.y() - a.y()) * kMargin;
  const io::DisplayLevel& l = levels_->levels()[size_t(level)];
  auto clampTo = [](double v, int64_t n) { return std::clamp<int64_t>(int64_t(v), 0, n); };
  const int64_t x0 = clampTo(std::floor((std::min(a.x(), b.x()) - mx) / l.scaleX), l.width);
  const int64_t x1 = clampTo(std::ceil((std::max(a.x(), b.x()) + mx) / l.scaleX) + 1, l.width);
  const int64_t y0 = clampTo(std::floor((std::min(a.y(), b.y()) - my) / l.scaleY), l.height);
  const int64_t y1 = clampTo(std::ceil((std::max(a.y(), b.y()) + my) / l.scaleY) + 1, l.height);
  if (x0 >= x1 || y0 >= y1) return;
  // Held (or being read) already: the visible part without its margin lies inside.
  const Box v = visibleBox(l);
  if (level == boxLevel_ && v.x0 >= boxX0_ && v.x1 <= boxX1_ && v.y0 >= boxY0_ && v.y1 <= boxY1_)
    return;
  boxLevel_ = level;
  boxX0_ = x0, boxX1_ = x1, boxY0_ = y0, boxY1_ = y1;
  const quint64 generation = ++generation_;
  auto current = [this, levels = levels_, generation] {
    return levels == levels_ && generation == generation_;
  };
  auto read = [levels = levels_, level, z = z_, x0, y0, x1, y1] {
    return readPatch(*levels, level, z, x0, y0, x1, y1);
  };
  whenDone(
      this, QtConcurrent::run(pool_, read),
      [this, current, level](const render::LevelPatch& patch) {
        if (!current()) return;
        fine_ = patch;
        fineLevel_ = level;
        draw();
        emit refined(level);
      },
      [this, current](const std::exception& e) {
        if (!current()) return;
        boxLevel_ = -1;
        emit readFailed(QString::fromStdString(e.what()));
      });
}

}  // namespace stacklens::ui
