// View ▸ 3D view: the open stack (raw, or as the current pipeline shows it) drawn as a volume —
// maximum-intensity projection, attenuated MIP, average or iso-surface — turned with the left
// mouse button, zoomed with the wheel, in the main view's colormap and limits and with the
// voxels' true aspect. CUDA draws it when the processing dock uses the GPU (the frame goes into
// the view's texture through CUDA–OpenGL interop, no host copy); otherwise OpenGL's own
// ray-marcher does (render/gl_volume_sink.h). Stacks larger than the view's budget are drawn
// from a binned copy, which the panel says.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QWidget>
#include <memory>

#include "compute/pipeline.h"
#include "io/stack.h"
#include "render/display_settings.h"
#include "render/gl_volume_sink.h"
#include "render/slice_view.h"
#include "ui/live/timing_panel.h"
#include "ui/volume/volume_source.h"

namespace stacklens::render {
class CudaTextureSink;
}

namespace stacklens::ui {

class VolumeWorker;

class VolumePanel : public QWidget {
  Q_OBJECT
 public:
  explicit VolumePanel(QWidget* parent = nullptr);
  ~VolumePanel() override;

  // The stack to draw (loaded now when the panel is shown, else when it is next shown); gpu:
  // draw with CUDA when a device is usable.
  void setStack(std::shared_ptr<const io::StackReader> reader, bool gpu);
  void setPipeline(const compute::Pipeline& pipeline) { pipeline_ = pipeline; }
  void setDisplay(const render::DisplaySettings& display);
  // Scripted use (tests, benchmarks) of what the controls and the mouse do.
  void setProcessed(bool processed);
  void setMode(compute::VolumeMode mode);
  void turn(double tiltDegrees, double turnDegrees);
  void resetView();
  void compareWithCpu();  // one frame on the GPU and on the CPU, to the timing panel
  // Frames of this size whatever the view's (benchmarks, movies); empty: the view's size, at
  // most 1024 (CUDA) or 512 (OpenGL) a side.
  void setOutputSize(QSize size);

  const compute::VolumeRenderParams& params() const { return params_; }
  const LoadedVolume* volume() const { return volume_.get(); }
  std::shared_ptr<const LoadedVolume> sharedVolume() const { return volume_; }
  render::SliceView* view() const { return view_; }
  QString rendererName() const;  // "CUDA", "OpenGL", or "" before a volume is loaded
  QString status() const { return status_->text(); }
  double lastFrameMs() const { return lastFrameMs_; }

 signals:
  void volumeLoaded();
  void frameShown();  // a frame with the current camera reached the screen
  void operationTimed(const TimingRow& row);
  void failed(const QString& why);

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  // The constructor's steps.
  QWidget* makeView();
  void makeControls();
  void layOut(QWidget* viewContainer);
  void startWorker();
  void connectControls();
  void connectView();

  void load();
  void requestFrame();
  void onLoaded(std::shared_ptr<const LoadedVolume> volume, const QString& gpuNote);
  void onRendered(compute::Image frame, double ms, const compute::VolumeRenderParams& p);
  void onFramePresented();
  void updateStatus();
  QSize outputSize() const;

  render::SliceView* view_ = nullptr;
  QComboBox* source_ = nullptr;
  QComboBox* mode_ = nullptr;
  QDoubleSpinBox* attenuation_ = nullptr;
  QDoubleSpinBox* isoLevel_ = nullptr;
  QComboBox* quality_ = nullptr;
  QPushButton* reset_ = nullptr;  // the camera: back to the start, seen from the side, the top
  QPushButton* side_ = nullptr;
  QPushButton* top_ = nullptr;
  QPushButton* compare_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;

  std::unique_ptr<VolumeWorker> worker_;
  render::GlVolumeSink glSink_;
  std::unique_ptr<render::CudaTextureSink> cudaSink_;
  bool download_ = false;  // CUDA frames through the host (the interop failed here)
  std::shared_ptr<const io::StackReader> reader_;
  compute::Pipeline pipeline_;
  bool wantGpu_ = false, stale_ = false;
  std::shared_ptr<const LoadedVolume> volume_;
  compute::VolumeRenderParams params_;
  bool framePending_ = false;    // a frame with params_ is on its way to the screen
  bool shownIsCurrent_ = false;  // the GPU frame last given to the view is of params_
  double lastFrameMs_ = 0;
  QSize fixedSize_;
  QString note_;
};

}  // namespace stacklens::ui
