// runWholeStack: read every slice, deconvolve in blocks, write the result with its provenance.
#include "ui/whole_stack_job.h"

#include <unistd.h>

#include "compute/blocked/blocked_deconvolution.h"
#include "io/stack_writer.h"

namespace stacklens::ui {
namespace {

compute::DeconvolveParams threeD(compute::DeconvolveParams p) {
  p.threeD = true;
  return p;
}

size_t budgetFor(compute::Backend& backend, size_t ramBudget) {
  if (backend.name() == "cuda") return backend.setMemoryBudget(0);
  if (ramBudget) return ramBudget;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 2
                               : size_t(4) << 30;
}

const char* boundaryName(compute::Boundary b) {
  switch (b) {
    case compute::Boundary::Periodic:
      return "periodic";
    case compute::Boundary::Zero:
      return "zero";
    default:
      return "reflect";
  }
}

}  // namespace

compute::BlockPlan planWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                                  size_t ramBudget) {
  const io::StackInfo& info = request.reader->info();
  const compute::DeconvolveParams p = threeD(request.params);
  return compute::planBlocks({info.z, info.y, info.x}, request.psf.shape(), p,
                             budgetFor(backend, ramBudget),
                             compute::frameBytesPerVoxel(backend.name(), p));
}

void runWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                   const std::atomic<bool>* cancel,
                   const std::function<void(const WholeStackProgress&)>& progress,
                   size_t ramBudget) {
  const io::StackInfo& info = request.reader->info();
  const compute::DeconvolveParams p = threeD(request.params);
  const compute::BlockPlan plan = planWholeStack(request, backend, ramBudget);
  const compute::Job job(cancel);
  // Reading takes the first tenth of the bar, writing the last.
  compute::Image volume = compute::Image::hostUninitialized({info.z, info.y, info.x});
  for (int64_t z = 0; z < info.z; ++z) {
    job.checkCancelled();
    request.reader->readSlice(z, volume.slice(z));
    if (progress) progress({"reading", 0.1 * double(z + 1) / double(info.z)});
  }
  volume.spacing = {info.spacing[0], info.spacing[1], info.spacing[2], info.spacingKnown,
                    info.units[2]};
  const compute::Job deconvolving(cancel, [&](double f) {
    if (progress) progress({"deconvolving", 0.1 + 0.8 * f});
  });
  const compute::Image result =
      compute::deconvolveBlocked(backend, volume, request.psf, p, plan, deconvolving);
  job.checkCancelled();
  if (progress) progress({"writing", 0.9});
  io::WriteOptions options;
  options.header = info.header;
  options.history.push_back(
      "stacklens whole-stack richardson-lucy mode=3d iterations=" + std::to_string(p.iterations) +
      " boundary=" + boundaryName(p.boundary) + " backend=" + backend.name() +
      " blocks=" + std::to_string(plan.count()));
  options.history.push_back("stacklens input " + info.path);
  options.spacing = info.spacing;
  options.units = info.units;
  options.spacingKnown = info.spacingKnown;
  options.sourcePath = info.path;
  io::writeStack(request.outPath, result.data(), info.z, info.y, info.x, options);
  if (progress) progress({"done", 1.0});
}

}  // namespace stacklens::ui
