// Measures slider-change-to-frame-presented latency by moving the slider programmatically.
#pragma once

#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QTimer>
#include <map>
#include <string>
#include <vector>

#include "render/limits.h"
#include "ui/bench/soak_sampler.h"

namespace stacklens::ui {

class MainWindow;
class LiveProcessing;

// After the stack is open, reads the slices it will show into the cache (so the figure is
// that of cached slices), then for each of `frames` steps sets the slider to the next slice
// and waits for the view's frameSwapped. A heartbeat timer measures how long the GUI thread
// went without servicing its event loop. Emits finished(json) with
// {frames, p50_ms, p95_ms, max_ms, dropped, gui_stall_max_ms}; `dropped` counts steps whose
// frame did not arrive within 500 ms. Then 60 display changes on the shown slice (colormap, scale
// linear/sqrt, manual limits, in turn) add display_change_p50_ms and display_change_p95_ms and a
// median per kind: each from the DisplayPanel setter call (what a user's choice runs) to the
// main view's frameSwapped, i.e. the new frame handed to the window system. Also
// cpu_ms_per_frame: the process's CPU time per slider step (robust to other load on the machine),
// and view_size/window_size/slice_size, which the software-GL figures depend on.
// With live processing: gl_vendor/gl_renderer of the view, display_path (interop, download or
// host), stage_p50_ms/stage_p95_ms (per-stage times of each step, from the slider to the
// presented frame; see stageSample()), the frames drawn before the processed one, and
// first_processed (from choosing the GPU to the first processed slice on screen), and the steps
// to a neighbouring slice (adjacent_p50_ms/adjacent_p95_ms) apart from the jumps back to the first
// slice (jump_steps, jump_p50_ms, jump_max_ms).
class ScrubBenchmark : public QObject {
  Q_OBJECT
 public:
  ScrubBenchmark(MainWindow* window, int frames, QObject* parent = nullptr);
  void start();  // call once the stack is open
  // Live processing on: a slider step counts when its processed slice is presented (every
  // frame is processed: the result cache is switched off for the run).
  void setProcessing(LiveProcessing* live);
  // Steps for `minutes` instead of a frame count and adds the per-minute figures (SoakSampler)
  // as "soak"; the other figures are then those of the last minute. device: the CUDA device to
  // watch, −1 for none.
  void setSoak(double minutes, int device);
  // Reads while scrubbing: no slice is read before the first step, every step goes to a slice
  // not shown before (at most the stack's depth − 1 steps) and its frame waits for the read
  // (the viewer's read-ahead of the neighbours included). Adds "cold" and "file_reads" (slices
  // read from the file since the stack opened, the opener's first slice not counted).
  void setCold(bool cold) { cold_ = cold; }

 signals:
  void finished(const QString& json);

 private:
  void step();
  void frameArrived();
  void finish();
  // finish()'s parts of the JSON.
  void addStepFigures(QJsonObject& o);
  void addProcessingFigures(QJsonObject& o);
  void addDisplayFigures(QJsonObject& o);
  void stageSample();  // the processed frame of this step was presented

  void addStage(const char* name, double ms) { stages_[name].push_back(ms); }
  void startNewMinute();  // a soak keeps the per-step records of one minute only

  MainWindow* window_;
  int frames_;
  int done_ = 0;
  int dropped_ = 0;
  bool waiting_ = false;
  QElapsedTimer clock_;
  qint64 stepStartNs_ = 0;
  std::vector<double> latencies_;
  static constexpr int kDisplaySteps = 60;
  int displayDone_ = 0;
  std::vector<double> displayLatencies_;
  std::vector<double> kindLatencies_[3];  // colormap, scale, limits
  bool limitsSet_ = false;
  render::Limits baseLimits_;
  QTimer heartbeat_, timeout_;
  qint64 lastBeatNs_ = 0;
  double stallMaxMs_ = 0, scrubStallMaxMs_ = 0;  // whole run; slider steps only
  int scrubStallStep_ = -1;
  LiveProcessing* live_ = nullptr;
  int targetZ_ = -1;
  bool processedSeen_ = false;
  std::vector<double> processingMs_;  // the pipeline's own time per frame
  int64_t stepStartSteadyNs_ = 0;
  std::map<std::string, std::vector<double>> stages_;
  int otherFrames_ = 0, adoptedPrefetches_ = 0;  // frames before the processed one; adoptions
  // Steps to a neighbouring slice, and jumps (the wrap from the last slice to the first), which
  // no prefetch can anticipate.
  bool jump_ = false;
  std::vector<double> adjacent_, jumps_;
  double cpuStartMs_ = 0, cpuPerFrameMs_ = -1;        // process CPU time over the slider steps
  double guiCpuStartMs_ = 0, guiCpuPerFrameMs_ = -1;  // the GUI thread's alone
  SoakSampler soak_{0, -1};
  bool cold_ = false;
};

}  // namespace stacklens::ui
