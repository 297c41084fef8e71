// Runs the processing pipeline off the GUI thread: newest request wins, stale jobs are cancelled,
// results are cached (LRU, bounded in bytes, device buffers included) and neighbouring slices
// are prefetched when idle. Single mode takes raw slices from the stack's shared store and keeps
// their uploads there (compute::LiveProcessor, compute::SliceStore).
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QThreadPool>
#include <QTimer>
#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "compute/live_processor.h"
#include "compute/pipeline.h"
#include "compute/pixel_pool.h"
#include "compute/slice_store.h"
#include "io/byte_budget_lru.h"
#include "io/stack.h"

namespace stacklens::ui {

// What the worker computed for slice z.
struct ProcessingResult {
  quint64 generation = 0;  // the request it answers (0 for prefetches)
  int z = -1;
  // The primary backend's result. Single mode on a GPU: result.image stays on the device
  // (Location::Cuda) and is what the cache keeps.
  compute::PipelineResult result;
  // result.image's pixels on the host, made on the worker so that the GUI thread copies nothing
  // (the view and the readout share them). Null for a device result shown through CUDA–GL
  // interop until ProcessingWorker::processedPixelsReady brings them.
  std::shared_ptr<const std::vector<float>> pixels;
  compute::Image raw;                             // the unprocessed slice (for blink and split)
  float displayLow = 0, displayHigh = 1;          // 0.5 and 99.5 percentiles of the result
  bool hasDisplayLimits = false;                  // computed (see setDisplayLimits)
  std::optional<compute::Comparison> comparison;  // Compare mode: both backends and differences
  bool benchmark = false;  // timings are medians of repeated runs (see ProcessingWorker::benchmark)
  int repeats = 1;
  bool fromCache = false;
  // When the job ran, on render::steadyNowNs's clock (the scrub benchmark's stages): started,
  // pipeline done (result still where the backend computes), handed to the GUI thread (after
  // the display limits and any download). prefetched: started as a prefetch, adopted by a request.
  int64_t jobStartNs = 0, pipelineEndNs = 0, postedNs = 0;
  bool prefetched = false;
  size_t bytes() const;        // memory held (host and device), for the cache budget
  size_t deviceBytes() const;  // of that, on the device
};
using ProcessingResultPtr = std::shared_ptr<const ProcessingResult>;

// Makes a backend on a short-lived thread of lowered priority: the backend's worker threads
// (thread pool, FFTW) inherit that priority.
std::shared_ptr<compute::Backend> makeBackgroundBackend(
    const std::function<std::unique_ptr<compute::Backend>()>& make);

class ProcessingWorker : public QObject {
  Q_OBJECT
 public:
  enum class Mode { Single, Compare };
  // The budget of the raw slices the worker keeps when it is given no store (host copies plus
  // device uploads): 32 slices of 2048² with their uploads, so a scrub range is read once.
  static constexpr size_t kOwnStoreBudget = size_t(1) << 30;

  explicit ProcessingWorker(QObject* parent = nullptr);
  ~ProcessingWorker() override;  // cancels and waits for the running job

  // Each of these drops cached results that no longer apply and cancels the running job.
  // The raw slices come from slices, the viewer's store, which they share one byte budget with
  // (null: a store of the worker's own, of kOwnStoreBudget).
  void setSource(std::shared_ptr<const io::StackReader> reader,
                 std::shared_ptr<compute::SliceStore> slices = {});
  // secondary is used in Compare mode (a GPU, or a second CPU backend standing in for one).
  void setBackends(std::shared_ptr<compute::Backend> primary,
                   std::shared_ptr<compute::Backend> secondary = {});
  void setMode(Mode mode);
  void setPipeline(const compute::Pipeline& pipeline);

  void setCacheBudget(size_t bytes);   // 0 disables the cache
  void setPrefetchRadius(int slices);  // neighbours on each side prefetched when idle; 0: off
  const std::shared_ptr<compute::SliceStore>& slices() const { return slices_; }
  // How device results reach the screen: through CUDA–GL interop (true: no download before the
  // frame; the host pixels follow by processedPixelsReady) or as host pixels (false, the
  // default: one download by the job, for Mesa or builds without interop).
  void setTextureInterop(bool on);
  bool textureInterop() const { return textureInterop_; }
  // Whether jobs compute the result's own display limits (displayLow/High: a sample and two
  // selections, about a millisecond at 2048²); only a view showing the result on its own scale
  // needs them. On by default.
  void setDisplayLimits(bool on) { displayLimits_ = on; }

  // Asks for slice z; supersedes every earlier request. Returns the request's generation; its
  // result arrives by resultReady (from the cache too, always asynchronously).
  quint64 request(int z);
  // Warm-up, then repeats runs of slice z (both backends in Compare mode); medians arrive by
  // benchmarkReady. Cancelled by the next request.
  quint64 benchmark(int z, int repeats);
  // Cancels the running job and forgets the pending request.
  void cancel();

  bool busy() const { return running_.has_value(); }
  size_t cacheBytes() const { return size_t(cache_.bytes()); }
  size_t cacheDeviceBytes() const;
  // The raw-slice store of Single mode (null until the first job); for tests and diagnostics.
  std::shared_ptr<const compute::LiveProcessor> liveProcessor() const { return live_; }
  int cacheEntries() const { return static_cast<int>(cache_.size()); }
  bool cached(int z) const;
  int jobsStarted() const { return jobsStarted_; }
  int jobsCancelled() const { return jobsCancelled_; }
  Mode mode() const { return mode_; }
  const compute::Pipeline& pipeline() const { return pipeline_; }
  std::shared_ptr<compute::Backend> primaryBackend() const { return primary_; }
  std::shared_ptr<compute::Backend> secondaryBackend() const { return secondary_; }

 signals:
  void resultReady(stacklens::ui::ProcessingResultPtr result);
  void benchmarkReady(stacklens::ui::ProcessingResultPtr result);
  void failed(quint64 generation, int z, const QString& message);
  // Only for jobs that have run longer than the progress delay; fraction in [0, 1].
  void progress(quint64 generation, double fraction);
  void busyChanged(bool busy);
  // Interop path: the host pixels of the result for slice z, downloaded after it was delivered
  // (for the readout); configuration is the one the result belongs to.
  void processedPixelsReady(int z, std::shared_ptr<const std::vector<float>> pixels);

 private:
  // Pixels: the host copy of a device result shown through interop, for the readout; run when
  // the worker is idle (after prefetches), dropped by the next request.
  enum class Kind { Request, Prefetch, Benchmark, Pixels };
  struct Task {
    Kind kind = Kind::Request;
    quint64 generation = 0;
    int z = 0;
    int repeats = 1;
  };
  struct Running {
    Task task;
    quint64 config = 0;
    std::shared_ptr<std::atomic<bool>> cancel;
  };
  using Key = std::tuple<quint64, int>;  // (configuration, z)

  void configurationChanged();
  void startNext();
  // A job in named steps: its inputs copied on the GUI thread, its progress reports, the slice
  // processed (live or through runPipelineAtSlice), the result made ready for the view.
  struct JobInputs;
  void start(const Task& task);
  JobInputs jobInputs(const Task& task);
  compute::Job reportingJob(const JobInputs& in);
  static std::shared_ptr<ProcessingResult> processSlice(const JobInputs& in,
                                                        const compute::Job& job);
  static void prepareForDisplay(const JobInputs& in, ProcessingResult& result);
  void startPixels(const ProcessingResultPtr& result);
  void schedulePixels(const ProcessingResultPtr& result);
  void finished(quint64 config, ProcessingResultPtr result, const QString& error, bool cancelled);
  void schedulePrefetch();
  void deliverCached(quint64 generation, int z, const ProcessingResultPtr& result);
  ProcessingResultPtr findCached(int z);
  void insertCached(int z, ProcessingResultPtr result);
  void attachPixels(quint64 config, int z, std::shared_ptr<const std::vector<float>> pixels);
  std::shared_ptr<compute::LiveProcessor> liveFor();
  void dropLive();

  std::shared_ptr<const io::StackReader> reader_;
  std::shared_ptr<compute::SliceStore> slices_;  // raw slices, host and device
  std::shared_ptr<compute::Backend> primary_, secondary_;
  std::shared_ptr<compute::LiveProcessor> live_;   // Single mode: raw slices on the backend
  std::shared_ptr<compute::PixelPool> pixelPool_;  // host pixels of results, recycled
  bool textureInterop_ = false;
  bool displayLimits_ = true;
  QTimer pixelsDelay_;  // the readout's pixels wait until the slider rests
  Mode mode_ = Mode::Single;
  compute::Pipeline pipeline_;

  quint64 config_ = 1;  // bumped when anything that changes results changes
  quint64 generation_ = 0;
  int lastZ_ = -1;
  int direction_ = 0;  // +1 / −1 while stepping through adjacent slices, 0 after a jump
  std::optional<Running> running_;
  std::optional<Task> pending_;
  std::list<Task> prefetchQueue_;
  ProcessingResultPtr pixelsWanted_;  // a delivered device result whose host pixels are due

  struct ResultBytes {
    int64_t operator()(const ProcessingResultPtr& r) const { return int64_t(r->bytes()); }
  };
  io::ByteBudgetLru<Key, ProcessingResultPtr, ResultBytes> cache_{int64_t(512) << 20};
  int prefetchRadius_ = 1;
  int progressDelayMs_ = 200;
  int jobsStarted_ = 0, jobsCancelled_ = 0;

  QThreadPool pool_;  // one thread: a backend is used by one job at a time
};

}  // namespace stacklens::ui

Q_DECLARE_METATYPE(stacklens::ui::ProcessingResultPtr)
