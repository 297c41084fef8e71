// The 3D view's work off the GUI thread, on one pool thread: loading the volume (ui/
// volume_source.h), drawing frames on the GPU (the newest camera wins: a frame asked for while
// one is drawn replaces any still waiting), and drawing the same frame on the CPU twin for the
// timing panel. Results come back on the GUI thread through the callbacks, never after the
// worker is gone.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "compute/backend.h"
#include "ui/live/timing_panel.h"
#include "ui/volume/volume_source.h"

namespace stacklens::ui {

class VolumeWorker : public QObject {
  Q_OBJECT
 public:
  struct Callbacks {
    std::function<void(double)> progress;
    // The volume, and why the GPU is not used when it was asked for (empty: it is, or was not
    // asked for).
    std::function<void(std::shared_ptr<const LoadedVolume>, QString gpuNote)> loaded;
    std::function<void(QString)> failed;
    // A frame drawn by the GPU: on the device (or the host when download was asked), and how
    // long it took, synchronised.
    std::function<void(compute::Image, double ms, compute::VolumeRenderParams)> rendered;
    std::function<void(TimingRow)> compared;
  };

  explicit VolumeWorker(Callbacks callbacks, QObject* parent = nullptr);
  ~VolumeWorker() override;  // cancels a load and waits for the pool

  // Loads request's volume (cancelling a load under way); gpu: draw with CUDA when usable.
  void load(VolumeRequest request, bool gpu);
  void cancelLoad();
  bool loading() const { return loading_; }
  bool gpu() const { return backend_ != nullptr; }
  // Frames on the GPU. download: results on the host (no CUDA–OpenGL interop here).
  void render(const compute::VolumeRenderParams& p, bool download);
  // The frame p on the GPU and on the CPU, timed, and how far apart they are.
  void compare(const compute::VolumeRenderParams& p);

 private:
  void startRender();
  // Runs job on the pool; its post(f) runs f on the GUI thread while the worker exists.
  void run(std::function<void(const std::function<void(std::function<void()>)>&)> job);

  Callbacks callbacks_;
  QThreadPool pool_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::shared_ptr<compute::Backend> backend_;  // CUDA, made by the load; null: no GPU drawing
  std::shared_ptr<const LoadedVolume> volume_;
  bool loading_ = false, rendering_ = false, download_ = false;
  std::optional<compute::VolumeRenderParams> pending_;
  int generation_ = 0;  // a new load makes older frames stale
};

}  // namespace stacklens::ui
