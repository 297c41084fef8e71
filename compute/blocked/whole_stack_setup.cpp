// setUpWholeStackJob: the host budget split by its one rule, the device budgets, the request.
#include "compute/blocked/whole_stack_setup.h"

#include <algorithm>
#include <cstdint>

namespace stacklens::compute {

HostBudgetSplit splitHostBudget(std::optional<size_t> hostBudget, bool framesOnHost,
                                JobCaller caller) {
  HostBudgetSplit s;
  s.host = hostBudget ? *hostBudget : defaultHostBudget();
  s.kept = caller == JobCaller::Viewer ? s.host / 4 : 0;
  s.cpuFrames = s.host / 2;
  s.frames = framesOnHost ? s.cpuFrames : 0;
  s.slabs = s.host - s.kept - s.frames;
  return s;
}

PlannedRunRequest setUpWholeStackJob(const WholeStackJob& job) {
  if (job.backends.empty()) throw InvalidArgument("whole-stack job: no backend to run on");
  const bool cuda = job.backends.front()->name() == "cuda";
  const HostBudgetSplit split = splitHostBudget(job.hostBudget, !cuda, job.caller);
  PlannedRunRequest r;
  r.volume = job.volume;
  r.psf = job.psf;
  r.halo = job.halo;
  r.maxInterior = job.maxInterior;
  r.params = job.params;
  r.params.threeD = true;
  r.wholeSlices = job.format != "fits";
  r.slabBudget = split.slabs;
  r.cpuFrameBudget = split.cpuFrames;
  r.frameBudget = split.frames;
  r.devices = 1;
  if (cuda) {
    r.frameBudget = SIZE_MAX;
    for (Backend* backend : job.backends)
      r.frameBudget = std::min(r.frameBudget, backend->device().setMemoryBudget(job.deviceBudget));
    r.devices = job.devices ? job.devices : static_cast<int>(job.backends.size());
  }
  return r;
}

}  // namespace stacklens::compute
