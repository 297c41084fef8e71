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

PlannedRunResult planAndDeconvolve(Backend& backend, const PlannedRunRequest& r,
                                   const BoxReader& read, const BoxWriter& write, const Image& psf,
                                   const Job& job,
                                   const std::function<void(const std::string&)>& note,
                                   const std::function<void(const BlockPlan&)>& planned) {
  const NoCpuFallback guard(backend);
  std::unique_ptr<Backend> cpu;
  Backend* current = &backend;
  size_t budget = r.frameBudget;
  std::atomic<bool> written{false};
  const BoxWriter watched = [&](const Box& box, const float* data) {
    written = true;
    write(box, data);
  };
  for (int halvings = 0;;) {
    PlannedRunResult result;
    result.plan = planBlocks(r.volume, r.psf, r.params, frameCosts(current->name(), r.params),
                             budget, r.halo, r.maxInterior);
    planSlabs(result.plan, r.slabBudget, r.wholeSlices);
    if (planned) planned(result.plan);
    try {
      result.report = deconvolveBlocked(*current, read, watched, psf, r.params, result.plan, job);
      result.backend = current->name();
      return result;
    } catch (const OutOfDeviceMemory& e) {
      // Results already written came from this plan's blocks; another plan's would not match.
      if (written || current != &backend) throw;
      if (halvings < 3 && budget / 2 > 0) {
        ++halvings;
        budget /= 2;
        if (note)
          note(std::string(e.what()) + "; planning smaller blocks for " + mebibytes(budget));
        continue;
      }
      if (note) note(std::string(e.what()) + "; deconvolving on the CPU instead");
      cpu = makeCpuBackend();
      current = cpu.get();
      budget = r.cpuFrameBudget;
    }
  }
}

}  // namespace stacklens::compute
