// Planning and running a whole-stack 3D deconvolution with the fall-backs a long run needs: when
// the GPU cannot hold the planned blocks (another program took memory, the estimate was short),
// smaller blocks, and at last the CPU.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compute/blocked/blocked_deconvolution.h"

namespace stacklens::compute {

struct PlannedRunRequest {
  Shape volume, psf;
  // As planBlocks; a halo (any axis ≥ 0) asks for overlapping blocks with it.
  Shape halo{-1, -1, -1}, maxInterior{0, 0, 0};
  DeconvolveParams params;
  size_t frameBudget = 0;     // memory for a block's frames on the backend
  size_t slabBudget = 0;      // host memory for filling and emptying frames (planSlabs)
  bool wholeSlices = true;    // the reader reads whole slices (planSlabs)
  size_t cpuFrameBudget = 0;  // frames when the run falls back to the CPU
  int devices = 1;            // backends that run blocks at once (each with frameBudget)
  // The unblocked run's one block only (compute/blocked/seam_policy.h chose it for its seams);
  // should the device run out of memory, overlapping blocks after all, as said through note.
  bool oneBlock = false;
  // Blocks whose frames stay on the device and exchange halos there (planResident), chosen by
  // the same rule; out of memory, overlapping blocks after all.
  bool resident = false;
};

struct PlannedRunResult {
  BlockPlan plan;  // the plan that ran
  BlockedRunReport report;
  std::string backend;  // the backend that ran it
};

// The plan a request gets on a backend (planBlocks with its frame costs, then planSlabs). On the
// CPU, when the blocks' frames do not hold the unblocked run and no halo is asked for, blocks
// that exchange halos (planExchange) if their arrays fit the frame budget, so that the result is
// the unblocked run's.
BlockPlan planRun(const PlannedRunRequest& request, const std::string& backend);

// The reader for a plan (a slice reader keeps the slices one slab reads).
using ReaderForPlan = std::function<BoxReader(const BlockPlan&)>;

// Plans for `backend` and runs. When the backend runs out of device memory before any result
// was written, plans again with half the budget (three times at most), then runs on a CPU
// backend; each step is said through note. planned (optional) sees each plan before it runs.
PlannedRunResult planAndDeconvolve(Backend& backend, const PlannedRunRequest& request,
                                   const ReaderForPlan& readerFor, const BoxWriter& write,
                                   const Image& psf, const Job& job,
                                   const std::function<void(const std::string&)>& note,
                                   const std::function<void(const BlockPlan&)>& planned = {});

// The same on several backends of one kind (one per device; request.devices is their number).
// A device that fails hands its blocks to the others; only when all fail before any result was
// written do the fall-backs above apply.
PlannedRunResult planAndDeconvolve(const std::vector<Backend*>& backends,
                                   const PlannedRunRequest& request, const ReaderForPlan& readerFor,
                                   const BoxWriter& write, const Image& psf, const Job& job,
                                   const std::function<void(const std::string&)>& note,
                                   const std::function<void(const BlockPlan&)>& planned = {});

}  // namespace stacklens::compute
