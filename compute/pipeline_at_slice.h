// The live pipeline at one slice of a stack, as the viewer's worker runs it when the slices are
// not kept on the backend: the slab around z (clamped to the stack) read through read(k, out),
// then the pipeline on one backend, on two compared stage by stage, or timed over repeats.
#pragma once

#include <cstdint>
#include <optional>

#include "compute/pipeline.h"
#include "compute/pipeline_over_stack.h"

namespace stacklens::compute {

struct SliceRunRequest {
  Shape volume;  // the stack's
  Spacing spacing;
  int64_t z = 0;
  Backend* primary = nullptr;
  Backend* secondary = nullptr;  // set: Compare (every stage of both, and their differences)
  int repeats = 0;               // > 0: a benchmark of that many runs, transfers measured
};

struct SliceRun {
  PipelineResult result;                 // the primary backend's
  std::optional<Comparison> comparison;  // with a secondary backend
  Image raw;                             // slice z as read (host)
};

// Throws InvalidArgument (no primary backend, z outside the stack), Cancelled, or what read and
// the backends throw.
SliceRun runPipelineAtSlice(const Pipeline& pipeline, const SliceRunRequest& request,
                            const SliceRead& read, const Job& job = {});

}  // namespace stacklens::compute
