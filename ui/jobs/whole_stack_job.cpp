// runWholeStack: slices in, blocks deconvolved, interiors out, with the result's provenance.
#include "ui/jobs/whole_stack_job.h"

#include <algorithm>
#include <filesystem>

#include "compute/blocked/planned_run.h"
#include "compute/blocked/slab_reader.h"
#include "compute/blocked/whole_stack_setup.h"
#include "compute/device_list.h"
#include "compute/params_text.h"
#include "compute/pipeline_over_stack.h"
#include "compute/source_table.h"
#include "compute/stack_spacing.h"
#include "io/block_writer.h"
#include "io/whole_file.h"

namespace stacklens::ui {
namespace {

// What the job asks of compute's planned run: the viewer's set-up by compute's one rule
// (compute/blocked/whole_stack_setup.h), which keeps a share of the host budget for the viewer.
compute::PlannedRunRequest runRequest(const WholeStackRequest& request, compute::Backend& backend,
                                      size_t ramBudget) {
  const io::StackInfo& info = request.reader->info();
  compute::WholeStackJob job;
  job.volume = {info.z, info.y, info.x};
  job.psf = request.psf.shape();
  job.params = request.params;
  job.format = info.format;
  job.backends = {&backend};
  job.devices = static_cast<int>(std::max<size_t>(1, request.devices.size()));
  if (ramBudget) job.hostBudget = ramBudget;  // 0: the default
  job.caller = compute::JobCaller::Viewer;
  return compute::setUpWholeStackJob(job);
}

io::WriteOptions writeOptions(const io::StackInfo& info, const std::string& history) {
  io::WriteOptions options = io::carriedFrom(info);
  options.history.push_back(history);
  options.history.push_back("stacklens input " + info.path);
  return options;
}

// The pipeline at every slice, slice by slice into the writer; side tables after the stack.
void runPipelineOverWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                               const std::atomic<bool>* cancel,
                               const std::function<void(const WholeStackProgress&)>& progress) {
  const io::StackInfo& info = request.reader->info();
  const compute::Pipeline& pipeline = *request.pipeline;
  io::StackBlockWriter writer(
      request.outPath, info.z, info.y, info.x,
      writeOptions(info, "stacklens whole-stack pipeline " + pipeline.describe() +
                             " backend=" + backend.name()));
  const compute::Job job(cancel, [&](double f) {
    if (progress) progress({"processing", 0.98 * f});
  });
  const compute::StackPipelineReport report = compute::runPipelineOverStack(
      backend, pipeline, {info.z, info.y, info.x}, compute::spacingOf(info),
      [&](int64_t z, float* out) { request.reader->readSlice(z, out); },
      [&](int64_t z, const float* data) { writer.writeBox(z, z + 1, 0, info.y, 0, info.x, data); },
      job);
  if (progress) progress({"writing", 0.98});
  writer.commit();
  if (pipeline.statistics.enabled)
    io::writeWholeFile(sideTablePath(request.outPath, "statistics"),
                       compute::statisticsCsv(report.statistics), info.path);
  if (pipeline.segmentation.enabled)
    io::writeWholeFile(sideTablePath(request.outPath, "sources"),
                       compute::sourcesCsv(report.sources, true), info.path);
  if (progress) progress({"done", 1.0});
}

}  // namespace

std::string sideTablePath(const std::string& outPath, const std::string& table) {
  const std::filesystem::path out(outPath);
  return (out.parent_path() / (out.stem().string() + "_" + table + ".csv")).string();
}

std::string describeWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                               size_t ramBudget) {
  if (!request.pipeline)
    return planWholeStack(request, backend, ramBudget).describe(request.params.iterations);
  const io::StackInfo& info = request.reader->info();
  const int64_t half = request.pipeline->slabHalfWidth();
  std::string text = "slice by slice, " + std::to_string(info.z) + " slices of " +
                     std::to_string(info.y) + " x " + std::to_string(info.x);
  if (half > 0) text += ", each with " + std::to_string(half) + " slices on each side";
  return text + " on " + backend.name() + ": " + request.pipeline->describe();
}

compute::BlockPlan planWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                                  size_t ramBudget) {
  return compute::planRun(runRequest(request, backend, ramBudget), backend.name());
}

void runWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                   const std::atomic<bool>* cancel,
                   const std::function<void(const WholeStackProgress&)>& progress,
                   size_t ramBudget) {
  if (request.pipeline) return runPipelineOverWholeStack(request, backend, cancel, progress);
  const io::StackInfo& info = request.reader->info();
  const compute::PlannedRunRequest r = runRequest(request, backend, ramBudget);
  const compute::DeconvolveParams& p = r.params;
  const compute::BlockPlan plan = compute::planRun(r, backend.name());
  const compute::Shape volume = r.volume;
  // Frames are read slab by slab as the blocks need them and each block's interior is written
  // as it finishes: neither stack is whole in memory. FITS row band by row band, other formats
  // slice by slice, keeping the slices of a slab.
  const compute::ReaderForPlan readerFor = [&](const compute::BlockPlan& planned) {
    return !r.wholeSlices
               ? compute::rowReader(
                     volume,
                     [&request](int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                                float* out) { request.reader->readBox(z, y0, y1, x0, x1, out); })
               : compute::slabReader(
                     volume,
                     [&request](int64_t z, float* out) { request.reader->readSlice(z, out); },
                     planned.keptSlices());
  };
  io::StackBlockWriter writer(
      request.outPath, info.z, info.y, info.x,
      writeOptions(info, "stacklens whole-stack richardson-lucy mode=3d iterations=" +
                             std::to_string(p.iterations) + " boundary=" +
                             compute::boundaryName(p.boundary) + " backend=" + backend.name() +
                             " blocks=" + std::to_string(plan.count()) +
                             (r.devices > 1 ? " gpus=" + std::to_string(r.devices) : "")));
  double done = 0;
  const compute::Job deconvolving(cancel, [&](double f) {
    done = 0.95 * f;
    if (progress) progress({"deconvolving", done});
  });
  // Several GPUs: a backend of their own each (the blocks' plan is the same on every device).
  std::vector<std::unique_ptr<compute::Backend>> owned;
  std::vector<compute::Backend*> backends{&backend};
  if (r.devices > 1) {
    owned = compute::makeCudaBackends(request.devices);
    backends = compute::pointersTo(owned);
  }
  compute::planAndDeconvolve(
      backends, r, readerFor,
      [&writer](const compute::Box& b, const float* data) {
        writer.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, data);
      },
      request.psf, deconvolving,
      [&](const std::string& note) {
        if (progress) progress({note, done});
      });
  if (progress) progress({"writing", 0.95});
  writer.commit();
  if (progress) progress({"done", 1.0});
}

}  // namespace stacklens::ui
