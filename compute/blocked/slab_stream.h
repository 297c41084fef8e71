// Local operations (blur, median, outlier removal) on stacks larger than memory: the stack goes
// through the operation a slab of slices at a time. Each slab is read with `reach` slices of real
// data on each side (fewer at the stack's faces, where the operation applies its own boundary
// rule, as on the whole stack) and only the slab's own slices are kept: with reach at least the
// operation's reach along z the result is the whole-stack run's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/blocked/blocked_deconvolution.h"

namespace stacklens::compute {

using SlabOperation = std::function<Image(Backend&, const Image&)>;

struct SlabStreamReport {
  int slabs = 0;
  double readSeconds = 0, computeSeconds = 0, writeSeconds = 0;  // summed over the backends
  std::vector<std::string> failures;  // "device: reason" for each backend that stopped early
};

// The most slices per slab whose host memory fits hostBudget: the slab and its reach read, the
// next one read ahead, the result, and as much again where the backend computes. Throws
// InvalidArgument when not even one slice fits.
int64_t slabSlicesFor(Shape volume, int64_t reach, size_t hostBudget);

// Reads whole slices through read (boxes [z0, z1) × all rows × all columns; the next slab is read
// on another thread while one is processed), writes each slab's own slices through write (in z
// order). Throws Cancelled between slabs.
SlabStreamReport streamSlabs(Backend& backend, const BoxReader& read, const BoxWriter& write,
                             Shape volume, int64_t reach, int64_t slabSlices,
                             const SlabOperation& operation, const Job& job = {});

// The same on several backends (one per device), each on a thread of its own taking the next
// slab from one queue: slabs are written in any order, from several threads at once. A backend
// whose device fails hands its slab back and stops; the others go on (the report's `failures`
// says which stopped and why). A read or write error, or Cancelled, stops them all; when every
// backend failed the first failure is thrown. Host memory: each backend holds one slab, its
// reach and its result at a time (give slabSlicesFor a share of the budget).
SlabStreamReport streamSlabs(const std::vector<Backend*>& backends, const BoxReader& read,
                             const BoxWriter& write, Shape volume, int64_t reach,
                             int64_t slabSlices, const SlabOperation& operation,
                             const Job& job = {});

}  // namespace stacklens::compute
