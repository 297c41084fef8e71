// runDeconvolve3d: budgets → plan → (dry run | streamed or in-memory blocked run).
#include "app/cli/blocked_run.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/processing.h"
#include "compute/blocked/planned_run.h"
#include "compute/blocked/seam_policy.h"
#include "compute/blocked/slab_reader.h"
#include "compute/blocked/whole_stack_setup.h"
#include "compute/device_list.h"
#include "io/block_writer.h"

namespace stacklens::cli {
namespace {

// Z,Y,X or one value for all three (non-negative integers), or `fallback` when not given.
compute::Shape shapeOption(const Args& args, const std::string& name, int64_t fallback) {
  if (!args.has(name)) return {fallback, fallback, fallback};
  const std::vector<double> v = args.getDoubles(name);
  if (v.size() != 1 && v.size() != 3) throw UsageError("--" + name + ": expected N or Z,Y,X");
  for (double d : v)
    if (d < 0 || d != std::floor(d)) throw UsageError("--" + name + ": expected whole numbers ≥ 0");
  if (v.size() == 1) return {int64_t(v[0]), int64_t(v[0]), int64_t(v[0])};
  return {int64_t(v[0]), int64_t(v[1]), int64_t(v[2])};
}

// blocks: the blocks of the plan that runs (set when it is made).
compute::Job progressJob(const std::atomic<bool>* stop, const int64_t& blocks) {
  const bool terminal = isatty(STDERR_FILENO);
  const auto started = std::chrono::steady_clock::now();
  return compute::Job(stop, [terminal, started, &blocks, last = -1](double f) mutable {
    // Each percent on a terminal (one line, redrawn, with the time left), else each tenth on a
    // line of its own.
    const int percent = static_cast<int>(f * 100) / (terminal ? 1 : 10) * (terminal ? 1 : 10);
    if (blocks == 1 || percent == last) return;
    last = percent;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double left = f > 0 ? elapsed * (1 - f) / f : 0;
    if (terminal)
      std::fprintf(stderr, "\rdeconvolving: %3d %%, about %.0f s left%s", percent, left,
                   percent == 100 ? "\n" : "   ");
    else
      std::fprintf(stderr, "deconvolving: %d %%\n", percent);
  });
}

// --timings: when each block was read, deconvolved and written (seconds from the run's start).
void printTimeline(const compute::BlockedRunReport& report) {
  for (const compute::WorkerReport& w : report.workers)
    for (const compute::BlockTimes& t : w.timeline)
      std::fprintf(stderr,
                   "  block %zu%s%s: read %.2f-%.2f s (staging %.2f, decoding %.2f, copies "
                   "%.2f), deconvolved %.2f-%.2f s, written %.2f-%.2f s (copies %.2f, writing "
                   "%.2f)\n",
                   t.block, report.workers.size() > 1 ? " on " : "",
                   report.workers.size() > 1 ? w.device.c_str() : "", t.readFrom, t.readTo,
                   t.stagingSeconds, t.decodingSeconds, t.putWaitSeconds, t.computeFrom,
                   t.computeTo, t.writeFrom, t.writeTo, t.getWaitSeconds, t.writingSeconds);
  for (const compute::WorkerReport& w : report.workers)
    std::fprintf(stderr, "  %s%sdone at %.2f s", w.device.c_str(), w.device.empty() ? "" : " ",
                 w.finishedAt);
  std::fprintf(stderr, "; buffers released at %.2f s\n", report.releasedAt);
}

// --timings with several devices: what each did.
void printWorkers(const compute::BlockedRunReport& report) {
  if (report.workers.size() < 2) return;
  for (const compute::WorkerReport& w : report.workers) {
    std::fprintf(stderr, "  %s: %d blocks, deconvolving %.2f s, reading %.2f s, writing %.2f s",
                 w.device.c_str(), w.blocks, w.computeSeconds, w.readSeconds, w.writeSeconds);
    if (!w.failure.empty()) std::fprintf(stderr, "; stopped: %s", w.failure.c_str());
    std::fprintf(stderr, "\n");
  }
}

// The plan under --seams (compute/blocked/seam_policy.h), its seams weighed by a small synthetic
// trial when that costs little next to the run (a twentieth of its expected compute, or 2 s).
compute::SeamChoice choosePlan(const Args& args, compute::Backend& backend,
                               const compute::PlannedRunRequest& request, const Deconvolve3d& job) {
  const std::string word = args.get("seams", "exact");
  const std::optional<compute::SeamRule> rule = compute::seamRuleNamed(word);
  if (!rule) throw UsageError("--seams: expected exact or fast");
  // --halo or --block asks for those blocks.
  const compute::SeamRule use =
      args.has("halo") || args.has("block") ? compute::SeamRule::Fast : *rule;
  const compute::BlockPlan fastest = compute::planRun(request, backend.name());
  const double run = fastest.secondsPerIteration * job.params.iterations;
  return compute::chooseForSeams(backend, request, job.psf, use, std::max(2.0, run / 20),
                                 compute::Job(job.stop));
}

// The budgets by compute's one rule (compute/blocked/whole_stack_setup.h): on the GPU the frames
// take device memory (--budget-mb, default the backend's) and the slabs the host budget; on the
// CPU both share the host budget, half each. The output (FITS or TIFF) holds nothing back: each
// block's interior goes straight to its place in the file.
compute::PlannedRunRequest wholeStackRequest(const Args& args, const Deconvolve3d& job,
                                             const io::StackInfo& info,
                                             const std::vector<compute::Backend*>& backends) {
  compute::WholeStackJob setup;
  setup.volume = compute::Shape{info.z, info.y, info.x};
  setup.psf = job.psf.shape();
  setup.params = job.params;
  setup.format = info.format;
  setup.backends = backends;
  setup.hostBudget = hostBudget(args);
  setup.deviceBudget = static_cast<size_t>(args.getInt("budget-mb", 0)) << 20;
  setup.halo = shapeOption(args, "halo", -1);
  setup.maxInterior = shapeOption(args, "block", 0);
  return compute::setUpWholeStackJob(setup);
}

// --dry-run: the backend (and devices), the plan, its seams and what streaming holds.
void printDryRun(const Args& args, const std::vector<compute::Backend*>& backends,
                 const compute::PlannedRunRequest& request, const Deconvolve3d& job) {
  compute::Backend* backend = backends.front();
  const compute::SeamChoice choice = choosePlan(args, *backend, request, job);
  const compute::BlockPlan& plan = choice.plan;
  std::printf("backend %s", backend->name().c_str());
  for (compute::Backend* b : backends)
    if (backends.size() > 1) std::printf("\n  %s", b->deviceName().c_str());
  std::printf("\n%s", plan.describe(job.params.iterations).c_str());
  if (!choice.summary.empty()) std::printf("%s\n", choice.summary.c_str());
  std::printf(
      "streaming: frames filled and results written %lld slices at a time, while the blocks "
      "next to them compute; host memory for it at most %lld MiB\n",
      static_cast<long long>(plan.slabSlices), static_cast<long long>(request.slabBudget >> 20));
}

// What the seam choice says: scheme for HISTORY, line for stderr as the run starts.
struct SeamNotes {
  std::string scheme, line;
};

// Takes the request of the plan chosen under --seams, keeping request when no plan fits.
// HISTORY says how the volume was cut: overlapping blocks may leave seams that an unblocked run
// does not have. (A run that falls back to smaller blocks on running out of memory is still
// described by its first plan.)
// Overlapping blocks: the seam error a synthetic trial expects is said and kept, and under
// --seams exact one block is taken instead where it would show.
SeamNotes adoptSeamChoice(const Args& args, compute::Backend& backend,
                          compute::PlannedRunRequest& request, const Deconvolve3d& job) {
  SeamNotes notes;
  try {
    const compute::SeamChoice choice = choosePlan(args, backend, request, job);
    notes.scheme = choice.provenance;
    notes.line = choice.summary;
    request = choice.request;
  } catch (const compute::InvalidArgument&) {
    // No plan fits this backend: planAndDeconvolve says so or falls back.
  }
  return notes;
}

// Frames are read slab by slab as the blocks need them: whole slices, or boxes of rows when the
// request does not take whole slices.
compute::ReaderForPlan readerForPlans(const std::shared_ptr<io::StackReader>& reader,
                                      const compute::Shape& shape, bool rows) {
  return [&reader, shape, rows](const compute::BlockPlan& plan) {
    return rows ? compute::rowReader(
                      shape, [&reader](int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                                       float* o) { reader->readBox(z, y0, y1, x0, x1, o); })
                : compute::slabReader(
                      shape, [&reader](int64_t z, float* o) { reader->readSlice(z, o); },
                      plan.keptSlices());
  };
}

// Each plan as it starts: its blocks counted for the progress line, described when there are
// several, and the seam line said with the first.
std::function<void(const compute::BlockPlan&)> announcePlan(int64_t& blocks, std::string& seamLine,
                                                            int iterations) {
  return [&blocks, &seamLine, iterations](const compute::BlockPlan& plan) {
    blocks = plan.count();
    if (plan.count() > 1) std::fprintf(stderr, "%s", plan.describe(iterations).c_str());
    // The first plan's (a fall-back's smaller blocks are described by HISTORY's too).
    if (!seamLine.empty()) std::fprintf(stderr, "%s\n", seamLine.c_str());
    seamLine.clear();
  };
}

// --timings' totals, timeline and devices; a device that stopped is said either way.
void printRunReport(const Args& args, const compute::BlockedRunReport& report) {
  if (args.has("timings"))
    std::fprintf(stderr,
                 "blocks %d: reading %.2f s, deconvolving %.2f s, writing %.2f s, waiting for "
                 "reads and writes %.2f s\n",
                 report.blocks, report.readSeconds, report.computeSeconds, report.writeSeconds,
                 report.waitSeconds);
  if (args.has("timings")) {
    printTimeline(report);
    printWorkers(report);
  } else
    for (const compute::WorkerReport& w : report.workers)
      if (!w.failure.empty())
        std::fprintf(stderr, "stacklens: %s stopped (%s); the other devices did its blocks\n",
                     w.device.c_str(), w.failure.c_str());
}

// Lets go of the devices before the process's exit (which would let go of them one after
// another), then says the peak host memory and, on CUDA, the most any one device held.
void releaseDevicesAndPrintPeaks(const Args& args,
                                 std::vector<std::unique_ptr<compute::Backend>>& owned,
                                 const std::vector<compute::Backend*>& backends,
                                 const std::string& ranOn) {
  size_t devicePeak = 0;  // the most any one device held
  for (compute::Backend* b : backends)
    devicePeak = std::max(devicePeak, b->device().devicePeakBytes());
  const size_t deviceCount = backends.size();
  const auto releasing = std::chrono::steady_clock::now();
  compute::releaseBackends(owned);
  if (args.has("timings"))
    std::fprintf(
        stderr, "devices released in %.2f s\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - releasing).count());
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::fprintf(stderr, "peak host memory %ld MiB", usage.ru_maxrss / 1024);
  if (ranOn == "cuda")
    std::fprintf(stderr, ", peak device memory %zu MiB%s", devicePeak >> 20,
                 deviceCount > 1 ? " (the most on one device)" : "");
  std::fprintf(stderr, "\n");
}

}  // namespace

int runDeconvolve3d(const Args& args, const Deconvolve3d& job) {
  StageTimer timer(args.has("timings"));
  timer.start("open");
  InputStack input;
  auto reader = openInput(args, input);
  const io::StackInfo& info = input.info;
  const compute::Shape shape{info.z, info.y, info.x};
  timer.stop();
  timer.start("devices");
  auto owned = chooseBackends(args);
  const std::vector<compute::Backend*> backends = compute::pointersTo(owned);
  compute::PlannedRunRequest request = wholeStackRequest(args, job, info, backends);
  const bool rows = !request.wholeSlices;  // of the first request, before the seam choice
  if (args.has("dry-run")) {
    printDryRun(args, backends, request, job);
    return kOk;
  }
  int64_t blocks = 1;
  const compute::Job progress = progressJob(job.stop, blocks);
  timer.stop();
  timer.start("compute");
  SeamNotes seams = adoptSeamChoice(args, *backends.front(), request, job);
  // The writer refuses an unknown format before any work is done.
  io::StackBlockWriter writer(
      job.outPath, info.z, info.y, info.x,
      writeOptionsFor(args, input, job.history + (seams.scheme.empty() ? "" : " ") + seams.scheme));
  const compute::PlannedRunResult run = compute::planAndDeconvolve(
      backends, request, readerForPlans(reader, shape, rows),
      [&](const compute::Box& b, const float* data) {
        writer.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, data);
      },
      job.psf, progress,
      [](const std::string& note) { std::fprintf(stderr, "stacklens: %s\n", note.c_str()); },
      announcePlan(blocks, seams.line, job.params.iterations));
  timer.stop();
  timer.start("write");
  writer.commit();
  timer.stop();
  timer.print(run.backend);
  printRunReport(args, run.report);
  releaseDevicesAndPrintPeaks(args, owned, backends, run.backend);
  return kOk;
}

}  // namespace stacklens::cli
