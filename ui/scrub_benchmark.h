// Measures slider-change-to-frame-presented latency by moving the slider programmatically.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <vector>

namespace stacklens::ui {

class MainWindow;

// After the stack is open, reads the slices it will show into the cache (so the figure is
// that of cached slices), then for each of `frames` steps sets the slider to the next slice
// and waits for the view's frameSwapped. A heartbeat timer measures how long the GUI thread
// went without servicing its event loop. Emits finished(json) with
// {frames, p50_ms, p95_ms, max_ms, dropped, gui_stall_max_ms}; `dropped` counts steps whose
// frame did not arrive within 500 ms. Then 40 colormap/scale changes on the shown slice add
// display_change_p50_ms and display_change_p95_ms (change to frame presented), and
// cpu_ms_per_frame: the process's CPU time per slider step (robust to other load on the machine).
class ScrubBenchmark : public QObject {
  Q_OBJECT
 public:
  ScrubBenchmark(MainWindow* window, int frames, QObject* parent = nullptr);
  void start();  // call once the stack is open

 signals:
  void finished(const QString& json);

 private:
  void step();
  void frameArrived();
  void finish();

  MainWindow* window_;
  int frames_;
  int done_ = 0;
  int dropped_ = 0;
  bool waiting_ = false;
  QElapsedTimer clock_;
  qint64 stepStartNs_ = 0;
  std::vector<double> latencies_;
  static constexpr int kDisplaySteps = 40;
  int displayDone_ = 0;
  std::vector<double> displayLatencies_;
  QTimer heartbeat_, timeout_;
  qint64 lastBeatNs_ = 0;
  double stallMaxMs_ = 0;
  double cpuStartMs_ = 0, cpuPerFrameMs_ = -1;  // process CPU time over the slider steps
};

}  // namespace stacklens::ui
