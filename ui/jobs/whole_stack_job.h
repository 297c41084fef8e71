// "Process whole stack": the current pipeline at every slice (what the viewer shows), or 3D
// Richardson–Lucy over the whole volume in blocks when it does not fit the memory budget
// (compute/blocked/), from an open stack into a new file. Plain C++, run off the GUI thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/blocked/block_plan.h"
#include "compute/pipeline.h"
#include "io/stack.h"

namespace stacklens::ui {

struct WholeStackRequest {
  std::shared_ptr<const io::StackReader> reader;
  compute::Image psf;                // host, 3D (or 2D: one slice deep)
  compute::DeconvolveParams params;  // threeD is set by the job
  std::string outPath;
  // When set, this pipeline runs at every slice instead (psf and params are then unused); its
  // statistics and sources go to side tables (sideTablePath).
  std::optional<compute::Pipeline> pipeline;
  // 3D Richardson–Lucy on CUDA: the GPUs that share the blocks (compute/device_list.h), each with
  // a backend of its own; empty or one: the backend the job is given, alone.
  std::vector<int> devices;
};

// "<folder>/<name of outPath without extension>_<table>.csv", e.g. out_sources.csv.
std::string sideTablePath(const std::string& outPath, const std::string& table);

// What the job will do, for its dialog: the plan of blocks (3D RL), or the pipeline's stages
// and slab (pipeline).
std::string describeWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                               size_t ramBudget = 0);

// The plan the job will follow on this backend, its budgets by compute's rule for the viewer
// (compute/blocked/whole_stack_setup.h; the host budget is ramBudget, or half the machine's
// memory): frames within the GPU's budget or on the CPU half the host budget, the slices one
// block reads within what is left after the frames and the quarter the viewer keeps, the PSF's
// halo.
compute::BlockPlan planWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                                  size_t ramBudget = 0);

struct WholeStackProgress {
  std::string phase;    // "reading", "deconvolving", "writing"
  double fraction = 0;  // of the whole job
};

// Deconvolves the stack in blocks (one when it fits), reading slices as the blocks need them
// and writing each block's interior as it finishes (FITS or TIFF, io::StackBlockWriter), or
// runs the pipeline slice by slice (compute::runPipelineOverStack); the file appears at outPath
// when complete, with the input's header and HISTORY cards saying what was done. Throws
// compute::Cancelled when cancel is set (nothing is written), io::IoError,
// compute::InvalidArgument.
void runWholeStack(const WholeStackRequest& request, compute::Backend& backend,
                   const std::atomic<bool>* cancel,
                   const std::function<void(const WholeStackProgress&)>& progress,
                   size_t ramBudget = 0);

}  // namespace stacklens::ui
