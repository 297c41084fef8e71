// The --scrub-benchmark driver: cached slices, slider steps, frame latency percentiles.
#include "ui/bench/scrub_benchmark.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <limits>

#include <sys/resource.h>
#include <time.h>

#include "render/colormap.h"
#include "render/frame_timing.h"
#include "ui/frame/main_window.h"
#include "ui/live/live_processing.h"

namespace stacklens::ui {

ScrubBenchmark::ScrubBenchmark(MainWindow* window, int frames, QObject* parent)
    : QObject(parent), window_(window), frames_(std::max(1, frames)) {
  heartbeat_.setInterval(1);
  connect(&heartbeat_, &QTimer::timeout, this, [this] {
    const qint64 now = clock_.nsecsElapsed();
    const double stall = lastBeatNs_ ? (now - lastBeatNs_) / 1e6 : 0.0;
    stallMaxMs_ = std::max(stallMaxMs_, stall);
    if (done_ < frames_ && stall > scrubStallMaxMs_) {
      scrubStallMaxMs_ = stall;
      scrubStallStep_ = done_;
    }
    lastBeatNs_ = now;
  });
  timeout_.setSingleShot(true);
  timeout_.setInterval(500);
  connect(&timeout_, &QTimer::timeout, this, [this] {
    if (!waiting_) return;
    waiting_ = false;
    if (done_ >= frames_) {
      // A display change that drew nothing: counted as its timeout.
      displayLatencies_.push_back(timeout_.interval());
      kindLatencies_[displayDone_ % 3].push_back(timeout_.interval());
      ++displayDone_;
    } else {
      ++dropped_;
      ++done_;
    }
    QTimer::singleShot(0, this, &ScrubBenchmark::step);
  });
  connect(window_->sliceView(), &QOpenGLWindow::frameSwapped, this, &ScrubBenchmark::frameArrived);
}

// CPU time of the calling thread, in ms.
static double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// CPU time of the whole process (GUI thread, llvmpipe and worker threads), in ms.
static double processCpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

void ScrubBenchmark::start() {
  auto begin = [this] {
    clock_.start();
    heartbeat_.start();
    cpuStartMs_ = processCpuMs();
    guiCpuStartMs_ = threadCpuMs();
    soak_.start();
    QTimer::singleShot(50, this, &ScrubBenchmark::step);
  };
  auto whenReady = [this, begin] {
    // The chosen backend is made off the GUI thread: measure with it, not the one before.
    if (live_ && live_->backendsPending())
      connect(live_, &LiveProcessing::backendsReady, this, begin, Qt::SingleShotConnection);
    else
      begin();
  };
  if (cold_) {
    frames_ = std::max(1, std::min(frames_, window_->navigation()->count() - 1));
    timeout_.setInterval(10000);             // a slow read is slow, not dropped
    QTimer::singleShot(0, this, whenReady);  // nothing read ahead of the steps
    return;
  }
  connect(window_->slicePath(), &SlicePath::preloaded, this, whenReady, Qt::SingleShotConnection);
  window_->slicePath()->preload(std::min<int>(frames_, static_cast<int>(window_->info().z)));
}

void ScrubBenchmark::step() {
  if (done_ >= frames_ && cpuPerFrameMs_ < 0) {
    cpuPerFrameMs_ = (processCpuMs() - cpuStartMs_) / frames_;
    guiCpuPerFrameMs_ = (threadCpuMs() - guiCpuStartMs_) / frames_;
  }
  if (done_ >= frames_) {
    // Second phase: colormap and scale changes on the slice shown (no pixel upload).
    if (displayDone_ >= kDisplaySteps) {
      finish();
      return;
    }
    // Cycle colormap, scale, limits; each is one setter call on the panel, as a user's choice.
    const QStringList maps = render::colormapNames();
    waiting_ = true;
    stepStartNs_ = clock_.nsecsElapsed();
    timeout_.start();
    auto* panel = window_->displayPanel();
    const int round = displayDone_ / 3;
    switch (displayDone_ % 3) {
      case 0:
        panel->setColormap(maps[(round + 1) % maps.size()]);
        break;
      case 1:
        panel->setScale(round % 2 == 0 ? render::Scale::Sqrt : render::Scale::Linear);
        break;
      default: {
        // Manual limits narrowed and widened in turn around those computed for the slice.
        if (!limitsSet_) {
          baseLimits_ = window_->sliceView()->display().limits;
          limitsSet_ = true;
        }
        const float span = baseLimits_.high - baseLimits_.low;
        const float f = round % 2 == 0 ? 0.1f : 0.0f;
        panel->setManualLimits({baseLimits_.low + f * span, baseLimits_.high - f * span});
      }
    }
    return;
  }
  const int count = std::max(1, window_->navigation()->count());
  const int cached = cold_ ? count : std::min(count, frames_);
  int next = (window_->slicePath()->currentZ() + 1) % cached;
  if (count == 1) next = 0;
  targetZ_ = next;
  jump_ = std::abs(next - window_->slicePath()->currentZ()) > 1;
  stepStartSteadyNs_ = render::steadyNowNs();
  if (live_ && live_->active() && next == window_->navigation()->value())
    live_->sliceRequested(next);  // the slider cannot move: ask for the slice again
  waiting_ = true;
  stepStartNs_ = clock_.nsecsElapsed();
  timeout_.start();
  if (next == window_->navigation()->value()) {
    window_->sliceView()->scheduleFrame();  // a single-slice stack: measure a redraw
  } else {
    window_->navigation()->setValue(next);  // what the window does at once for a slider move
    addStage("slider_handler", (render::steadyNowNs() - stepStartSteadyNs_) / 1e6);
  }
}

void ScrubBenchmark::frameArrived() {
  if (!waiting_) return;
  // With live processing a slider step is done when its processed slice is on screen.
  if (live_ && live_->active() && done_ < frames_ && !processedSeen_) {
    ++otherFrames_;  // the raw slice, or an overlay or ortho-view redraw
    const render::FrameTiming& f = window_->sliceView()->lastFrame();
    if (f.filled) addStage("other_frame_fill", (f.fillEndNs - f.paintStartNs) / 1e6);
    return;
  }
  // Read while scrubbing: a frame drawn before the slice arrived (an overlay's) is not it.
  if (cold_ && done_ < frames_ && window_->slicePath()->currentZ() != targetZ_) return;
  processedSeen_ = false;
  waiting_ = false;
  timeout_.stop();
  const double ms = (clock_.nsecsElapsed() - stepStartNs_) / 1e6;
  if (done_ >= frames_) {
    displayLatencies_.push_back(ms);
    kindLatencies_[displayDone_ % 3].push_back(ms);
    ++displayDone_;
    QTimer::singleShot(0, this, &ScrubBenchmark::step);
    return;
  }
  latencies_.push_back(ms);
  (jump_ ? jumps_ : adjacent_).push_back(ms);
  ++done_;
  // The last minute's steps stay: the report's other figures are theirs.
  if (soak_.add(ms) && !soak_.over()) startNewMinute();
  if (soak_.over()) {
    frames_ = done_;
    timeout_.setInterval(500);  // the display changes, as without processing
  }
  QTimer::singleShot(0, this, &ScrubBenchmark::step);
}

void ScrubBenchmark::setSoak(double minutes, int device) {
  soak_ = SoakSampler(minutes, device);
  if (!soak_.enabled()) return;
  frames_ = std::numeric_limits<int>::max() / 2;  // until the time is up
  startNewMinute();
}

void ScrubBenchmark::startNewMinute() {
  for (auto* v : {&latencies_, &adjacent_, &jumps_, &processingMs_}) startMinuteOf(*v);
  for (auto& [name, values] : stages_) startMinuteOf(values);
}

// Where a step's time went, from the slider (t0) to the processed frame's swap. Steps whose job
// was a prefetch adopted by the request have job_start < 0 (it began before the slider moved).
void ScrubBenchmark::stageSample() {
  const ProcessingResultPtr r = live_->lastResult();
  if (!r) return;
  const render::FrameTiming& f = window_->sliceView()->lastFrame();
  auto ms = [](int64_t from, int64_t to) { return (to - from) / 1e6; };
  const int64_t t0 = stepStartSteadyNs_;
  const compute::PipelineResult& p = r->result;
  if (r->prefetched) ++adoptedPrefetches_;
  addStage("job_start", ms(t0, r->jobStartNs));
  addStage("read", p.readMs);
  addStage("upload", p.uploadMs);
  for (const auto& t : p.timings) addStage(compute::stageName(t.stage), t.computeMs);
  addStage("pipeline", ms(r->jobStartNs, r->pipelineEndNs));
  addStage("download", p.downloadMs);
  addStage("limits_and_download", ms(r->pipelineEndNs, r->postedNs));
  addStage("handover", ms(r->postedNs, live_->lastReceivedNs()));
  addStage("until_paint", ms(live_->lastReceivedNs(), f.paintStartNs));
  addStage("texture_fill", ms(f.paintStartNs, f.fillEndNs));
  addStage("draw", ms(f.fillEndNs, f.paintEndNs));
  addStage("swap", ms(f.paintEndNs, f.swappedNs));
  addStage("step", ms(t0, f.swappedNs));
}

namespace {

// Linear interpolation between order statistics (numpy's default) of sorted values.
double percentile(const std::vector<double>& values, double q) {
  if (values.empty()) return 0.0;
  const double index = q * (values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(index));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (index - lo);
}
double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

}  // namespace

void ScrubBenchmark::finish() {
  heartbeat_.stop();
  QJsonObject o;
  o["frames"] = frames_;
  if (soak_.enabled()) o["soak"] = soak_.report();
  addStepFigures(o);
  if (live_ && !processingMs_.empty()) addProcessingFigures(o);
  addDisplayFigures(o);
  emit finished(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)));
}

// Slider-to-frame latencies: all steps, adjacent steps, jumps, and the GUI thread's stalls.
void ScrubBenchmark::addStepFigures(QJsonObject& o) {
  std::vector<double> sorted = latencies_;
  std::sort(sorted.begin(), sorted.end());
  o["p50_ms"] = round3(percentile(sorted, 0.5));
  o["p95_ms"] = round3(percentile(sorted, 0.95));
  o["max_ms"] = round3(sorted.empty() ? 0.0 : sorted.back());
  o["dropped"] = dropped_;
  if (cold_) {
    o["cold"] = true;
    // Since the stack opened: the read-ahead may have read the first step's slice already.
    if (window_->slicePath()->slices())
      o["file_reads"] = window_->slicePath()->slices()->fileReads();
    // In order: where the slow steps fall (every n-th, after a jump, at the start) tells why.
    QJsonArray steps;
    for (double ms : latencies_) steps.append(round3(ms));
    o["steps_ms"] = steps;
  }
  std::sort(adjacent_.begin(), adjacent_.end());
  std::sort(jumps_.begin(), jumps_.end());
  o["adjacent_p50_ms"] = round3(percentile(adjacent_, 0.5));
  o["adjacent_p95_ms"] = round3(percentile(adjacent_, 0.95));
  o["jump_steps"] = static_cast<int>(jumps_.size());
  o["jump_p50_ms"] = round3(percentile(jumps_, 0.5));
  o["jump_max_ms"] = round3(jumps_.empty() ? 0.0 : jumps_.back());
  o["gui_stall_max_ms"] = round3(stallMaxMs_);
  o["gui_stall_scrub_max_ms"] = round3(scrubStallMaxMs_);
  o["gui_stall_scrub_max_step"] = scrubStallStep_;
  o["first_step_ms"] = round3(latencies_.empty() ? 0.0 : latencies_.front());
  o["cpu_ms_per_frame"] = round3(cpuPerFrameMs_);
  o["gui_thread_cpu_ms_per_frame"] = round3(guiCpuPerFrameMs_);
}

// How much of the latency is the pipeline itself (read, compute, download on the worker), per
// stage, the raw slices kept, and the first processed frame's path.
void ScrubBenchmark::addProcessingFigures(QJsonObject& o) {
  std::sort(processingMs_.begin(), processingMs_.end());
  o["processing_p50_ms"] = round3(processingMs_[processingMs_.size() / 2]);
  o["backend"] = QString::fromStdString(live_->lastResult()->result.backend);
  o["threads"] = live_->lastResult()->result.threads;
  o["display_path"] = live_->displayPath();
  QJsonObject p50, p95;
  for (auto& [name, values] : stages_) {
    std::sort(values.begin(), values.end());
    p50[QString::fromStdString(name)] = round3(percentile(values, 0.5));
    p95[QString::fromStdString(name)] = round3(percentile(values, 0.95));
  }
  o["stage_p50_ms"] = p50;
  o["stage_p95_ms"] = p95;
  o["frames_before_processed"] = otherFrames_;
  o["prefetches_adopted"] = adoptedPrefetches_;
  if (auto lp = live_->worker()->liveProcessor()) o["file_reads"] = lp->fileReads();
  if (auto slices = live_->worker()->slices()) {
    o["raw_budget_mb"] = double(slices->budget() >> 20);
    o["raw_mb"] = round3(double(slices->bytes()) / (1 << 20));
    o["raw_device_mb"] = round3(double(slices->deviceBytes()) / (1 << 20));
  }
  const LiveProcessing::FirstResult& first = live_->firstResult();
  if (!first.result || !first.presentedNs) return;
  auto ms = [&](int64_t from, int64_t to) { return round3((to - from) / 1e6); };
  QJsonObject fo;
  fo["total_ms"] = ms(first.chosenNs, first.presentedNs);
  fo["backend_ready_ms"] = ms(first.chosenNs, first.readyNs);
  fo["job_start_ms"] = ms(first.chosenNs, first.result->jobStartNs);
  fo["pipeline_ms"] = ms(first.result->jobStartNs, first.result->pipelineEndNs);
  fo["read_ms"] = round3(first.result->result.readMs);
  fo["upload_ms"] = round3(first.result->result.uploadMs);
  fo["limits_and_download_ms"] = ms(first.result->pipelineEndNs, first.result->postedNs);
  fo["handover_ms"] = ms(first.result->postedNs, first.receivedNs);
  fo["texture_fill_ms"] = ms(first.frame.paintStartNs, first.frame.fillEndNs);
  fo["swap_ms"] = ms(first.frame.paintEndNs, first.frame.swappedNs);
  o["first_processed"] = fo;
}

// Display changes (colour map, scale, limits) and where the figures were taken: llvmpipe's cost
// per frame scales with the view's pixels.
void ScrubBenchmark::addDisplayFigures(QJsonObject& o) {
  std::vector<double> display = displayLatencies_;
  std::sort(display.begin(), display.end());
  o["display_change_p50_ms"] = round3(percentile(display, 0.5));
  o["display_change_p95_ms"] = round3(percentile(display, 0.95));
  const char* kinds[] = {"colormap_change_p50_ms", "scale_change_p50_ms", "limits_change_p50_ms"};
  for (int k = 0; k < 3; ++k) {
    std::vector<double> v = kindLatencies_[k];
    std::sort(v.begin(), v.end());
    o[kinds[k]] = round3(percentile(v, 0.5));
  }
  const auto* view = window_->sliceView();
  o["view_size"] = QString("%1x%2").arg(view->width()).arg(view->height());
  o["window_size"] = QString("%1x%2").arg(window_->width()).arg(window_->height());
  o["slice_size"] = QString("%1x%2").arg(view->sliceWidth()).arg(view->sliceHeight());
  o["gl_vendor"] = view->glVendor();
  o["gl_renderer"] = view->glRenderer();
}

void ScrubBenchmark::setProcessing(LiveProcessing* live) {
  live_ = live;
  live_->worker()->setCacheBudget(0);
  timeout_.setInterval(30000);  // a slow pipeline is slow, not dropped
  connect(live_, &LiveProcessing::processedPresented, this, [this](int z) {
    if (!waiting_ || done_ >= frames_ || z != targetZ_) return;
    processedSeen_ = true;
    if (auto r = live_->lastResult()) processingMs_.push_back(r->result.totalMs);
    stageSample();
    if (done_ + 1 >= frames_) timeout_.setInterval(500);  // display changes: as without processing
    frameArrived();
  });
}

}  // namespace stacklens::ui
