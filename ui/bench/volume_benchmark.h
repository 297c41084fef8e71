// stacklens --volume-benchmark FILE: the 3D view's frame rate in the real viewer. Once the
// stack is open, shows the 3D view with frames of a fixed size, waits for the volume, draws a
// few frames to warm up, then turns the volume by a small step `frames` times, each time waiting
// until the frame reaches the screen. Emits finished(json) with the renderer (CUDA or OpenGL),
// gl_renderer, the volume's and the frame's shapes, the mode, load_ms (the whole stack into the
// view), p50_ms/p95_ms/max_ms from the turn to the presented frame, fps (1000 / p50_ms) and
// render_p50_ms (the renderer's own time: CUDA synchronised, or OpenGL's draw call), and with
// --soak-minutes the per-minute figures.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QSize>
#include <vector>

#include "compute/params.h"
#include "ui/bench/soak_sampler.h"

namespace stacklens::ui {

class MainWindow;
class VolumePanel;

class VolumeBenchmark : public QObject {
  Q_OBJECT
 public:
  VolumeBenchmark(MainWindow* window, int frames, QSize output, compute::VolumeMode mode,
                  QObject* parent = nullptr);
  void start();  // call once the stack is open
  // Turns for `minutes` instead of a frame count, adding per-minute figures as "soak"
  // (SoakSampler); the other figures are then those of the last minute.
  void setSoak(double minutes, int device);

 signals:
  void finished(const QString& json);

 private:
  void nextFrame();
  void frameShown();
  QString report() const;
  QString figures() const;  // the frame times as JSON, without the soak's
  void startNewMinute();    // a soak keeps the frame times of one minute only

  MainWindow* window_;
  VolumePanel* panel_ = nullptr;
  int frames_, warmUp_ = 3, done_ = 0;
  QSize output_;
  compute::VolumeMode mode_;
  QElapsedTimer load_, frame_;
  double loadMs_ = 0;
  std::vector<double> latency_, render_;
  SoakSampler soak_{0, -1};
};

}  // namespace stacklens::ui
