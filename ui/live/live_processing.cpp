// Live processing in a main window: wiring of docks, worker, backends and the processed view.
#include "ui/live/live_processing.h"

#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#if defined(STACKLENS_HAVE_CUDA_TEXTURE_SINK)
#include "render/cuda_texture_sink.h"
#include "render/interop/cuda_texture_writer.h"
#endif

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
  worker_->setDisplayLimits(dock_->viewMode() == ProcessingDock::ViewMode::Split);
  std::string why;
  timings_->setDevices(
      {}, compute::cudaUsable(&why) ? QString() : tr("none (%1)").arg(QString::fromStdString(why)));
  // The CPU backend now (it is quick to make and the worker needs one); others on demand.
  try {
    cpu_ = makeBackgroundBackend([] { return compute::makeCpuBackend(); });
  } catch (const std::exception& e) {
    dock_->showError(tr("CPU backend unavailable: %1").arg(e.what()));
  }
  applyBackends();
  worker_->setPipeline(dock_->pipeline());

  connect(dock_, &ProcessingDock::pipelineChanged, this, &LiveProcessing::pipelineEdited);
  connect(dock_, &ProcessingDock::backendChanged, this, [this] {
    applyBackends();
    if (active() && currentZ_ >= 0 && !backendsPending_) worker_->request(currentZ_);
  });
  connect(dock_, &ProcessingDock::viewModeChanged, this, &LiveProcessing::viewModeChanged);
  connect(dock_, &ProcessingDock::cacheBudgetChanged, worker_, &ProcessingWorker::setCacheBudget);
  connect(dock_, &ProcessingDock::cancelRequested, worker_, &ProcessingWorker::cancel);
  connect(worker_, &ProcessingWorker::resultReady, this, &LiveProcessing::resultArrived);
  connect(worker_, &ProcessingWorker::processedPixelsReady, this,
          [this](int z, std::shared_ptr<const std::vector<float>> pixels) {
            if (z != currentZ_ || !last_ || last_->z != z) return;
            emit processedSliceReady(z, pixels);
            if (dock_->viewMode() == ProcessingDock::ViewMode::Swipe && !last_->comparison)
              showSwipe(pixels);
            if (dock_->viewMode() == ProcessingDock::ViewMode::Difference)
              showDifference(last_, pixels);
          });
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
  rawHold_.setSingleShot(true);
  rawHold_.setInterval(kRawHoldMs);
  connect(&rawHold_, &QTimer::timeout, this, &LiveProcessing::showHeldRaw);
  connect(worker_, &ProcessingWorker::failed, this, [this] { showHeldRaw(); });
  blink_.setInterval(dock_->blinkIntervalMs());
  connect(dock_, &ProcessingDock::blinkIntervalChanged, this,
          [this](int ms) { blink_.setInterval(ms); });
  // Side by side: the two views pan and zoom together.
  connect(view_, &render::SliceView::viewMoved, processedView_, &render::SliceView::setView);
  connect(processedView_, &render::SliceView::viewMoved, view_, &render::SliceView::setView);
  connect(&blink_, &QTimer::timeout, this, [this] {
    if (!last_ || last_->z != currentZ_) return;
    blinkShowsProcessed_ = !blinkShowsProcessed_;
    showOn(view_, last_, blinkShowsProcessed_, false);
  });
}

LiveProcessing::~LiveProcessing() {
  backendFuture_.waitForFinished();  // its queued hand-over is dropped with this object
  for (auto& [view, sink] : sinks_)
    if (view) view->clearSlice();  // the views must not keep a pointer to a deleted sink
}

bool LiveProcessing::active() const { return worker_->pipeline().anyEnabled(); }

void LiveProcessing::setStack(std::shared_ptr<const io::StackReader> reader,
                              std::shared_ptr<compute::SliceStore> slices) {
  reader_ = std::move(reader);
  last_.reset();
  currentZ_ = -1;
  rawHold_.stop();
  heldRaw_ = {};
  lastLatencyMs_ = -1;
  worker_->setSource(reader_, std::move(slices));
  // A plane drawn in tiles cannot take the device result into one texture: host pixels then.
  if (cuda_ && worker_->primaryBackend() == cuda_) worker_->setTextureInterop(viewCanInterop());
  timings_->clear();
  sources_->clear();
}

bool LiveProcessing::gpuChosen() const {
  return dock_->backendChoice() != ProcessingDock::BackendChoice::Cpu && dock_->gpuAvailable();
}

void LiveProcessing::sliceRequested(int z) {
  currentZ_ = z;
  requestNs_ = render::steadyNowNs();
  // The GPU was chosen before the view had an OpenGL context (e.g. from the command line): ask
  // its vendor now, once.
  if (cuda_ && worker_->primaryBackend() == cuda_ && !interopChecked_ && view_->context()) {
    worker_->setTextureInterop(viewCanInterop());
    updateDisplayPath();
  }
  // While a chosen backend is being made, the slice waits for it (the old backend's job would
  // only delay it); the backend's arrival requests the current slice.
  if (active() && !backendsPending_) worker_->request(z);
}

bool LiveProcessing::holdRawSlice(int z, render::SliceData raw, int width, int height) {
  rawHold_.stop();
  heldRaw_ = {};
  // Only where the raw frame would be covered by the processed one within a blink: drawing it
  // costs a texture upload and a frame per step, and flashes the raw data while scrubbing.
  if (!active() || dock_->viewMode() != ProcessingDock::ViewMode::Processed || !last_ ||
      last_->z == z || lastLatencyMs_ < 0 || lastLatencyMs_ > rawHold_.interval())
    return false;
  heldRaw_ = {z, std::move(raw), width, height};
  rawHold_.start();
  return true;
}

void LiveProcessing::setRawHoldMs(int ms) { rawHold_.setInterval(ms); }

void LiveProcessing::showHeldRaw() {
  rawHold_.stop();
  if (heldRaw_.z >= 0 && heldRaw_.z == currentZ_ && heldRaw_.data)
    view_->setSlice(heldRaw_.data, heldRaw_.width, heldRaw_.height);
  heldRaw_ = {};
}

void LiveProcessing::updateDisplayPath() {
  // Called on every result: the text is made only when the path or the OpenGL changed.
  const QString path = displayPath();
  if (path == shownPath_ && view_->glVendor() == shownVendor_) return;
  shownPath_ = path;
  shownVendor_ = view_->glVendor();
  QString how;
  if (path == "interop")
    how =
        tr("Display: CUDA–OpenGL interop (the result is copied on the GPU into the view's "
           "texture)");
  else if (path == "download")
    how =
        tr("Display: download to host memory, then a texture upload (no CUDA–OpenGL interop "
           "with this OpenGL)");
  else if (path == "host")
    how = tr("Display: host pixels uploaded to the view's texture");
  if (!how.isEmpty() && !view_->glVendor().isEmpty())
    how += tr("; OpenGL: %1, %2").arg(view_->glVendor(), view_->glRenderer());
  timings_->setDisplayPath(how);
}

QString LiveProcessing::displayPath() const {
  if (!worker_->primaryBackend()) return {};
  if (worker_->mode() == ProcessingWorker::Mode::Compare) return "host";
  if (worker_->primaryBackend()->name() != "cuda") return "host";
  return worker_->textureInterop() ? "interop" : "download";
}

void LiveProcessing::rawSliceShown(int z) {
  const auto mode = dock_->viewMode();
  // The window just drew the raw slice; processed pixels of this slice go back on top.
  if (last_ && last_->z == z && active() &&
      (mode == ProcessingDock::ViewMode::Processed ||
       (mode == ProcessingDock::ViewMode::Blink && blinkShowsProcessed_)))
    showOn(view_, last_, true, false);
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
  const bool gpu = dock_->gpuAvailable();
  const bool needCuda = choice != ProcessingDock::BackendChoice::Cpu && gpu && !cuda_;
  const bool needStandIn = choice == ProcessingDock::BackendChoice::Compare && !gpu && !cpuStandIn_;
  const quint64 ticket = ++backendTicket_;
  if (!needCuda && !needStandIn) {
    backendsPending_ = false;
    installBackends();
    emit backendsReady();
    return;
  }
  // Making a backend blocks for longer than a frame (a CUDA context, FFTW, threads): off the
  // GUI thread. The worker keeps the current backends until the new ones are in place.
  backendsPending_ = true;
  if (needCuda && !first_.chosenNs) first_.chosenNs = render::steadyNowNs();
  worker_->cancel();  // the old backend's job would delay the first result of the new one
  backendFuture_.waitForFinished();  // at most one maker at a time
  backendFuture_ = QtConcurrent::run([this, ticket, needCuda, needStandIn] {
    std::shared_ptr<compute::Backend> cuda, standIn;
    QString error;
    try {
      if (needCuda) cuda = makeBackgroundBackend([] { return compute::makeCudaBackend(); });
      if (needStandIn) standIn = makeBackgroundBackend([] { return compute::makeCpuBackend(1); });
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, ticket, cuda, standIn, error] {
          if (cuda && !cuda_) cuda_ = cuda;
          if (standIn && !cpuStandIn_) cpuStandIn_ = standIn;
          if (ticket != backendTicket_) return;  // a newer choice is on its way
          backendsPending_ = false;
          if (cuda && !first_.readyNs) first_.readyNs = render::steadyNowNs();
          if (!error.isEmpty())
            dock_->showError(tr("Backend unavailable, using the CPU: %1").arg(error));
          installBackends();
          emit backendsReady();
          if (active() && currentZ_ >= 0) worker_->request(currentZ_);
        },
        Qt::QueuedConnection);
  });
}

void LiveProcessing::installBackends() {
  const auto choice = dock_->backendChoice();
  if (choice == ProcessingDock::BackendChoice::Gpu && cuda_) {
    worker_->setBackends(cuda_);
    worker_->setMode(ProcessingWorker::Mode::Single);
    worker_->setTextureInterop(viewCanInterop());
    updateDisplayPath();
    return;
  }
  // Compare: the GPU, or without one a one-thread CPU backend standing in for it.
  std::shared_ptr<compute::Backend> second = cuda_ ? cuda_ : cpuStandIn_;
  if (choice == ProcessingDock::BackendChoice::Compare && second) {
    worker_->setBackends(cpu_, second);
    worker_->setMode(ProcessingWorker::Mode::Compare);
    updateDisplayPath();
    return;
  }
  worker_->setBackends(cpu_);
  worker_->setMode(ProcessingWorker::Mode::Single);
  updateDisplayPath();
}

bool LiveProcessing::viewCanInterop() {
#if defined(STACKLENS_HAVE_CUDA_TEXTURE_SINK)
  if (reader_ && !view_->acceptsExternalSlice(static_cast<int>(reader_->info().x),
                                              static_cast<int>(reader_->info().y)))
    return false;  // the plane is drawn in tiles
  if (interopChecked_) return *interopChecked_;
  std::string why;
  if (!render::cudaGlInteropUsable(&why)) {
    interopChecked_ = false;
    return false;
  }
  QOpenGLContext* context = view_->context();
  if (!context) return false;  // not shown yet: host pixels until the next choice
  view_->makeCurrent();
  const auto* vendor = reinterpret_cast<const char*>(context->functions()->glGetString(GL_VENDOR));
  // CUDA can register textures of NVIDIA's OpenGL only (not Mesa's llvmpipe or another GPU's).
  interopChecked_ = vendor && std::string(vendor).find("NVIDIA") != std::string::npos;
  view_->doneCurrent();
  return *interopChecked_;
#else
  return false;
#endif
}

void LiveProcessing::pipelineEdited() {
  const bool wasActive = active();
  worker_->setPipeline(dock_->pipeline());
  if (active()) {
    if (currentZ_ >= 0 && !backendsPending_) worker_->request(currentZ_);
  } else {
    worker_->cancel();
    showHeldRaw();
    // Back to the raw slice when processing was just switched off.
    if (wasActive && last_ && last_->z == currentZ_) showOn(view_, last_, false, false);
    last_.reset();
    blink_.stop();
    timings_->clear();
    sources_->clear();
  }
}

void LiveProcessing::resultArrived(const ProcessingResultPtr& result) {
  if (!result || result->z != currentZ_) return;
  receivedNs_ = render::steadyNowNs();
  lastLatencyMs_ = (receivedNs_ - requestNs_) / 1e6;
  if (heldRaw_.z == result->z) {
    rawHold_.stop();
    heldRaw_ = {};
  }
  last_ = result;
  updateDisplayPath();
  if (first_.readyNs && !first_.result && result->result.backend == "cuda") {
    first_.result = result;
    first_.receivedNs = receivedNs_;
    connect(
        view_, &render::SliceView::framePresented, this,
        [this] {
          first_.presentedNs = render::steadyNowNs();
          first_.frame = view_->lastFrame();
        },
        Qt::SingleShotConnection);
  }
  present(result);
  // The worker made the host pixels (no copy here); on the interop path they follow later.
  if (result->pixels) emit processedSliceReady(result->z, result->pixels);
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
      showOn(view_, result, true, true);
      break;
    case ProcessingDock::ViewMode::Split:
      // Its own scale where the worker measured one (a result computed before Split was chosen
      // has none: the main view's limits).
      if (result->hasDisplayLimits)
        processedView_->setLimits(result->displayLow, result->displayHigh);
      else
        processedView_->setLimits(view_->display().limits.low, view_->display().limits.high);
      showOn(processedView_, result, true, true);
      break;
    case ProcessingDock::ViewMode::Blink:
      blinkShowsProcessed_ = true;
      showOn(view_, result, true, true);
      if (!blink_.isActive()) blink_.start();
      break;
    case ProcessingDock::ViewMode::Swipe:
      if (!swipeBackends(result)) {
        showOn(view_, result, false, false);
        if (result->pixels) showSwipe(result->pixels);  // else processedPixelsReady brings them
      }
      emit processedPresented(result->z);
      break;
    case ProcessingDock::ViewMode::Difference:
      showOn(view_, result, true, true);
      showDifference(result, result->pixels);
      break;
  }
}

// Compare mode: the CPU's result left of the divider, the GPU's right of it.
bool LiveProcessing::swipeBackends(const ProcessingResultPtr& result) {
  if (!result->comparison) return false;
  const compute::PipelineResult* cpu = &result->comparison->a;
  const compute::PipelineResult* gpu = &result->comparison->b;
  if (cpu->backend == "cuda" || gpu->backend == "cpu") std::swap(cpu, gpu);
  if (!cpu->image.onHost() || !gpu->image.onHost()) return false;
  auto pixels = [](const compute::Image& image) {
    return std::make_shared<const std::vector<float>>(image.data(),
                                                      image.data() + image.shape().sliceCount());
  };
  view_->setSlice(pixels(cpu->image), int(cpu->image.shape().x), int(cpu->image.shape().y));
  showSwipe(pixels(gpu->image));
  return true;
}

void LiveProcessing::showSwipe(const render::SliceData& processed) {
  const double middle = 0.5 * (view_->sliceWidth() - 1);
  view_->setSwipe(processed, view_->divider().value_or(middle));
}

// The difference is made on a pool thread (a large slice takes a while) and shown beside the
// main view with limits symmetric about 0, if the slice is still the one shown.
void LiveProcessing::showDifference(const ProcessingResultPtr& result,
                                    const render::SliceData& processed) {
  compute::Image a, b;
  QString title;
  if (result->comparison && result->comparison->a.image.onHost() &&
      result->comparison->b.image.onHost()) {
    a = result->comparison->a.image, b = result->comparison->b.image;
    title = tr("Difference: %1 − %2")
                .arg(QString::fromStdString(result->comparison->a.backend).toUpper())
                .arg(QString::fromStdString(result->comparison->b.backend).toUpper());
  } else if (processed && result->raw.onHost()) {
    a = compute::Image::host(result->raw.shape());
    std::copy(processed->begin(), processed->end(), a.data());
    b = result->raw;
    title = tr("Difference: processed − raw");
  } else {
    return;  // the processed pixels are still on their way (processedPixelsReady)
  }
  processedDock_->setWindowTitle(title);
  processedDock_->show();
  const int z = result->z;
  QPointer<LiveProcessing> self(this);
  (void)QtConcurrent::run([a, b] {
    auto d = std::make_shared<std::vector<float>>(size_t(a.shape().sliceCount()));
    float most = 0;
    for (size_t i = 0; i < d->size(); ++i) {
      (*d)[i] = a.data()[i] - b.data()[i];
      if (std::isfinite((*d)[i])) most = std::max(most, std::fabs((*d)[i]));
    }
    return std::make_pair(render::SliceData(std::move(d)), most);
  })
      .then(this, [self, z, width = int(a.shape().x),
                   height = int(a.shape().y)](std::pair<render::SliceData, float> made) {
        if (!self || self->currentZ_ != z ||
            self->dock_->viewMode() != ProcessingDock::ViewMode::Difference)
          return;
        const float bound = made.second > 0 ? made.second : 1e-12f;
        self->processedView_->setLimits(-bound, bound);
        self->processedView_->setSlice(made.first, width, height);
        emit self->differenceShown(z);
      });
}

void LiveProcessing::showOn(render::SliceView* view, const ProcessingResultPtr& result,
                            bool processed, bool announce) {
  if (!result) return;
  const compute::Image& image = processed ? result->result.image : result->raw;
  if (image.empty()) return;
  const int z = result->z;
  if (announce)
    connect(
        view, &render::SliceView::framePresented, this, [this, z] { emit processedPresented(z); },
        Qt::SingleShotConnection);
  const int w = static_cast<int>(image.shape().x), h = static_cast<int>(image.shape().y);
  if (!processed) {
    view->setSlice(image.data(), w, h);  // the raw slice: one copy, as the window's own slices
    return;
  }
  if (result->pixels) {
    view->setSlice(result->pixels, w, h);  // shared with the readout: no copy
    return;
  }
#if defined(STACKLENS_HAVE_CUDA_TEXTURE_SINK)
  if (!image.onHost() && view->acceptsExternalSlice(w, h)) {
    // Straight from the device into the view's texture at its next paint.
    render::CudaTextureSink* sink = nullptr;
    for (auto& [v, s] : sinks_)
      if (v == view) sink = static_cast<render::CudaTextureSink*>(s.get());
    if (!sink) {
      auto made = std::make_unique<render::CudaTextureSink>();
      sink = made.get();
      sinks_.emplace_back(view, std::move(made));
    }
    sink->setSlice(image, 0);
    view->setExternalSlice(sink, w, h);
    connect(
        view, &render::SliceView::framePresented, this,
        [this, sink] {
          if (sink->lastError().empty()) return;
          // The texture stayed empty: host pixels from now on.
          dock_->showError(tr("CUDA–OpenGL interop failed, showing results through host "
                              "memory: %1")
                               .arg(QString::fromStdString(sink->lastError())));
          interopChecked_ = false;
          worker_->setTextureInterop(false);
          updateDisplayPath();
          if (active() && currentZ_ >= 0) worker_->request(currentZ_);
        },
        Qt::SingleShotConnection);
  }
#endif
}

void LiveProcessing::viewModeChanged() {
  showHeldRaw();
  const auto mode = dock_->viewMode();
  worker_->setDisplayLimits(mode == ProcessingDock::ViewMode::Split);
  processedDock_->setVisible(mode == ProcessingDock::ViewMode::Split ||
                             mode == ProcessingDock::ViewMode::Difference);
  processedDock_->setWindowTitle(tr("Processed (side by side)"));
  if (mode != ProcessingDock::ViewMode::Swipe) view_->clearSwipe();
  // Side by side starts where the main view is, and then follows it (and it the main view).
  if (mode == ProcessingDock::ViewMode::Split || mode == ProcessingDock::ViewMode::Difference)
    processedView_->setView(view_->zoom(), view_->centre());
  if (mode != ProcessingDock::ViewMode::Blink) blink_.stop();
  if (!last_ || last_->z != currentZ_) return;
  if (mode == ProcessingDock::ViewMode::Raw || mode == ProcessingDock::ViewMode::Split ||
      mode == ProcessingDock::ViewMode::Swipe)
    showOn(view_, last_, false, false);
  present(last_);
}

}  // namespace stacklens::ui
