// planAndDeconvolve: plan, run, and on running out of device memory, smaller blocks, then the CPU.
#include "compute/blocked/planned_run.h"

#include <atomic>
#include <cstdio>

namespace stacklens::compute {
namespace {

// Keeps the backend from falling back to the CPU on its own while the run lasts: a block that
// does not fit is better cut smaller than deconvolved on the CPU.
struct NoCpuFallback {
  Backend& backend;
  explicit NoCpuFallback(Backend& b) : backend(b) { backend.setCpuFallback(false); }
  ~NoCpuFallback() { backend.setCpuFallback(true); }
};

std::string mebibytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
  return text;
}

}  // namespace

BlockPlan planRun(const PlannedRunRequest& r, const std::string& backend) {
  BlockPlan plan = planBlocks(r.volume, r.psf, r.params, frameCosts(backend, r.params),
                              r.frameBudget, r.halo, r.maxInterior);
  planSlabs(plan, r.slabBudget, r.wholeSlices);
  return plan;
}

PlannedRunResult planAndDeconvolve(Backend& backend, const PlannedRunRequest& r,
                                   const ReaderForPlan& readerFor, const BoxWriter& write,
                                   const Image& psf, const Job& job,
                                   const std::function<void(const std::string&)>& note,
                                   const std::function<void(const BlockPlan&)>& planned) {
  const NoCpuFallback guard(backend);
  std::unique_ptr<Backend> cpu;
  Backend* current = &backend;
  PlannedRunRequest attempt = r;  // its frame budget shrinks on each fall-back
  std::atomic<bool> written{false};
  const BoxWriter watched = [&](const Box& box, const float* data) {
    written = true;
    write(box, data);
  };
  for (int halvings = 0;;) {
    PlannedRunResult result;
    result.plan = planRun(attempt, current->name());
    if (planned) planned(result.plan);
    try {
      result.report = deconvolveBlocked(*current, readerFor(result.plan), watched, psf, r.params,
                                        result.plan, job);
      result.backend = current->name();
      return result;
    } catch (const OutOfDeviceMemory& e) {
      // Results already written came from this plan's blocks; another plan's would not match.
      if (written || current != &backend) throw;
      if (halvings < 3 && attempt.frameBudget / 2 > 0) {
        ++halvings;
        attempt.frameBudget /= 2;
        if (note)
          note(std::string(e.what()) + "; planning smaller blocks for " +
               mebibytes(attempt.frameBudget));
        continue;
      }
      if (note) note(std::string(e.what()) + "; deconvolving on the CPU instead");
      cpu = makeCpuBackend();
      current = cpu.get();
      attempt.frameBudget = r.cpuFrameBudget;
    }
  }
}

}  // namespace stacklens::compute
