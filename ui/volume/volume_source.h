// The 3D view's volume: the open stack's slices, raw or as the current pipeline shows them, in
// one float32 block on the host, binned to fit a byte budget and a largest side (the GPU's or
// OpenGL's 3D textures). Plain C++, run off the GUI thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "compute/backend.h"
#include "compute/pipeline.h"
#include "io/stack.h"

namespace stacklens::ui {

struct VolumeRequest {
  std::shared_ptr<const io::StackReader> reader;
  std::optional<compute::Pipeline> pipeline;  // set: each slice as this pipeline shows it
  size_t budget = size_t(2) << 30;            // bytes the volume may take
  int64_t maxSide = 2048;                     // voxels along any axis at most
};

struct LoadedVolume {
  // (z, y, x) float32 with the stack's spacing times the binning; NaN voxels (blank) are set to
  // the smallest finite value, so that they draw as the faintest matter, not as holes.
  compute::Image volume;
  int64_t bin = 1;          // voxels of the stack per voxel of the volume along each axis
  float low = 0, high = 0;  // its finite range
  std::string note;         // for the view: what was binned and why (empty when nothing was)
};

// Reads (and processes, on backend) the stack into the volume, binned to the request's budget by
// compute/volume_binning.h. Throws compute::Cancelled, io::IoError, compute::InvalidArgument.
LoadedVolume loadVolume(const VolumeRequest& request, compute::Backend& backend,
                        const std::atomic<bool>* cancel,
                        const std::function<void(double)>& progress);

}  // namespace stacklens::ui
