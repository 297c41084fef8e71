// Live processing in a main window: the processing, timing and sources docks, the worker, and
// what the view shows (raw, processed, side by side, blink). The window forwards three events.
#pragma once

#include <QDockWidget>
#include <QMainWindow>
#include <QPointF>
#include <QTimer>
#include <memory>

#include "render/slice_view.h"
#include "ui/processing_dock.h"
#include "ui/processing_worker.h"
#include "ui/sources_panel.h"
#include "ui/timing_panel.h"

namespace stacklens::ui {

class LiveProcessing : public QObject {
  Q_OBJECT
 public:
  // Adds its docks to window; processed slices are drawn into view (the window's slice view).
  LiveProcessing(QMainWindow* window, render::SliceView* view);
  ~LiveProcessing() override;

  // What the window forwards: a stack was opened, the slider asked for slice z, and the raw
  // slice z is now on the view (processed pixels are put back on top when they are shown).
  void setStack(std::shared_ptr<const io::StackReader> reader);
  void sliceRequested(int z);
  void rawSliceShown(int z);

  // Some stage is enabled.
  bool active() const;
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
  ProcessingResultPtr lastResult() const { return last_; }

 signals:
  // The processed pixels of slice z (e.g. for the window's readout).
  void processedSliceReady(int z, std::shared_ptr<const std::vector<float>> pixels);
  // A frame showing processed slice z was presented (the view's frameSwapped after it was set).
  void processedPresented(int z);
  // A source was clicked in the sources table: centre the view on this pixel.
  void centreOn(QPointF pixel);

 private:
  void applyBackends();
  void pipelineEdited();
  void resultArrived(const ProcessingResultPtr& result);
  void updatePanels();
  void present(const ProcessingResultPtr& result);
  void showOn(render::SliceView* view, const compute::Image& image, int z, bool announce);
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
  int currentZ_ = -1;
  ProcessingResultPtr last_;
};

}  // namespace stacklens::ui
