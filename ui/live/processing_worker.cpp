// The processing worker: one job at a time on a pool thread, generation tokens, LRU result cache.
#include "ui/live/processing_worker.h"

#include <QMetaObject>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <thread>
#include <tuple>
#include <vector>

#include "compute/pipeline_at_slice.h"
#include "compute/pixel_pool.h"
#include "compute/stack_spacing.h"
#include "io/movie_frame.h"
#include "render/frame_timing.h"
#include "ui/frame/thread_priority.h"
#include "ui/stack/slice_fetcher.h"

namespace stacklens::ui {
namespace {

size_t pipelineBytes(const compute::PipelineResult& r) {
  size_t n = r.image.bytes();
  if (r.segmentation) n += r.segmentation->labels.bytes();
  for (const auto& [stage, image] : r.stageImages) n += image.bytes();
  return n;
}

using Pixels = std::shared_ptr<const std::vector<float>>;

// Rows of a device result sampled for the display limits: about 65536 values.
int64_t sampleRowStep(const compute::Shape& s) {
  const int64_t rowsWanted = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, s.x));
  return std::max<int64_t>(1, s.y / rowsWanted);
}

// The central 99 % of the finite values, from a strided sample of at most 65536 pixels: computed
// on the worker for every result while scrubbing, so a sample 16 times smaller than the movie's
// keeps it cheap, and showing a result costs the GUI thread nothing.
std::pair<float, float> displayLimits(const compute::Image& image) {
  return io::percentileRange(image.data(), image.shape().count(), 99.0, 65536);
}

}  // namespace

std::shared_ptr<compute::Backend> makeBackgroundBackend(
    const std::function<std::unique_ptr<compute::Backend>()>& make) {
  std::shared_ptr<compute::Backend> backend;
  std::exception_ptr error;
  std::thread maker([&] {
    lowerThreadPriority();
    try {
      backend = make();
    } catch (...) {
      error = std::current_exception();
    }
  });
  maker.join();
  if (error) std::rethrow_exception(error);
  return backend;
}

size_t ProcessingResult::bytes() const {
  // In Compare mode result is comparison->a and shares its buffers.
  size_t own = raw.bytes() + 256;
  // Host pixels count unless they are result.image's own storage (host results).
  if (pixels && (result.image.empty() || pixels->data() != result.image.data()))
    own += pixels->size() * sizeof(float);
  if (comparison) return pipelineBytes(comparison->a) + pipelineBytes(comparison->b) + own;
  return pipelineBytes(result) + own;
}

size_t ProcessingResult::deviceBytes() const {
  size_t n = 0;
  auto add = [&n](const compute::PipelineResult& r) {
    if (!r.image.empty() && !r.image.onHost()) n += r.image.bytes();
  };
  if (comparison) {
    add(comparison->a);
    add(comparison->b);
  } else {
    add(result);
  }
  return n;
}

ProcessingWorker::ProcessingWorker(QObject* parent)
    : QObject(parent), pixelPool_(std::make_shared<compute::PixelPool>()) {
  qRegisterMetaType<ProcessingResultPtr>();
  pool_.setMaxThreadCount(1);
  pixelsDelay_.setSingleShot(true);
  pixelsDelay_.setInterval(30);
  connect(&pixelsDelay_, &QTimer::timeout, this, &ProcessingWorker::startNext);
  pool_.setExpiryTimeout(-1);  // keep the thread: FFT plans and caches stay warm on it
}

ProcessingWorker::~ProcessingWorker() {
  pending_.reset();
  prefetchQueue_.clear();
  if (running_) running_->cancel->store(true);
  pool_.waitForDone();
}

void ProcessingWorker::configurationChanged() {
  ++config_;
  pixelsWanted_.reset();
  cache_.clear();
  prefetchQueue_.clear();
  if (running_) running_->cancel->store(true);
}

void ProcessingWorker::setSource(std::shared_ptr<const io::StackReader> reader,
                                 std::shared_ptr<compute::SliceStore> slices) {
  reader_ = std::move(reader);
  slices_ = std::move(slices);
  if (!slices_ && reader_)
    slices_ = std::make_shared<compute::SliceStore>(rawSliceReaderOf(reader_), kOwnStoreBudget,
                                                    [] { lowerThreadPriority(); });
  dropLive();  // raw slices of another stack
  lastZ_ = -1;
  pending_.reset();
  ++generation_;  // results already queued for the old stack are stale
  configurationChanged();
}

void ProcessingWorker::setBackends(std::shared_ptr<compute::Backend> primary,
                                   std::shared_ptr<compute::Backend> secondary) {
  primary_ = std::move(primary);
  secondary_ = std::move(secondary);
  dropLive();
  if (slices_) slices_->dropUploads();  // made by the old backend
  configurationChanged();
}

void ProcessingWorker::setMode(Mode mode) {
  if (mode == mode_) return;
  mode_ = mode;
  configurationChanged();
}

void ProcessingWorker::setPipeline(const compute::Pipeline& pipeline) {
  const bool same = pipeline.fingerprint() == pipeline_.fingerprint() &&
                    pipeline.anyEnabled() == pipeline_.anyEnabled();
  pipeline_ = pipeline;
  if (!same) configurationChanged();
}

void ProcessingWorker::setCacheBudget(size_t bytes) {
  cache_.setBudget(int64_t(std::min<size_t>(bytes, INT64_MAX)));
}

void ProcessingWorker::setPrefetchRadius(int slices) { prefetchRadius_ = std::max(0, slices); }

void ProcessingWorker::setTextureInterop(bool on) {
  if (on == textureInterop_) return;
  textureInterop_ = on;
  configurationChanged();  // cached device results may lack the host pixels now needed
}

size_t ProcessingWorker::cacheDeviceBytes() const {
  size_t n = 0;
  cache_.forEach(
      [&n](const Key&, const ProcessingResultPtr& result) { n += result->deviceBytes(); });
  return n;
}

void ProcessingWorker::dropLive() { live_.reset(); }

std::shared_ptr<compute::LiveProcessor> ProcessingWorker::liveFor() {
  if (live_ || !reader_ || !primary_ || mode_ != Mode::Single) return live_;
  // Slices read from now on are page-locked for the backend: their uploads are one DMA each.
  slices_->pageLockFor(primary_);
  live_ = std::make_shared<compute::LiveProcessor>(primary_, slices_);
  return live_;
}

void ProcessingWorker::attachPixels(quint64 config, int z, Pixels pixels) {
  // In its place in the order of use: attaching pixels is no use of the result.
  if (const ProcessingResultPtr* held = cache_.peek(Key{config, z})) {
    auto copy = std::make_shared<ProcessingResult>(**held);
    copy->pixels = pixels;
    cache_.replace(Key{config, z}, std::move(copy));
  }
  if (config == config_) emit processedPixelsReady(z, std::move(pixels));
}

bool ProcessingWorker::cached(int z) const { return cache_.contains(Key{config_, z}); }

ProcessingResultPtr ProcessingWorker::findCached(int z) {
  const ProcessingResultPtr* held = cache_.find(Key{config_, z});  // now the most recently used
  return held ? *held : ProcessingResultPtr{};
}

void ProcessingWorker::insertCached(int z, ProcessingResultPtr result) {
  // Not when held already, nor when it alone exceeds the budget (it would evict everything and
  // still not fit).
  cache_.insertIfFits(Key{config_, z}, std::move(result));
}

quint64 ProcessingWorker::request(int z) {
  const quint64 generation = ++generation_;
  direction_ = lastZ_ >= 0 && std::abs(z - lastZ_) == 1 ? z - lastZ_ : 0;
  lastZ_ = z;
  prefetchQueue_.clear();
  pending_.reset();
  pixelsWanted_.reset();
  if (running_ && running_->task.kind == Kind::Pixels) running_->cancel->store(true);
  if (ProcessingResultPtr hit = findCached(z)) {
    if (running_ && running_->task.kind != Kind::Prefetch) running_->cancel->store(true);
    deliverCached(generation, z, hit);
    return generation;
  }
  // The running job already computes this slice (a prefetch, or an earlier request): adopt it.
  if (running_ && running_->config == config_ && running_->task.z == z &&
      running_->task.kind != Kind::Benchmark && running_->task.kind != Kind::Pixels &&
      !running_->cancel->load()) {
    running_->task.kind = Kind::Request;
    running_->task.generation = generation;
    return generation;
  }
  pending_ = Task{Kind::Request, generation, z, 1};
  if (running_)
    running_->cancel->store(true);  // its finish starts the pending request
  else
    startNext();
  return generation;
}

quint64 ProcessingWorker::benchmark(int z, int repeats) {
  const quint64 generation = ++generation_;
  prefetchQueue_.clear();
  pixelsWanted_.reset();
  pending_ = Task{Kind::Benchmark, generation, z, std::max(1, repeats)};
  if (running_)
    running_->cancel->store(true);
  else
    startNext();
  return generation;
}

void ProcessingWorker::cancel() {
  ++generation_;
  pending_.reset();
  prefetchQueue_.clear();
  pixelsWanted_.reset();
  if (running_) running_->cancel->store(true);
}

void ProcessingWorker::deliverCached(quint64 generation, int z, const ProcessingResultPtr& result) {
  auto copy = std::make_shared<ProcessingResult>(*result);  // shares the pixel buffers
  copy->generation = generation;
  copy->z = z;
  copy->fromCache = true;
  QMetaObject::invokeMethod(
      this,
      [this, copy] {
        if (copy->generation != generation_) return;
        emit resultReady(copy);
        schedulePixels(copy);
        if (!running_ && !pending_) {
          schedulePrefetch();
          startNext();
        }
      },
      Qt::QueuedConnection);
}

void ProcessingWorker::schedulePrefetch() {
  prefetchQueue_.clear();
  if (prefetchRadius_ <= 0 || lastZ_ < 0 || !reader_ || !primary_) return;
  const int count = static_cast<int>(reader_->info().z);
  for (int d = 1; d <= prefetchRadius_; ++d)
    for (int n : {lastZ_ + d, lastZ_ - d})
      // While the slider steps through adjacent slices only the ones ahead: the slice behind was
      // just shown, and a prefetch nobody asks for delays the next request by a whole job.
      if (n >= 0 && n < count && !cached(n) && (n - lastZ_) * direction_ >= 0)
        prefetchQueue_.push_back(Task{Kind::Prefetch, 0, n, 1});
}

void ProcessingWorker::startNext() {
  if (running_) return;
  if (pending_) {
    const Task task = *pending_;
    pending_.reset();
    start(task);
    return;
  }
  while (!prefetchQueue_.empty()) {
    const Task task = prefetchQueue_.front();
    prefetchQueue_.pop_front();
    if (!cached(task.z)) {
      start(task);
      return;
    }
  }
  if (pixelsWanted_ && !pixelsDelay_.isActive()) {
    ProcessingResultPtr result = std::move(pixelsWanted_);
    pixelsWanted_.reset();
    startPixels(result);
  }
}

void ProcessingWorker::schedulePixels(const ProcessingResultPtr& result) {
  // Only a device result shown through interop lacks them; the readout wants the shown slice's.
  if (result->pixels || result->result.image.empty() || result->result.image.onHost() ||
      result->z != lastZ_)
    return;
  pixelsWanted_ = result;
  pixelsDelay_.start();  // a scrub's next request comes sooner and drops it
}

// The download for the readout is a task of its own, after the frame and after prefetches: the
// next slider step never waits for it (a new request drops it, or cancels it between its
// download and its copy).
void ProcessingWorker::startPixels(const ProcessingResultPtr& result) {
  const bool wasBusy = running_.has_value();
  running_ = Running{Task{Kind::Pixels, 0, result->z, 1}, config_,
                     std::make_shared<std::atomic<bool>>(false)};
  if (!wasBusy) emit busyChanged(true);
  const auto cancel = running_->cancel;
  const quint64 config = config_;
  pool_.start([this, result, cancel, config, primary = primary_, pixelPool = pixelPool_] {
    Pixels pixels;
    try {
      const compute::Image& image = result->result.image;
      if (!cancel->load()) {
        // Into a recycled vector the backend has page-locked: one DMA, no staging copy.
        auto [copy, host] = pixelPool->image(image.shape(), primary);
        primary->device().downloadInto(image, host);
        pixels = std::move(copy);
      }
    } catch (const std::exception&) {
      // Only the readout misses them; the frame is already shown.
    }
    QMetaObject::invokeMethod(
        this,
        [this, config, z = result->z, pixels, cancelled = !pixels] {
          if (pixels) attachPixels(config, z, pixels);
          finished(config, nullptr, QString(), cancelled);
        },
        Qt::QueuedConnection);
  });
}

// What one job runs with, copied on the GUI thread: the job reads no member of the worker.
struct ProcessingWorker::JobInputs {
  Task task;
  quint64 config = 0;
  std::shared_ptr<std::atomic<bool>> cancel;
  bool compare = false, interop = false, limits = false;
  int delayMs = 0, radius = 0;
  std::shared_ptr<compute::LiveProcessor> live;  // Single mode, not for benchmarks
  QString setupError;                            // making `live` failed: the job reports it
  std::shared_ptr<compute::PixelPool> pixelPool;
  std::shared_ptr<const io::StackReader> reader;
  std::shared_ptr<compute::SliceStore> slices;
  std::shared_ptr<compute::Backend> primary, secondary;
  compute::Pipeline pipeline;
};

void ProcessingWorker::start(const Task& task) {
  const bool wasBusy = running_.has_value();
  running_ = Running{task, config_, std::make_shared<std::atomic<bool>>(false)};
  ++jobsStarted_;
  if (!wasBusy) emit busyChanged(true);
  auto in = std::make_shared<const JobInputs>(jobInputs(task));
  pool_.start([this, in] {
    static thread_local const bool lowered = (lowerThreadPriority(), true);
    (void)lowered;
    const int64_t jobStartNs = render::steadyNowNs();
    ProcessingResultPtr out;
    QString error;
    bool cancelled = false;
    try {
      auto r = processSlice(*in, reportingJob(*in));
      r->jobStartNs = jobStartNs;
      r->pipelineEndNs = render::steadyNowNs();
      prepareForDisplay(*in, *r);
      r->postedNs = render::steadyNowNs();
      out = std::move(r);
    } catch (const compute::Cancelled&) {
      cancelled = true;
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
      if (error.isEmpty()) error = "processing failed";
    }
    QMetaObject::invokeMethod(
        this,
        [this, config = in->config, out, error, cancelled] {
          finished(config, out, error, cancelled);
        },
        Qt::QueuedConnection);
  });
}

ProcessingWorker::JobInputs ProcessingWorker::jobInputs(const Task& task) {
  JobInputs in;
  in.task = task;
  in.config = config_;
  in.cancel = running_->cancel;
  in.compare = mode_ == Mode::Compare;
  in.interop = textureInterop_;
  in.limits = displayLimits_;
  in.delayMs = progressDelayMs_;
  in.radius = prefetchRadius_;
  try {
    if (task.kind != Kind::Benchmark) in.live = liveFor();
  } catch (const std::exception& e) {
    in.setupError = QString::fromStdString(e.what());
  }
  in.pixelPool = pixelPool_;
  in.reader = reader_;
  in.slices = slices_;
  in.primary = primary_;
  in.secondary = secondary_;
  in.pipeline = pipeline_;
  return in;
}

// The job's progress goes to the GUI thread at most every 40 ms, and only once it has run for
// the delay (fast jobs stay quiet); a report that arrives after its job was replaced is dropped.
compute::Job ProcessingWorker::reportingJob(const JobInputs& in) {
  struct Reports {
    QElapsedTimer clock;
    std::atomic<qint64> lastMs{-1000};  // operations may report from any thread
  };
  auto reports = std::make_shared<Reports>();
  reports->clock.start();
  return compute::Job(
      in.cancel.get(), [this, reports, delayMs = in.delayMs, cancel = in.cancel](double fraction) {
        const qint64 now = reports->clock.elapsed();
        qint64 last = reports->lastMs.load();
        if (now < delayMs || now - last < 40) return;
        if (!reports->lastMs.compare_exchange_strong(last, now)) return;
        QMetaObject::invokeMethod(
            this,
            [this, fraction, cancel] {
              if (running_ && running_->cancel == cancel && running_->task.kind != Kind::Prefetch)
                emit progress(running_->task.generation, fraction);
            },
            Qt::QueuedConnection);
      });
}

std::shared_ptr<ProcessingResult> ProcessingWorker::processSlice(const JobInputs& in,
                                                                 const compute::Job& job) {
  const Task& task = in.task;
  if (!in.setupError.isEmpty()) throw std::runtime_error(in.setupError.toStdString());
  if (!in.reader) throw compute::InvalidArgument("no stack is open");
  if (!in.primary) throw compute::InvalidArgument("no processing backend is chosen");
  if (in.compare && !in.secondary)
    throw compute::InvalidArgument("Compare needs a second backend (GPU or a CPU stand-in)");
  const io::StackInfo& info = in.reader->info();
  if (task.z < 0 || task.z >= info.z)
    throw compute::InvalidArgument("slice " + std::to_string(task.z) + " is outside the stack");
  auto r = std::make_shared<ProcessingResult>();
  r->z = task.z;
  r->generation = task.generation;
  r->prefetched = task.kind == Kind::Prefetch;
  if (in.live && !in.compare && task.kind != Kind::Benchmark) {
    // Single mode: raw slices read once, kept where the backend computes, neighbours read
    // ahead while this slice is processed (by prefetches too: a scrub adopts them, and the
    // slice after must not wait for the file); a GPU result stays on the device.
    if (in.radius > 0) {
      std::vector<int64_t> around;
      for (int d = 1; d <= in.radius; ++d) around.insert(around.end(), {task.z + d, task.z - d});
      in.live->readAhead(around);
    }
    compute::LiveProcessor::Frame frame = in.live->process(task.z, in.pipeline, job);
    r->result = std::move(frame.result);
    r->raw = frame.raw;
    return r;
  }
  // From the store the viewer shares: kept slices are not read again.
  const compute::SliceRead read = [&](int64_t k, float* out) {
    const compute::SliceStore::Pixels pixels = in.slices->get(k);
    std::copy(pixels->begin(), pixels->end(), out);
  };
  compute::SliceRunRequest request;
  request.volume = {info.z, info.y, info.x};
  request.spacing = compute::spacingOf(info);
  request.z = task.z;
  request.primary = in.primary.get();
  if (in.compare) request.secondary = in.secondary.get();
  if (task.kind == Kind::Benchmark) request.repeats = task.repeats;
  compute::SliceRun run = compute::runPipelineAtSlice(in.pipeline, request, read, job);
  r->benchmark = task.kind == Kind::Benchmark;
  if (r->benchmark) r->repeats = task.repeats;
  r->result = std::move(run.result);
  r->comparison = std::move(run.comparison);
  r->raw = std::move(run.raw);
  return r;
}

void ProcessingWorker::prepareForDisplay(const JobInputs& in, ProcessingResult& r) {
  compute::Image& image = r.result.image;
  if (image.onHost()) {
    // One copy here instead of two on the GUI thread (view and readout share it).
    auto [pixels, alias] = in.pixelPool->image(image.shape());
    std::copy_n(image.data(), image.shape().count(), pixels->data());
    alias.spacing = image.spacing;
    image = alias;
    r.pixels = pixels;
    if (in.limits) std::tie(r.displayLow, r.displayHigh) = displayLimits(image);
  } else if (!in.interop) {
    // No interop: one download, straight into the pixels the view uploads.
    QElapsedTimer download;
    download.start();
    auto [pixels, host] = in.pixelPool->image(image.shape(), in.primary);
    in.primary->device().downloadInto(image, host);
    r.result.downloadMs = static_cast<double>(download.nsecsElapsed()) / 1e6;
    r.result.totalMs += r.result.downloadMs;
    r.pixels = pixels;
    if (in.limits) std::tie(r.displayLow, r.displayHigh) = displayLimits(host);
  } else if (in.limits) {
    // Interop: the view's texture is written from the device; limits from sampled rows.
    const compute::Image sample =
        in.primary->device().downloadRows(image, 0, sampleRowStep(image.shape()));
    std::tie(r.displayLow, r.displayHigh) = displayLimits(sample);
  }
  r.hasDisplayLimits = in.limits;
}

void ProcessingWorker::finished(quint64 config, ProcessingResultPtr result, const QString& error,
                                bool cancelled) {
  if (!running_) return;
  // The GUI-side copy: a later request for the same slice may have adopted this job.
  const Task task = running_->task;
  const bool wasCancelled = cancelled || running_->cancel->load();
  running_.reset();
  const bool current = task.generation == generation_ && config == config_;

  if (task.kind == Kind::Pixels) {
    // attachPixels ran already; nothing is delivered.
  } else if (cancelled) {
    ++jobsCancelled_;
  } else if (!error.isEmpty()) {
    if (task.kind != Kind::Prefetch && current) emit failed(task.generation, task.z, error);
  } else if (result) {
    if (config == config_ && task.kind != Kind::Benchmark) insertCached(task.z, result);
    if (current && !wasCancelled) {
      auto answer = result;
      if (task.kind == Kind::Request && result->generation != task.generation) {
        auto copy = std::make_shared<ProcessingResult>(*result);
        copy->generation = task.generation;
        answer = copy;
      }
      if (task.kind == Kind::Request) {
        emit resultReady(answer);
        schedulePixels(answer);
      }
      if (task.kind == Kind::Benchmark) emit benchmarkReady(answer);
    }
  }
  if (!pending_ && prefetchQueue_.empty() && task.kind == Kind::Request && current)
    schedulePrefetch();
  startNext();
  if (!running_) emit busyChanged(false);
}

}  // namespace stacklens::ui
