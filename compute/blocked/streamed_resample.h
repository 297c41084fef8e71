// Resampling (zoom) of stacks larger than memory: each input slice is zoomed in y and x on the
// backend as it is read, and z is interpolated on the host threads from a window of those slices
// around each slab of output slices. The z prefilter of cubic splines is recursive over the whole
// axis; in a window it starts `kSplineWindowMargin` slices before and after the samples a slab
// needs, where the pole (√3 − 2, |z|^24 < 1e-13) has forgotten the window's edges, so the result
// is the whole-stack run's to float rounding. At the stack's ends the window keeps SciPy's mirror
// start, as the whole-stack run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/blocked/blocked_deconvolution.h"
#include "compute/blocked/frame_fill.h"

namespace stacklens::compute {

constexpr int64_t kSplineWindowMargin = 24;

// The most output slices per slab whose host memory fits hostBudget: the window of zoomed input
// slices, the output slab, and a raw slice with its copies for each of `devices` backends
// zooming at once. Throws InvalidArgument when not even one fits.
int64_t resampleSlabSlicesFor(Shape in, const ResampleParams& p, size_t hostBudget,
                              int devices = 1);

struct StreamedResampleReport {
  int slabs = 0;
  double readSeconds = 0, computeSeconds = 0, writeSeconds = 0;  // reading and zooming: summed
  std::vector<std::string> failures;  // "device: reason" for each backend that stopped early
};

// Reads whole input slices through read, writes output slabs (whole output slices, in z order)
// through write. Throws Cancelled between slices.
StreamedResampleReport streamResample(Backend& backend, const BoxReader& read,
                                      const BoxWriter& write, Shape in, const ResampleParams& p,
                                      int64_t outSlabSlices, const Job& job = {});

// The same with the input slices a slab needs read and zoomed in y and x by several backends at
// once (one per device, each on a thread of its own); the result is the one-backend run's. A
// backend whose device fails stops and its slices go to the others (the report says so); when
// every one failed, the first failure is thrown.
StreamedResampleReport streamResample(const std::vector<Backend*>& backends, const BoxReader& read,
                                      const BoxWriter& write, Shape in, const ResampleParams& p,
                                      int64_t outSlabSlices, const Job& job = {});

}  // namespace stacklens::compute
