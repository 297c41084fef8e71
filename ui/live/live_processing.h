// Live processing in a main window: the processing, timing and sources docks, the worker, and
// what the view shows (raw, processed, side by side, blink). A viewer tool: it follows the stack,
// the slices requested and the raw slices shown.
#pragma once

#include <QDockWidget>
#include <QFuture>
#include <QMainWindow>
#include <QPointF>
#include <QPointer>
#include <QTimer>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "render/slice_view.h"
#include "render/texture_sink.h"
#include "ui/frame/viewer_tool.h"
#include "ui/live/processing_dock.h"
#include "ui/live/processing_worker.h"
#include "ui/live/sources_panel.h"
#include "ui/live/timing_panel.h"

namespace stacklens::ui {

class LiveProcessing : public QObject, public ViewerTool {
  Q_OBJECT
 public:
  // Adds its docks to window; processed slices are drawn into view (the window's slice view).
  LiveProcessing(QMainWindow* window, render::SliceView* view);
  ~LiveProcessing() override;

  // As a viewer tool: the worker shares the window's store of the stack's raw slices; processed
  // pixels go back on top of each raw slice shown; holdSlice is holdRawSlice.
  void stackOpened(const OpenedStackView& stack) override { setStack(stack.reader, stack.slices); }
  bool holdSlice(const ShownSlice& slice) override {
    return holdRawSlice(slice.z, slice.data, slice.width, slice.height);
  }
  void sliceShown(const ShownSlice& slice) override {
    if (slice.data) rawSliceShown(slice.z);  // not for planes drawn from display levels
  }

  // A stack was opened, the slider asked for slice z, and the raw slice z is now on the view
  // (processed pixels are put back on top when they are shown). slices: the window's store of
  // the stack's raw slices, which the worker shares (null: the worker keeps its own).
  void setStack(std::shared_ptr<const io::StackReader> reader,
                std::shared_ptr<compute::SliceStore> slices = {});
  void sliceRequested(int z) override;
  void rawSliceShown(int z);
  // The window is about to draw raw slice z. In the Processed view, while results arrive within
  // kRawHoldMs of the request, the processed slice replaces the previous one directly: returns
  // true, and the raw slice is drawn only if its result is late (or fails). Otherwise false: the
  // window draws it now.
  bool holdRawSlice(int z, render::SliceData raw, int width, int height);
  static constexpr int kRawHoldMs = 100;
  // The hold in ms (default kRawHoldMs): tests lengthen it, so that the latencies of a loaded
  // machine still count as quick.
  void setRawHoldMs(int ms);

  // Some stage is enabled.
  bool active() const;
  // The processing dock runs on a usable GPU (the jobs of the dialogs follow its choice).
  bool gpuChosen() const;
  // For --scrub-benchmark and scripts: preset name, backend "cpu" | "cuda" | "compare",
  // iterations (> 0 overrides the preset), deconvolution "2d" | "3d" | "" (preset's choice),
  // PSF file ("" for the Gaussian). Returns "" or the reason it cannot be done.
  QString configure(const QString& preset, const QString& backend, int iterations,
                    const QString& deconvolution, const QString& psfPath);

  // A new slice view and the widget that holds it (the view itself when it is a widget, else a
  // window container), so the same code serves widget- and window-based views.
  static render::SliceView* createView(QWidget* parent, QWidget** holder);

  ProcessingDock* dock() const { return dock_; }
  TimingPanel* timingPanel() const { return timings_; }
  SourcesPanel* sourcesPanel() const { return sources_; }
  ProcessingWorker* worker() const { return worker_; }
  render::SliceView* processedView() const { return processedView_; }
  int blinkIntervalMs() const { return blink_.interval(); }
  ProcessingResultPtr lastResult() const { return last_; }
  // Backends are made off the GUI thread (making a CUDA context blocks for longer than a frame);
  // true while one is being made (the choice applies when it is ready).
  bool backendsPending() const { return backendsPending_; }
  // Whether processed GPU results go straight into the view's texture (CUDA–GL interop on an
  // NVIDIA OpenGL context) rather than through host memory.
  bool textureInterop() const { return worker_->textureInterop(); }
  // How processed slices reach the screen: "interop" (device to texture), "download" (device to
  // host, then a texture upload), "host" (a CPU result uploaded), "" before any choice.
  QString displayPath() const;

  // What the scrub benchmark reports about the first processed slice: when the backend was
  // chosen, when it was ready, and the first result presented after that (steadyNowNs clock).
  struct FirstResult {
    int64_t chosenNs = 0, readyNs = 0, receivedNs = 0, presentedNs = 0;
    ProcessingResultPtr result;
    render::FrameTiming frame;
  };
  const FirstResult& firstResult() const { return first_; }
  int64_t lastReceivedNs() const { return receivedNs_; }
 signals:
  // The processed pixels of slice z (e.g. for the window's readout).
  void processedSliceReady(int z, std::shared_ptr<const std::vector<float>> pixels);
  // A frame showing processed slice z was presented (the view's frameSwapped after it was set).
  void processedPresented(int z);
  // ViewMode::Difference: the difference image of slice z is in processedView().
  void differenceShown(int z);
  // The backends for the current choice are in place (after backendsPending()).
  void backendsReady();
  // A source was clicked in the sources table: centre the view on this pixel.
  void centreOn(QPointF pixel);

 private:
  void applyBackends();
  void installBackends();
  bool viewCanInterop();
  void pipelineEdited();
  void resultArrived(const ProcessingResultPtr& result);
  void updatePanels();
  void present(const ProcessingResultPtr& result);
  // Shows the processed result (host pixels, or the device image through interop) or the raw
  // slice on view.
  void showSwipe(const render::SliceData& processed);
  bool swipeBackends(const ProcessingResultPtr& result);
  void showDifference(const ProcessingResultPtr& result, const render::SliceData& processed);
  void showOn(render::SliceView* view, const ProcessingResultPtr& result, bool processed,
              bool announce);
  void viewModeChanged();

  QMainWindow* window_;
  render::SliceView* view_;
  render::SliceView* processedView_;
  QDockWidget* processedDock_;
  ProcessingDock* dock_;
  TimingPanel* timings_;
  SourcesPanel* sources_;
  ProcessingWorker* worker_;
  QTimer blink_, panelTimer_;
  bool blinkShowsProcessed_ = false;

  std::shared_ptr<const io::StackReader> reader_;
  std::shared_ptr<compute::Backend> cpu_, cpuStandIn_, cuda_;
  bool backendsPending_ = false;
  quint64 backendTicket_ = 0;
  QFuture<void> backendFuture_;
  std::optional<bool> interopChecked_;  // the view's GL vendor was asked
  struct HeldRaw {
    int z = -1;
    render::SliceData data;
    int width = 0, height = 0;
  } heldRaw_;
  QTimer rawHold_;
  void showHeldRaw();
  void updateDisplayPath();
  QString shownPath_, shownVendor_;  // what the timing panel says now
  int64_t requestNs_ = 0, receivedNs_ = 0;
  double lastLatencyMs_ = -1;  // request to result of the last slice, for holdRawSlice
  FirstResult first_;
  // One CUDA texture sink per view that showed a device result (the view keeps a raw pointer).
  std::vector<std::pair<QPointer<render::SliceView>, std::unique_ptr<render::TextureSink>>> sinks_;
  int currentZ_ = -1;
  ProcessingResultPtr last_;
};

}  // namespace stacklens::ui
