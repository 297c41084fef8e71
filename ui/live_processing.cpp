// Live processing in a main window: wiring of docks, worker, backends and the processed view.
#include "ui/live_processing.h"

#include <QVBoxLayout>
#include <type_traits>

namespace stacklens::ui {
namespace {

template <class View>
View* newView(QWidget* parent, QWidget** holder) {
  if constexpr (std::is_base_of_v<QWidget, View>) {
    auto* view = new View(parent);
    *holder = view;
    return view;
  } else {
    auto* view = new View();
    *holder = QWidget::createWindowContainer(view, parent);
    return view;
  }
}

}  // namespace

render::SliceView* LiveProcessing::createView(QWidget* parent, QWidget** holder) {
  return newView<render::SliceView>(parent, holder);
}

LiveProcessing::LiveProcessing(QMainWindow* window, render::SliceView* view)
    : QObject(window), window_(window), view_(view) {
  dock_ = new ProcessingDock(window);
  window->addDockWidget(Qt::RightDockWidgetArea, dock_);

  timings_ = new TimingPanel(window);
  auto* timingDock = new QDockWidget(tr("Timings: CPU vs GPU"), window);
  timingDock->setObjectName("timingDock");
  timingDock->setWidget(timings_);
  window->addDockWidget(Qt::BottomDockWidgetArea, timingDock);

  sources_ = new SourcesPanel(window);
  auto* sourcesDock = new QDockWidget(tr("Sources"), window);
  sourcesDock->setObjectName("sourcesDock");
  sourcesDock->setWidget(sources_);
  window->addDockWidget(Qt::BottomDockWidgetArea, sourcesDock);
  window->tabifyDockWidget(timingDock, sourcesDock);
  timingDock->raise();

  processedDock_ = new QDockWidget(tr("Processed (side by side)"), window);
  processedDock_->setObjectName("processedViewDock");
  QWidget* holder = nullptr;
  processedView_ = createView(processedDock_, &holder);
  holder->setMinimumSize(240, 240);
  processedDock_->setWidget(holder);
  window->addDockWidget(Qt::RightDockWidgetArea, processedDock_);
  processedDock_->hide();

  worker_ = new ProcessingWorker(this);
  worker_->setCacheBudget(dock_->cacheBudgetBytes());
  std::string why;
  timings_->setDevices(
      {}, compute::cudaUsable(&why) ? QString() : tr("none (%1)").arg(QString::fromStdString(why)));
  applyBackends();
  worker_->setPipeline(dock_->pipeline());

  connect(dock_, &ProcessingDock::pipelineChanged, this, &LiveProcessing::pipelineEdited);
  connect(dock_, &ProcessingDock::backendChanged, this, [this] {
    applyBackends();
    if (active() && currentZ_ >= 0) worker_->request(currentZ_);
  });
  connect(dock_, &ProcessingDock::viewModeChanged, this, &LiveProcessing::viewModeChanged);
  connect(dock_, &ProcessingDock::cacheBudgetChanged, worker_, &ProcessingWorker::setCacheBudget);
  connect(dock_, &ProcessingDock::cancelRequested, worker_, &ProcessingWorker::cancel);
  connect(worker_, &ProcessingWorker::resultReady, this, &LiveProcessing::resultArrived);
  connect(worker_, &ProcessingWorker::benchmarkReady, timings_, &TimingPanel::showResult);
  connect(worker_, &ProcessingWorker::progress, dock_,
          [this](quint64, double fraction) { dock_->showProgress(fraction); });
  connect(worker_, &ProcessingWorker::busyChanged, dock_, [this](bool busy) {
    if (!busy) dock_->showIdle();
  });
  connect(worker_, &ProcessingWorker::failed, dock_,
          [this](quint64, int z, const QString& message) {
            dock_->showError(tr("Slice %1: %2").arg(z).arg(message));
          });
  connect(timings_, &TimingPanel::benchmarkRequested, this, [this](int repeats) {
    if (currentZ_ >= 0) worker_->benchmark(currentZ_, repeats);
  });
  connect(sources_, &SourcesPanel::sourceActivated, this, &LiveProcessing::centreOn);

  panelTimer_.setSingleShot(true);
  panelTimer_.setInterval(100);
  connect(&panelTimer_, &QTimer::timeout, this, &LiveProcessing::updatePanels);
  blink_.setInterval(500);
  connect(&blink_, &QTimer::timeout, this, [this] {
    if (!last_ || last_->z != currentZ_) return;
    blinkShowsProcessed_ = !blinkShowsProcessed_;
    showOn(view_, blinkShowsProcessed_ ? last_->result.image : last_->raw, currentZ_, false);
  });
}

LiveProcessing::~LiveProcessing() = default;

bool LiveProcessing::active() const { return worker_->pipeline().anyEnabled(); }

void LiveProcessing::setStack(std::shared_ptr<const io::StackReader> reader) {
  reader_ = std::move(reader);
  last_.reset();
  currentZ_ = -1;
  worker_->setSource(reader_);
  timings_->clear();
  sources_->clear();
}

void LiveProcessing::sliceRequested(int z) {
  currentZ_ = z;
  if (active()) worker_->request(z);
}

void LiveProcessing::rawSliceShown(int z) {
  const auto mode = dock_->viewMode();
  // The window just drew the raw slice; processed pixels of this slice go back on top.
  if (last_ && last_->z == z && active() &&
      (mode == ProcessingDock::ViewMode::Processed ||
       (mode == ProcessingDock::ViewMode::Blink && blinkShowsProcessed_)))
    showOn(view_, last_->result.image, z, false);
}

QString LiveProcessing::configure(const QString& preset, const QString& backend, int iterations,
                                  const QString& deconvolution, const QString& psfPath) {
  if (!psfPath.isEmpty()) {
    QString error;
    if (!dock_->loadPsf(psfPath, &error)) return error;
  }
  compute::Pipeline p = dock_->pipeline();
  if (!preset.isEmpty()) {
    try {
      p = compute::preset(preset.toStdString(), dock_->pipeline().deconvolution.psf);
    } catch (const std::exception& e) {
      return QString::fromStdString(e.what());
    }
  }
  if (iterations > 0) p.deconvolution.params.iterations = iterations;
  if (deconvolution == "2d" || deconvolution == "3d")
    p.deconvolution.params.threeD = deconvolution == "3d";
  else if (!deconvolution.isEmpty())
    return tr("deconvolution mode must be 2d or 3d, got '%1'").arg(deconvolution);
  if (backend == "cuda" || backend == "gpu") {
    if (!dock_->gpuAvailable()) return tr("GPU unavailable: %1").arg(dock_->gpuUnavailableReason());
    dock_->setBackendChoice(ProcessingDock::BackendChoice::Gpu);
  } else if (backend == "compare") {
    dock_->setBackendChoice(ProcessingDock::BackendChoice::Compare);
  } else if (backend == "cpu" || backend.isEmpty()) {
    dock_->setBackendChoice(ProcessingDock::BackendChoice::Cpu);
  } else {
    return tr("backend must be cpu, cuda or compare, got '%1'").arg(backend);
  }
  try {
    p.validate();
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  dock_->setPipeline(p);
  dock_->setViewMode(ProcessingDock::ViewMode::Processed);
  return {};
}

void LiveProcessing::applyBackends() {
  const auto choice = dock_->backendChoice();
  try {
    if (!cpu_) cpu_ = makeBackgroundBackend([] { return compute::makeCpuBackend(); });
    if (choice == ProcessingDock::BackendChoice::Cpu) {
      worker_->setBackends(cpu_);
      worker_->setMode(ProcessingWorker::Mode::Single);
      return;
    }
    if (dock_->gpuAvailable() && !cuda_)
      cuda_ = makeBackgroundBackend([] { return compute::makeCudaBackend(); });
    if (choice == ProcessingDock::BackendChoice::Gpu) {
      worker_->setBackends(cuda_);
      worker_->setMode(ProcessingWorker::Mode::Single);
      return;
    }
    // Compare: the GPU, or without one a one-thread CPU backend standing in for it.
    std::shared_ptr<compute::Backend> second = cuda_;
    if (!second) {
      if (!cpuStandIn_)
        cpuStandIn_ = makeBackgroundBackend([] { return compute::makeCpuBackend(1); });
      second = cpuStandIn_;
    }
    worker_->setBackends(cpu_, second);
    worker_->setMode(ProcessingWorker::Mode::Compare);
  } catch (const std::exception& e) {
    dock_->showError(tr("Backend unavailable, using the CPU: %1").arg(e.what()));
    worker_->setBackends(cpu_);
    worker_->setMode(ProcessingWorker::Mode::Single);
  }
}

void LiveProcessing::pipelineEdited() {
  const bool wasActive = active();
  worker_->setPipeline(dock_->pipeline());
  if (active()) {
    if (currentZ_ >= 0) worker_->request(currentZ_);
  } else {
    worker_->cancel();
    // Back to the raw slice when processing was just switched off.
    if (wasActive && last_ && last_->z == currentZ_) showOn(view_, last_->raw, currentZ_, false);
    last_.reset();
    blink_.stop();
    timings_->clear();
    sources_->clear();
  }
}

void LiveProcessing::resultArrived(const ProcessingResultPtr& result) {
  if (!result || result->z != currentZ_) return;
  last_ = result;
  present(result);
  const auto& image = result->result.image;
  emit processedSliceReady(result->z, std::make_shared<const std::vector<float>>(
                                          image.data(), image.data() + image.shape().count()));
  // The panels (tables, chart) follow once the slider rests: redrawing them on every frame of a
  // scrub costs the GUI thread tens of ms under software rendering.
  panelTimer_.start();
}

void LiveProcessing::updatePanels() {
  if (!last_ || last_->z != currentZ_) return;
  const ProcessingResultPtr result = last_;
  timings_->showResult(result);
  const auto& r = result->result;
  const io::Wcs* wcs = reader_ ? reader_->wcs() : nullptr;
  if (r.segmentation) {
    sources_->showSources(r.segmentation->sources, result->z, wcs);
    sources_->showBackground(r.segmentation->background, result->z);
    dock_->showBackground(r.segmentation->background, result->z);
  } else {
    sources_->clear();
  }
  if (r.statistics) {
    sources_->showBackground(*r.statistics, result->z);
    dock_->showBackground(*r.statistics, result->z);
  }
}

void LiveProcessing::present(const ProcessingResultPtr& result) {
  switch (dock_->viewMode()) {
    case ProcessingDock::ViewMode::Raw:
      // Nothing to draw; the result still counts as shown (timings, sources).
      emit processedPresented(result->z);
      break;
    case ProcessingDock::ViewMode::Processed:
      showOn(view_, result->result.image, result->z, true);
      break;
    case ProcessingDock::ViewMode::Split:
      processedView_->setLimits(result->displayLow, result->displayHigh);
      showOn(processedView_, result->result.image, result->z, true);
      break;
    case ProcessingDock::ViewMode::Blink:
      blinkShowsProcessed_ = true;
      showOn(view_, result->result.image, result->z, true);
      if (!blink_.isActive()) blink_.start();
      break;
  }
}

void LiveProcessing::showOn(render::SliceView* view, const compute::Image& image, int z,
                            bool announce) {
  if (image.empty()) return;
  if (announce)
    connect(
        view, &render::SliceView::framePresented, this, [this, z] { emit processedPresented(z); },
        Qt::SingleShotConnection);
  view->setSlice(image.data(), static_cast<int>(image.shape().x),
                 static_cast<int>(image.shape().y));
}

void LiveProcessing::viewModeChanged() {
  const auto mode = dock_->viewMode();
  processedDock_->setVisible(mode == ProcessingDock::ViewMode::Split);
  if (mode != ProcessingDock::ViewMode::Blink) blink_.stop();
  if (!last_ || last_->z != currentZ_) return;
  if (mode == ProcessingDock::ViewMode::Raw || mode == ProcessingDock::ViewMode::Split)
    showOn(view_, last_->raw, currentZ_, false);
  present(last_);
}

}  // namespace stacklens::ui
