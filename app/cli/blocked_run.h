// `stacklens-cli deconvolve --mode 3d`: the plan of blocks from the memory budgets, --dry-run,
// and the run, which streams (slices are read as the blocks need them, each block's interior is
// written as it finishes), so neither stack is whole in memory.
#pragma once

#include <atomic>
#include <string>

#include "app/cli/command.h"
#include "compute/params.h"

namespace stacklens::cli {

struct Deconvolve3d {
  compute::DeconvolveParams params;  // threeD set
  compute::Image psf;
  std::string outPath, history;
  const std::atomic<bool>* stop = nullptr;  // Ctrl-C
};

// Prints the plan (--dry-run) or runs it; returns the exit code.
int runDeconvolve3d(const Args& args, const Deconvolve3d& job);

}  // namespace stacklens::cli
