// One set-up of a whole-stack 3D deconvolution for stacklens-cli, the viewer and Python: what the
// caller knows in, the planned run's request out, the host memory budget split by one rule.
//
// The rule. H is the caller's host budget (--ram-budget-mb, ram_budget_mb, the viewer's), or
// defaultHostBudget() (half the machine's memory) when none is given.
//  - Frames held in host memory take half of H: the CPU backend's frames, and a GPU run's frames
//    should it fall back to the CPU. A GPU's frames take device memory (its budget), not H.
//  - The viewer keeps a quarter of H back for itself: while the job runs it goes on showing the
//    stack (raw slices, processed results, tiles, the 3D view each under budgets of their own),
//    and a job that took all of H would push those out of memory, or the machine into swap. A
//    foreground caller (the CLI, Python) is the job itself and keeps nothing back.
//  - The slabs that fill frames and take results take the rest of H.
// So on the CPU: frames H/2, slabs H/2 (foreground) or H/4 (viewer); on a GPU: slabs H
// (foreground) or 3H/4 (viewer). A run that falls back to the CPU keeps the slabs it planned.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "compute/blocked/planned_run.h"

namespace stacklens::compute {

// Who runs the job: a foreground process whose memory is the job's, or the viewer, which keeps
// showing the stack while the job runs.
enum class JobCaller { Foreground, Viewer };

// The host budget split by the rule above.
struct HostBudgetSplit {
  size_t host = 0;       // H
  size_t kept = 0;       // what the caller keeps back for itself
  size_t frames = 0;     // the frames' share of H (0 when they live in device memory)
  size_t slabs = 0;      // filling frames and emptying results
  size_t cpuFrames = 0;  // the frames' share should the run fall back to the CPU
};

// H = hostBudget, or defaultHostBudget() when none is given. framesOnHost: the backend computes in
// host memory (the CPU).
HostBudgetSplit splitHostBudget(std::optional<size_t> hostBudget, bool framesOnHost,
                                JobCaller caller);

// What the caller knows about the job.
struct WholeStackJob {
  Shape volume, psf;
  DeconvolveParams params;  // threeD is set by the set-up
  // The input's format (io::StackInfo::format; "" for an array in memory): FITS is read row band
  // by row band (an uncompressed file reads only those bytes), the others slice by slice.
  std::string format;
  // The backends that will run the blocks, all of one kind (the first names it). Each CUDA one is
  // given deviceBudget, and the smallest budget in force plans the blocks (blocks are the same
  // size on every device).
  std::vector<Backend*> backends;
  // GPUs that share the blocks when they are not all in backends yet (the viewer makes theirs
  // when the job starts); 0: backends.size(). On the CPU always one.
  int devices = 0;
  std::optional<size_t> hostBudget;  // none: defaultHostBudget()
  size_t deviceBudget = 0;  // per GPU; 0: each GPU's default (DeviceControl::setMemoryBudget)
  Shape halo{-1, -1, -1}, maxInterior{0, 0, 0};  // as PlannedRunRequest
  JobCaller caller = JobCaller::Foreground;
};

// The planned run's request for the job (budgets by the rule above). Sets each CUDA backend's
// device budget to job.deviceBudget; a caller that gave one restores the default when done.
// Throws InvalidArgument when backends is empty.
PlannedRunRequest setUpWholeStackJob(const WholeStackJob& job);

}  // namespace stacklens::compute
