// The live pipeline over every slice of a stack: what the viewer shows at slice z, for every z,
// streamed from a reader to a writer (File ▸ Process whole stack… with "the current pipeline").
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compute/pipeline.h"

namespace stacklens::compute {

// Reads slice z (y · x floats) into out; writes the processed slice z.
using SliceRead = std::function<void(int64_t z, float* out)>;
using SliceWrite = std::function<void(int64_t z, const float* data)>;

struct StackPipelineReport {
  std::vector<Source> sources;  // every slice's sources (Segmentation), z set to the slice
  std::vector<std::pair<int64_t, ClipStats>> statistics;  // per slice (Statistics stage)
};

// Runs pipeline at every slice z of a stack of shape volume, in order: the slab of slices
// z − h … z + h clamped to the stack (h = pipeline.slabHalfWidth()), exactly as live processing
// does, so slice z of the output is what the viewer shows at z. Each slice is read once (the
// next one on a reader thread while the current one computes) and the slices a slab needs are
// kept; write gets slice z's image when it is done, in order. A pipeline without an image stage
// writes the input (its statistics and sources are the result). Throws Cancelled (nothing more
// is written), InvalidArgument for settings that cannot run.
StackPipelineReport runPipelineOverStack(Backend& backend, const Pipeline& pipeline, Shape volume,
                                         const Spacing& spacing, const SliceRead& read,
                                         const SliceWrite& write, const Job& job = {});

}  // namespace stacklens::compute
