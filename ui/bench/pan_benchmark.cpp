// The --pan-benchmark driver: a synthetic mouse drag across a plane, frame by frame.
#include "ui/bench/pan_benchmark.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMouseEvent>
#include <algorithm>
#include <cmath>

#include "ui/bench/soak_sampler.h"
#include "ui/display/level_view.h"
#include "ui/frame/main_window.h"

namespace stacklens::ui {

namespace {

// A move's frame not presented within this is counted as dropped (the drag goes on).
constexpr int kFrameTimeoutMs = 2000;
// Waiting for the view to be drawn from the zoom's level, before and after the drag.
constexpr int kRefineTimeoutMs = 30000;

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double index = q * double(values.size() - 1);
  const size_t lo = size_t(std::floor(index)), hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (index - double(lo));
}

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

}  // namespace

PanBenchmark::PanBenchmark(MainWindow* window, int frames, double zoom, int stepPixels,
                           QObject* parent)
    : QObject(parent),
      window_(window),
      frames_(std::max(1, frames)),
      stepPixels_(std::max(1, stepPixels)),
      zoom_(zoom) {
  heartbeat_.setInterval(1);
  connect(&heartbeat_, &QTimer::timeout, this, [this] {
    const qint64 now = clock_.nsecsElapsed();
    if (lastBeatNs_) stallMaxMs_ = std::max(stallMaxMs_, (now - lastBeatNs_) / 1e6);
    lastBeatNs_ = now;
  });
  timeout_.setSingleShot(true);
  connect(&timeout_, &QTimer::timeout, this, [this] {
    switch (phase_) {
      case Phase::Settling:
        finish("the view was not drawn from its level within 30 s of setting the zoom");
        break;
      case Phase::Panning:
        ++dropped_;
        ++done_;
        step();
        break;
      case Phase::Refining:
        finish();  // refine_after_pan_ms stays −1
        break;
      default:
        break;
    }
  });
  connect(window_->sliceView(), &QOpenGLWindow::frameSwapped, this, &PanBenchmark::frameArrived);
}

void PanBenchmark::start() {
  if (phase_ != Phase::Idle) return;
  render::SliceView* view = window_->sliceView();
  view->setTool(render::SliceView::Tool::Pan);
  const double viewWidth = view->width() / zoom_;  // in full-resolution pixels
  const double travel = view->sliceWidth() - viewWidth;
  const int steps = int(std::floor(travel * zoom_ / stepPixels_));
  if (steps < 1) {
    finish("the plane is not wider than the view at this zoom: nothing to pan");
    return;
  }
  frames_ = std::min(frames_, steps);
  clock_.start();
  // The view's left edge on the plane's left edge (pixel centres at integers), at mid height.
  view->setView(zoom_, QPointF(viewWidth / 2 - 0.5, view->sliceHeight() / 2.0));
  view->setZoom(zoom_);  // as a user's zoom: the display levels follow
  phase_ = Phase::Settling;
  phaseStartNs_ = clock_.nsecsElapsed();
  timeout_.start(kRefineTimeoutMs);
}

void PanBenchmark::sendMouse(int type, QPointF pos) {
  render::SliceView* view = window_->sliceView();
  const bool press = type == QEvent::MouseButtonPress, release = type == QEvent::MouseButtonRelease;
  QMouseEvent event(QEvent::Type(type), pos, view->mapToGlobal(pos),
                    press || release ? Qt::LeftButton : Qt::NoButton,
                    release ? Qt::NoButton : Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(view, &event);
}

void PanBenchmark::frameArrived() {
  const qint64 now = clock_.nsecsElapsed();
  LevelView* levels = window_->slicePath()->levelView();
  switch (phase_) {
    case Phase::Settling:
      if (!levels->viewRefined()) return;
      timeout_.stop();
      settleMs_ = (now - phaseStartNs_) / 1e6;
      emit stepPresented(0);
      phase_ = Phase::Panning;
      mouse_ = QPointF(window_->sliceView()->width() / 2.0, window_->sliceView()->height() / 2.0);
      sendMouse(QEvent::MouseButtonPress, mouse_);
      heartbeat_.start();
      QTimer::singleShot(0, this, &PanBenchmark::step);
      return;
    case Phase::Panning:
      if (levels->viewRefined()) movesRefined(now);
      if (!timeout_.isActive()) return;  // a frame of no move (none is waiting)
      timeout_.stop();
      frameMs_.push_back((now - stepStartNs_) / 1e6);
      if (lastFrameNs_ >= 0) intervalMs_.push_back((now - lastFrameNs_) / 1e6);
      lastFrameNs_ = now;
      if (!levels->viewRefined()) ++placeholders_;
      ++done_;
      emit stepPresented(done_);
      QTimer::singleShot(0, this, &PanBenchmark::step);
      return;
    case Phase::Refining:
      if (!levels->viewRefined()) return;
      movesRefined(now);
      refineMs_ = (now - phaseStartNs_) / 1e6;
      finish();
      return;
    default:
      return;
  }
}

void PanBenchmark::step() {
  if (phase_ != Phase::Panning) return;
  if (done_ >= frames_) {
    release();
    return;
  }
  mouse_.rx() -= stepPixels_;  // the image follows the mouse left: the view travels right
  distance_ += stepPixels_ / zoom_;
  stepStartNs_ = clock_.nsecsElapsed();
  unrefinedMoveNs_.push_back(stepStartNs_);
  timeout_.start(kFrameTimeoutMs);
  sendMouse(QEvent::MouseMove, mouse_);
}

void PanBenchmark::release() {
  sendMouse(QEvent::MouseButtonRelease, mouse_);
  phase_ = Phase::Refining;
  phaseStartNs_ = clock_.nsecsElapsed();
  if (window_->slicePath()->levelView()->viewRefined()) {
    refineMs_ = 0;  // the last frame was drawn from the level already
    finish();
    return;
  }
  timeout_.start(kRefineTimeoutMs);
}

void PanBenchmark::movesRefined(qint64 now) {
  for (qint64 start : unrefinedMoveNs_) moveRefinedMs_.push_back((now - start) / 1e6);
  unrefinedMoveNs_.clear();
}

void PanBenchmark::finish(const QString& error) {
  phase_ = Phase::Done;
  timeout_.stop();
  heartbeat_.stop();
  const render::SliceView* view = window_->sliceView();
  const LevelView* levels = window_->slicePath()->levelView();
  std::vector<double> fps;
  for (double ms : intervalMs_) fps.push_back(ms > 0 ? 1000.0 / ms : 0.0);
  QJsonObject o;
  if (!error.isEmpty()) o["error"] = error;
  o["frames"] = int(frameMs_.size());
  o["zoom"] = zoom_;
  o["level"] = levels->levelForZoom(zoom_);
  o["levels"] = std::max(1, levels->levelCount());
  o["pan_px_per_frame"] = stepPixels_;
  o["distance_px"] = round3(distance_);
  o["fps_median"] = round3(percentile(fps, 0.5));
  o["fps_p5"] = round3(percentile(fps, 0.05));
  o["frame_p50_ms"] = round3(percentile(frameMs_, 0.5));
  o["frame_p95_ms"] = round3(percentile(frameMs_, 0.95));
  o["frame_max_ms"] =
      round3(frameMs_.empty() ? 0.0 : *std::max_element(frameMs_.begin(), frameMs_.end()));
  o["placeholder_frames"] = placeholders_;
  o["move_refined_p50_ms"] = round3(percentile(moveRefinedMs_, 0.5));
  o["move_refined_p95_ms"] = round3(percentile(moveRefinedMs_, 0.95));
  o["move_refined_max_ms"] = round3(
      moveRefinedMs_.empty() ? 0.0
                             : *std::max_element(moveRefinedMs_.begin(), moveRefinedMs_.end()));
  o["moves_never_refined"] = int(unrefinedMoveNs_.size());
  const LevelView::TileCounts& tiles = levels->tileCounts();
  o["tiles_read"] = tiles.read;
  o["tiles_cancelled"] = tiles.cancelled;
  o["tiles_read_stale"] = tiles.readStale;
  o["dropped"] = dropped_;
  o["settle_ms"] = round3(settleMs_);
  o["refine_after_pan_ms"] = round3(refineMs_);
  o["gui_stall_max_ms"] = round3(stallMaxMs_);
  o["peak_rss_mb"] = round3(peakResidentMb());
  o["view_size"] = QString("%1x%2").arg(view->width()).arg(view->height());
  o["plane_size"] = QString("%1x%2").arg(view->sliceWidth()).arg(view->sliceHeight());
  o["gl_renderer"] = view->glRenderer();
  emit finished(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)));
}

}  // namespace stacklens::ui
