#include "ui/jobs/projection_job.h"

#include <chrono>
#include <cmath>
#include <filesystem>

#include "compute/blocked/along_z.h"
#include "compute/blocked/block_plan.h"
#include "compute/pipeline_over_stack.h"
#include "compute/projection.h"
#include "compute/stack_spacing.h"
#include "io/stack_writer.h"
#include "io/z_coordinate.h"

namespace stacklens::ui {
namespace {

// The band's collapse, on whichever backend is given.
compute::Collapse collapseFor(const ProjectionRequest& r, const io::ZCoordinate& z) {
  return [&r, &z](compute::Backend& b, const compute::ZBand& band) {
    if (!r.moment) return b.project(band.slices, {r.op, band.first, band.last});
    compute::MomentParams p;
    p.order = r.order;
    p.first = band.first, p.last = band.last, p.clip = r.clip;
    p.coordinate.assign(z.values.begin() + band.fileFirst,
                        z.values.begin() + band.fileFirst + band.slices.shape().z);
    return b.moment(band.slices, p);
  };
}

// The range's slices as the pipeline shows them (with the slices its slab needs around them),
// as one band of every row.
compute::ZBand processedBand(const ProjectionRequest& r, compute::Backend& backend, int64_t first,
                             int64_t last, int64_t context, size_t budget,
                             const compute::Job& job) {
  const io::StackInfo& info = r.reader->info();
  const int64_t half = r.pipeline->slabHalfWidth();
  const int64_t z0 = std::max<int64_t>(0, first - std::max(half, context));
  const int64_t z1 = std::min<int64_t>(info.z, last + 1 + std::max(half, context));
  const int64_t keep0 = std::max<int64_t>(0, first - context);
  const int64_t keep1 = std::min<int64_t>(info.z, last + 1 + context);
  const size_t bytes = size_t(keep1 - keep0) * size_t(info.y * info.x) * sizeof(float);
  if (bytes > budget)
    throw compute::InvalidArgument(
        "the processed slices of this range need " + std::to_string(bytes >> 20) +
        " MiB, more than the host memory budget (" + std::to_string(budget >> 20) +
        " MiB): choose a shorter range, or process the whole stack into a file first");
  compute::ZBand band{compute::Image::host({keep1 - keep0, info.y, info.x}), keep0, first - keep0,
                      last - keep0};
  band.slices.spacing = compute::spacingOf(info);
  compute::runPipelineOverStack(
      backend, *r.pipeline, {z1 - z0, info.y, info.x}, compute::spacingOf(info),
      [&](int64_t z, float* out) { r.reader->readSlice(z0 + z, out); },
      [&](int64_t z, const float* data) {
        const int64_t k = z0 + z - keep0;
        if (k >= 0 && k < keep1 - keep0) std::copy_n(data, info.y * info.x, band.slices.slice(k));
      },
      job);
  return band;
}

double millisecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::string projectionTitle(const ProjectionRequest& r) {
  const io::StackInfo& info = r.reader->info();
  const int64_t last = r.last < 0 ? info.z - 1 : r.last;
  const std::string what = r.moment ? "Moment " + std::to_string(r.order)
                                    : std::string("Z project ") + compute::projectionName(r.op);
  return what + " (" + std::to_string(r.first) + "–" + std::to_string(last) + ")";
}

std::string defaultProjectionPath(const ProjectionRequest& r) {
  const std::filesystem::path in(r.reader->info().path);
  const std::string what =
      r.moment ? "moment" + std::to_string(r.order) : compute::projectionName(r.op);
  return (in.parent_path() /
          (in.stem().string() + (r.pipeline ? "_processed_" : "_") + what + ".fits"))
      .string();
}

ProjectionOutcome runProjection(const ProjectionRequest& r, compute::Backend& backend,
                                compute::Backend* twin, const std::atomic<bool>* cancel,
                                const std::function<void(double)>& progress) {
  const io::StackInfo& info = r.reader->info();
  const compute::SliceRange range = compute::sliceRange(info.z, r.first, r.last);
  const int64_t first = range.begin, last = range.end - 1;
  const io::ZCoordinate z = io::zCoordinate(*r.reader);
  const compute::Collapse collapse = collapseFor(r, z);
  const int64_t context = r.moment ? 1 : 0;  // channel widths at the ends from their neighbours
  const size_t budget = r.ramBudget ? r.ramBudget : compute::defaultHostBudget();
  const compute::Job job(cancel, progress);

  ProjectionOutcome outcome;
  outcome.title = projectionTitle(r);
  outcome.backend = backend.name();
  compute::Image result;
  std::optional<compute::ZBand> processed;
  if (r.pipeline) {
    processed = processedBand(r, backend, first, last, context, budget, job);
    const auto t = std::chrono::steady_clock::now();
    result = backend.download(collapse(backend, *processed));
    outcome.milliseconds = millisecondsSince(t);
  } else {
    compute::AlongZTimes times;
    result = compute::collapseAlongZ(
        backend, {info.z, info.y, info.x}, compute::spacingOf(info), first, last, context, budget,
        [&](int64_t k, int64_t y0, int64_t y1, float* out) { r.reader->readRows(k, y0, y1, out); },
        collapse, job, &times);
    outcome.milliseconds = 1e3 * times.computeSeconds;
  }
  if (twin) {
    compute::Image cpu;
    if (processed) {
      const auto t = std::chrono::steady_clock::now();
      cpu = twin->download(collapse(*twin, *processed));
      outcome.cpuMilliseconds = millisecondsSince(t);
    } else {
      compute::AlongZTimes times;
      cpu = compute::collapseAlongZ(
          *twin, {info.z, info.y, info.x}, compute::spacingOf(info), first, last, context, budget,
          [&](int64_t k, int64_t y0, int64_t y1, float* out) {
            r.reader->readRows(k, y0, y1, out);
          },
          collapse, compute::Job(cancel), &times);
      outcome.cpuMilliseconds = 1e3 * times.computeSeconds;
    }
    const compute::StageDifference d = compute::overlapDifference(result, cpu);
    outcome.relL2 = d.relL2, outcome.maxAbs = d.maxAbs;
  }
  job.checkCancelled();
  io::WriteOptions options = io::carriedCollapsed(info, 0.5 * double(first + last));
  options.history.push_back("stacklens " + outcome.title +
                            (r.pipeline ? " of the processed "
                                          "slices: " +
                                              r.pipeline->describe()
                                        : std::string()) +
                            (r.moment ? " along " + z.what : std::string()));
  if (r.moment) {
    io::setMomentUnit(options.header, info, z, r.order, "");
  }
  io::writeStack(r.outPath, result.data(), 1, info.y, info.x, options);
  return outcome;
}

}  // namespace stacklens::ui
