// Block by block: on each backend, a reader thread fills frames, the backend deconvolves them, a
// writer thread keeps their interiors; the backends take blocks from one queue.
#include "compute/blocked/blocked_deconvolution.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "compute/blocked/block_queue.h"
#include "compute/blocked/exchange_run.h"
#include "compute/blocked/resident_run.h"
#include "compute/cpu/thread_pool.h"

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The threads that decode one worker's frames: as many as the host has, at most 16.
int decoderThreads() {
  return int(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 16));
}

// A read or write error: it stops every worker (unlike a device's failure, which stops one).
struct InputOutputFailure {
  std::exception_ptr error;
};

// Each block's expected compute on the backend: blocks of several frame shapes (reflect-exact's
// may differ) are paired so that the workers finish together.
std::vector<double> blockCosts(const BlockPlan& plan, const std::string& backend,
                               const DeconvolveParams& p) {
  const FrameCosts costs = frameCosts(backend, p);
  std::vector<double> out;
  for (const Block& b : plan.blocks) out.push_back(costs.secondsPerIteration(b.frame.shape()));
  return out;
}

// What the workers share.
struct SharedRun {
  SharedRun(const BoxReader& r, const BoxWriter& w, const Image& f, const DeconvolveParams& p,
            const BlockPlan& pl, const Job& j, const std::string& backend, size_t workers)
      : read(r),
        write(w),
        psf(f),
        params(p),
        plan(pl),
        job(j),
        queue(blockCosts(pl, backend, p), workers),
        fractions(workers, 0.0) {}
  const BoxReader& read;
  const BoxWriter& write;
  const Image& psf;
  DeconvolveParams params;  // periodic: each frame already holds what lies past the faces
  const BlockPlan& plan;
  const Job& job;
  const Clock::time_point started = Clock::now();
  BlockQueue queue;
  // Set when the run stops early (cancelled, or a read or write failed): the workers' fills,
  // writes and deconvolutions stop at their next check.
  std::atomic<bool> stop{false};
  std::mutex progress;
  std::vector<double> fractions;  // per worker: how far its current block is
  size_t blocksDone = 0;
  // What was reported: a block counts as done once written, which may be after its worker began
  // the next block (its fraction back at 0), so the sum may step back; the report does not.
  double reported = 0;
  std::exception_ptr fatal;  // the first read/write error or Cancelled

  bool stopping() const { return stop.load() || job.cancelled(); }
  void report(size_t worker, double fraction, bool blockDone) {
    std::lock_guard lock(progress);
    fractions[worker] = blockDone ? 0.0 : fraction;
    if (blockDone) ++blocksDone;
    double sum = double(blocksDone);
    for (double f : fractions) sum += f;
    reported = std::max(reported, std::min(1.0, sum / double(plan.blocks.size())));
    job.report(reported);
  }
  void fail(std::exception_ptr e) {
    {
      std::lock_guard lock(progress);
      if (!fatal) fatal = e;
    }
    stop = true;
    queue.stop();
  }
};

// One backend's share of the run: blocks from the queue, each frame filled while the one before
// computes and each result emptied while the next computes.
class Worker {
 public:
  Worker(Backend& backend, SharedRun& run, size_t index, WorkerReport& report)
      : backend_(backend), run_(run), index_(index), report_(report) {}

  void run() {
    report_.device = backend_.deviceName();
    try {
      backend_.device().bindToThisThread();
      transfers_ = backend_.device().blockTransfers();
      loop();
    } catch (const InputOutputFailure& f) {
      giveBack();
      run_.fail(f.error);
    } catch (const Cancelled&) {
      giveBack();
      run_.fail(std::current_exception());
    } catch (const std::exception& e) {
      // The device failed: its blocks go to the other workers.
      report_.failure = e.what();
      deviceFailure_ = std::current_exception();
      giveBack();
    }
    report_.finishedAt = now();
  }
  std::exception_ptr deviceFailure() const { return deviceFailure_; }

 private:
  void loop() {
    std::optional<size_t> current = run_.queue.take(index_);
    if (!current) return;
    inHand_.push_back(*current);
    int slot = 0;
    startFill(*current, slot);
    for (;;) {
      waitFor(filling_, report_.readSeconds);
      std::optional<size_t> next = run_.queue.tryTake(index_);
      if (next) {
        inHand_.push_back(*next);
        startFill(*next, 1 - slot);
      }
      const auto t = Clock::now();
      const size_t k = *current;
      const Job blockJob(&run_.stop, [this](double f) { run_.report(index_, f, false); });
      timesOf(k).computeFrom = now();
      Image result = backend_.richardsonLucy(frames_[slot], run_.psf, run_.params, blockJob);
      timesOf(k).computeTo = now();
      report_.computeSeconds += secondsSince(t);
      finishEmptying();
      if (stagingResults_.valid()) stagingResults_.get();
      written_ = std::move(result);
      writing_ = k;
      emptying_ = std::async(std::launch::async, [this, k] { return empty(k); });
      if (!next) {
        // Nothing was waiting: the queue may still get blocks back from a failing worker.
        finishEmptying();
        next = run_.queue.take(index_);
        if (!next) return;
        inHand_.push_back(*next);
        startFill(*next, 1 - slot);
      }
      current = next;
      slot = 1 - slot;
    }
  }

  // Allocated on this (the computing) thread, as BlockTransfers asks; a slot is kept while the
  // blocks' frames have its shape (reflect-exact frames may differ).
  void startFill(size_t k, int slot) {
    const Shape shape = run_.plan.blocks[k].frame.shape();
    if (!(frames_[slot].shape() == shape)) {
      frames_[slot] = Image();
      frames_[slot] = transfers_->allocate(shape);
    }
    filling_ = std::async(std::launch::async, [this, k, slot] { return fill(k, slot); });
  }

  // Seconds since the run started.
  double now() const { return secondsSince(run_.started); }
  BlockTimes& timesOf(size_t k) {
    std::lock_guard lock(timesLock_);
    return times_[k];
  }

  double fill(size_t k, int slot) {
    const auto t = Clock::now();
    timesOf(k).readFrom = now();
    const BlockPlan& plan = run_.plan;
    const int64_t slab = plan.slabSlices;
    const Block& b = plan.blocks[k];
    const Shape f = b.frame.shape();
    // Two staging slabs: one is read into while the other is copied to the frame.
    float* staging[2] = {transfers_->staging(0, size_t(slab * f.y * f.x)),
                         transfers_->staging(1, size_t(slab * f.y * f.x))};
    double stagingSeconds = secondsSince(t), decodingSeconds = 0, putWaitSeconds = 0;
    // The results' staging is page-locked once this is, while the first frame is read: locking
    // takes the driver a few tenths of a second per GiB and holds up other calls to it (the
    // frame staging's locking, or at the first write, the next block's start).
    if (!resultsStagingStarted_) {
      resultsStagingStarted_ = true;
      const size_t resultSlab = size_t(slab * plan.interior.y * plan.interior.x);
      stagingResults_ = std::async(std::launch::async, [this, resultSlab] {
        transfers_->staging(2, resultSlab);
        transfers_->staging(3, resultSlab);
      });
    }
    // Decoding a file's samples is bound by one core, far below what the page cache delivers:
    // a slab is read by several threads, each taking row bands of its slices.
    const int64_t bands = std::max<int64_t>(1, decoders_.size() * 2 / std::min(slab, f.z));
    std::future<void> putting;  // waits for itself when an error leaves early
    for (int64_t z = 0, s = 0; z < f.z; z += slab, s = 1 - s) {
      if (run_.stopping()) throw Cancelled();
      const int64_t count = std::min(slab, f.z - z);
      const auto decoding = Clock::now();
      try {
        decoders_.parallelFor(count * bands, [&](int64_t from, int64_t to) {
          for (int64_t i = from; i < to; ++i) {
            const int64_t slice = i / bands, band = i % bands;
            Box part = b.frame;
            part.z0 = b.frame.z0 + z + slice;
            part.z1 = part.z0 + 1;
            part.y0 = b.frame.y0 + f.y * band / bands;
            part.y1 = b.frame.y0 + f.y * (band + 1) / bands;
            if (part.y0 == part.y1) continue;
            readWithBoundary(run_.read, plan.volume, plan.boundary, part,
                             staging[s] + (slice * f.y + part.y0 - b.frame.y0) * f.x);
          }
        });
      } catch (...) {
        throw InputOutputFailure{std::current_exception()};
      }
      decodingSeconds += secondsSince(decoding);
      const auto waiting = Clock::now();
      if (putting.valid()) putting.get();
      putWaitSeconds += secondsSince(waiting);
      putting = std::async(std::launch::async, [this, slot, z, count, src = staging[s]] {
        transfers_->put(frames_[slot], z, count, src);
      });
    }
    const auto waiting = Clock::now();
    if (putting.valid()) putting.get();
    putWaitSeconds += secondsSince(waiting);
    BlockTimes& times = timesOf(k);
    times.readTo = now();
    times.stagingSeconds = stagingSeconds;
    times.decodingSeconds = decodingSeconds;
    times.putWaitSeconds = putWaitSeconds;
    return secondsSince(t);
  }

  double empty(size_t k) {
    const auto t = Clock::now();
    timesOf(k).writeFrom = now();
    const BlockPlan& plan = run_.plan;
    const Block& b = plan.blocks[k];
    const Shape in = b.interior.shape();
    const int64_t slab = plan.slabSlices;
    // Two staging slabs: one is copied from the result while the other is written.
    float* staging[2] = {transfers_->staging(2, size_t(slab * in.y * in.x)),
                         transfers_->staging(3, size_t(slab * in.y * in.x))};
    auto fetch = [&](int64_t z, int s) {
      const int64_t count = std::min(slab, in.z - z);
      transfers_->get(
          written_,
          {b.interior.z0 - b.frame.z0 + z, b.interior.y0 - b.frame.y0, b.interior.x0 - b.frame.x0},
          {count, in.y, in.x}, staging[s]);
    };
    double getWaitSeconds = 0, writingSeconds = 0;
    std::future<void> getting = std::async(std::launch::async, fetch, 0, 0);
    for (int64_t z = 0, s = 0; z < in.z; z += slab, s = 1 - s) {
      const auto waiting = Clock::now();
      getting.get();
      getWaitSeconds += secondsSince(waiting);
      if (run_.stopping()) throw Cancelled();
      if (z + slab < in.z) getting = std::async(std::launch::async, fetch, z + slab, 1 - s);
      Box part = b.interior;
      part.z0 = b.interior.z0 + z;
      part.z1 = part.z0 + std::min(slab, in.z - z);
      const auto writing = Clock::now();
      try {
        run_.write(part, staging[s]);
      } catch (...) {
        throw InputOutputFailure{std::current_exception()};
      }
      writingSeconds += secondsSince(writing);
    }
    BlockTimes& times = timesOf(k);
    times.writeTo = now();
    times.getWaitSeconds = getWaitSeconds;
    times.writingSeconds = writingSeconds;
    return secondsSince(t);
  }

  void finishEmptying() {
    if (!emptying_.valid()) return;
    waitFor(emptying_, report_.writeSeconds);
    written_ = Image();
    {
      std::lock_guard lock(timesLock_);
      BlockTimes times = times_[writing_];
      times.block = writing_;
      report_.timeline.push_back(times);
      times_.erase(writing_);
    }
    inHand_.erase(std::find(inHand_.begin(), inHand_.end(), writing_));
    run_.queue.done(writing_);
    ++report_.blocks;
    run_.report(index_, 0.0, true);
  }

  void waitFor(std::future<double>& work, double& seconds) {
    const auto t = Clock::now();
    seconds += work.get();
    report_.waitSeconds += secondsSince(t);
  }

  // After a failure: the fill and the write under way end (a result whose write completes is
  // done), and the blocks still in hand go back to the queue, first block first.
  void giveBack() {
    if (filling_.valid()) filling_.wait();
    if (stagingResults_.valid()) stagingResults_.wait();
    if (emptying_.valid()) {
      try {
        finishEmptying();
      } catch (...) {
      }
    }
    for (auto it = inHand_.rbegin(); it != inHand_.rend(); ++it) run_.queue.handBack(*it);
    inHand_.clear();
  }

  Backend& backend_;
  SharedRun& run_;
  size_t index_;
  WorkerReport& report_;
  std::unique_ptr<BlockTransfers> transfers_;
  cpu::ThreadPool decoders_{decoderThreads()};
  Image frames_[2];
  Image written_;  // the result being emptied
  size_t writing_ = 0;
  std::future<double> filling_, emptying_;
  std::future<void> stagingResults_;  // the results' staging, locked while the first frame is read
  bool resultsStagingStarted_ = false;  // (by the first fill)
  std::vector<size_t> inHand_;          // taken from the queue, not yet done
  std::mutex timesLock_;                // the fill and the write threads note their times too
  std::map<size_t, BlockTimes> times_;
  std::exception_ptr deviceFailure_;
};

}  // namespace

BlockedRunReport deconvolveBlocked(const std::vector<Backend*>& backends, const BoxReader& read,
                                   const BoxWriter& write, const Image& psf,
                                   const DeconvolveParams& p, const BlockPlan& plan,
                                   const Job& job) {
  if (!p.threeD) throw InvalidArgument("blocked deconvolution is 3D: set threeD");
  if (plan.blocks.empty()) throw InvalidArgument("blocked deconvolution: the plan has no blocks");
  if (plan.slabSlices < 1)
    throw InvalidArgument("blocked deconvolution: the plan has no slab size (planSlabs)");
  if (backends.empty()) throw InvalidArgument("blocked deconvolution: no backend to run on");
  if (plan.scheme == BlockScheme::Resident) {
    if (backends.size() != 1)
      throw InvalidArgument("blocked deconvolution: resident frames run on one device");
    return deconvolveResident(*backends.front(), read, write, psf, p, plan, job);
  }
  if (plan.scheme == BlockScheme::Exchange) {
    if (backends.size() != 1)
      throw InvalidArgument("blocked deconvolution: blocks that exchange halos run on one CPU");
    return deconvolveExchanging(*backends.front(), read, write, psf, p, plan, job);
  }
  DeconvolveParams blockParams = p;
  // A frame is filled past the volume's faces by the run's rule and then wraps round; a
  // reflect-exact frame lies inside the volume and reflects at its own faces (planBlocks).
  if (p.boundary != Boundary::ReflectExact) blockParams.boundary = Boundary::Periodic;
  SharedRun run(read, write, psf, blockParams, plan, job, backends.front()->name(),
                backends.size());
  BlockedRunReport report;
  report.workers.resize(backends.size());
  std::vector<std::unique_ptr<Worker>> workers;
  for (size_t i = 0; i < backends.size(); ++i)
    workers.push_back(std::make_unique<Worker>(*backends[i], run, i, report.workers[i]));
  // The workers' operations watch one flag, run.stop: the caller's cancel reaches it here (and
  // a worker's read or write error sets it directly), so that a cancel stops a deconvolution
  // within an iteration on every device.
  std::atomic<bool> finished{false};
  std::thread watcher;
  if (job.cancelFlag())
    watcher = std::thread([&] {
      while (!finished && !run.stop) {
        if (job.cancelled()) run.stop = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  struct JoinAtEnd {
    std::atomic<bool>& finished;
    std::thread& watcher;
    ~JoinAtEnd() {
      finished = true;
      if (watcher.joinable()) watcher.join();
    }
  } joinAtEnd{finished, watcher};
  if (workers.size() == 1) {
    workers.front()->run();  // on the caller's thread, as a single-device run always was
  } else {
    std::vector<std::thread> threads;
    for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
    for (std::thread& t : threads) t.join();
  }
  if (run.fatal) std::rethrow_exception(run.fatal);
  if (!run.queue.finished()) {
    // Every worker failed: the first device's failure says why.
    for (auto& w : workers)
      if (w->deviceFailure()) std::rethrow_exception(w->deviceFailure());
    throw std::runtime_error("blocked deconvolution: blocks were left undone");
  }
  workers.clear();
  report.releasedAt = secondsSince(run.started);
  for (const WorkerReport& w : report.workers) {
    report.blocks += w.blocks;
    report.readSeconds += w.readSeconds;
    report.computeSeconds += w.computeSeconds;
    report.writeSeconds += w.writeSeconds;
    report.waitSeconds += w.waitSeconds;
  }
  return report;
}

BlockedRunReport deconvolveBlocked(Backend& backend, const BoxReader& read, const BoxWriter& write,
                                   const Image& psf, const DeconvolveParams& p,
                                   const BlockPlan& plan, const Job& job) {
  return deconvolveBlocked(std::vector<Backend*>{&backend}, read, write, psf, p, plan, job);
}

BoxReader boxReader(const Image& volume) {
  if (!volume.onHost())
    throw InvalidArgument("blocked deconvolution: the volume must be on the host");
  return [&volume](const Box& box, float* out) {
    const Shape s = volume.shape(), b = box.shape();
    for (int64_t z = 0; z < b.z; ++z)
      for (int64_t y = 0; y < b.y; ++y)
        std::memcpy(out + (z * b.y + y) * b.x,
                    volume.data() + ((box.z0 + z) * s.y + box.y0 + y) * s.x + box.x0,
                    static_cast<size_t>(b.x) * sizeof(float));
  };
}

BoxWriter boxWriter(Image& volume) {
  if (!volume.onHost())
    throw InvalidArgument("blocked deconvolution: the volume must be on the host");
  return [&volume](const Box& box, const float* data) {
    const Shape s = volume.shape(), b = box.shape();
    for (int64_t z = 0; z < b.z; ++z)
      for (int64_t y = 0; y < b.y; ++y)
        std::memcpy(volume.data() + ((box.z0 + z) * s.y + box.y0 + y) * s.x + box.x0,
                    data + (z * b.y + y) * b.x, static_cast<size_t>(b.x) * sizeof(float));
  };
}

Image deconvolveBlocked(Backend& backend, const Image& volume, const Image& psf,
                        const DeconvolveParams& p, const BlockPlan& plan, const Job& job,
                        BlockedRunReport* report) {
  if (!volume.onHost())
    throw InvalidArgument("blocked deconvolution: the volume must be on the host");
  if (!(volume.shape() == plan.volume))
    throw InvalidArgument("blocked deconvolution: the plan is for another volume");
  Image out = Image::hostUninitialized(volume.shape());
  out.spacing = volume.spacing;
  const BlockedRunReport r =
      deconvolveBlocked(backend, boxReader(volume), boxWriter(out), psf, p, plan, job);
  if (report) *report = r;
  return out;
}

}  // namespace stacklens::compute
