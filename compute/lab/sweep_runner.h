// Runs a sweep: every op at every size on every variant, with a warm-up, repeats, the floor and
// the CPU–GPU comparison, reporting each point as it is measured.
#pragma once

#include <atomic>
#include <functional>

#include "compute/lab/sweep.h"

namespace stacklens::compute::lab {

struct SweepCallbacks {
  // The machine (CPU, GPU or why none), once, before the first point: a figure can name it
  // while the sweep runs.
  std::function<void(const Machine&)> machine;
  // Each point as soon as it is measured (called on the sweep's thread).
  std::function<void(const Point&)> point;
  // Points done out of the total planned, after each point.
  std::function<void(int done, int total)> progress;
  // Polled between repeats and points: when it turns true the sweep stops and returns the
  // points so far with Sweep::cancelled set.
  const std::atomic<bool>* cancel = nullptr;
};

// Validates spec (throws InvalidParameter), then measures. Without a usable GPU (or with
// spec.gpu false) it gives the CPU variants only and Machine::note says why. A point that fails
// (e.g. out of memory at the largest size) is kept with its error and the sweep goes on.
Sweep runSweep(const SweepSpec& spec, const SweepCallbacks& callbacks = {});

// The number of points runSweep plans for spec on a machine with or without a GPU.
int plannedPoints(const SweepSpec& spec, bool withGpu);

}  // namespace stacklens::compute::lab
