// planAndDeconvolve: plan, run, and on running out of device memory, smaller blocks, then the CPU.
#include "compute/blocked/planned_run.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>

#include "compute/blocked/exchange_plan.h"

namespace stacklens::compute {
namespace {

// Keeps the backend from falling back to the CPU on its own while the run lasts: a block that
// does not fit is better cut smaller than deconvolved on the CPU.
struct NoCpuFallback {
  Backend& backend;
  explicit NoCpuFallback(Backend& b) : backend(b) { backend.device().setCpuFallback(false); }
  ~NoCpuFallback() { backend.device().setCpuFallback(true); }
};

std::string mebibytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
  return text;
}

}  // namespace

BlockPlan planRun(const PlannedRunRequest& r, const std::string& backend) {
  const FrameCosts costs = frameCosts(backend, r.params);
  if (r.resident) {
    std::optional<BlockPlan> resident =
        planResident(r.volume, r.psf, r.params, costs, r.frameBudget, r.maxInterior);
    if (!resident)
      throw InvalidArgument("blocked deconvolution: no blocks with resident frames fit " +
                            mebibytes(r.frameBudget));
    planSlabs(*resident, r.slabBudget, r.wholeSlices);
    return std::move(*resident);
  }
  BlockPlan plan = planBlocks(r.volume, r.psf, r.params, costs, r.frameBudget, r.halo,
                              r.maxInterior, r.devices, r.oneBlock);
  // On the CPU, blocks that exchange halos every iteration give the unblocked run's result
  // (overlapping ones differ near the seams): they are planned whenever their whole-domain
  // arrays and a frame fit the same budget. A halo asked for is the overlapping blocks' (the
  // exchanging ones take what one iteration reads): it keeps them.
  const bool haloAsked = r.halo.z >= 0 || r.halo.y >= 0 || r.halo.x >= 0;
  if (backend == "cpu" && plan.count() > 1 && r.devices == 1 && !haloAsked) {
    if (std::optional<BlockPlan> exchange =
            planExchange(r.volume, r.psf, r.params, costs, r.frameBudget, r.maxInterior))
      plan = std::move(*exchange);
    else
      plan.exchangeBudget = exchangeDomainBytes(r.volume, r.psf, r.params);
  }
  planSlabs(plan, r.slabBudget, r.wholeSlices);
  return plan;
}

PlannedRunResult planAndDeconvolve(Backend& backend, const PlannedRunRequest& r,
                                   const ReaderForPlan& readerFor, const BoxWriter& write,
                                   const Image& psf, const Job& job,
                                   const std::function<void(const std::string&)>& note,
                                   const std::function<void(const BlockPlan&)>& planned) {
  PlannedRunRequest one = r;
  one.devices = 1;
  return planAndDeconvolve(std::vector<Backend*>{&backend}, one, readerFor, write, psf, job, note,
                           planned);
}

PlannedRunResult planAndDeconvolve(const std::vector<Backend*>& backends,
                                   const PlannedRunRequest& r, const ReaderForPlan& readerFor,
                                   const BoxWriter& write, const Image& psf, const Job& job,
                                   const std::function<void(const std::string&)>& note,
                                   const std::function<void(const BlockPlan&)>& planned) {
  if (backends.empty()) throw InvalidArgument("blocked deconvolution: no backend to run on");
  std::vector<std::unique_ptr<NoCpuFallback>> guards;
  for (Backend* b : backends) guards.push_back(std::make_unique<NoCpuFallback>(*b));
  std::unique_ptr<Backend> cpu;
  std::vector<Backend*> current = backends;
  PlannedRunRequest attempt = r;  // its frame budget shrinks on each fall-back
  attempt.devices = static_cast<int>(backends.size());
  std::atomic<bool> written{false};
  const BoxWriter watched = [&](const Box& box, const float* data) {
    written = true;
    write(box, data);
  };
  for (int halvings = 0;;) {
    PlannedRunResult result;
    result.plan = planRun(attempt, current.front()->name());
    if (planned) planned(result.plan);
    try {
      result.report = deconvolveBlocked(current, readerFor(result.plan), watched, psf, r.params,
                                        result.plan, job);
      result.backend = current.front()->name();
      return result;
    } catch (const OutOfDeviceMemory& e) {
      // Results already written came from this plan's blocks; another plan's would not match.
      if (written || cpu) throw;
      if (attempt.oneBlock || attempt.resident) {
        attempt.oneBlock = attempt.resident = false;
        if (note)
          note(std::string(e.what()) +
               "; overlapping blocks instead (near the seams the result may differ from an "
               "unblocked run's)");
        continue;
      }
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
      current = {cpu.get()};
      attempt.frameBudget = r.cpuFrameBudget;
      attempt.devices = 1;
    }
  }
}

}  // namespace stacklens::compute
