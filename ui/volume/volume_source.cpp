#include "ui/volume/volume_source.h"

#include <vector>

#include "compute/pipeline_over_stack.h"
#include "compute/volume_binning.h"

namespace stacklens::ui {

LoadedVolume loadVolume(const VolumeRequest& r, compute::Backend& backend,
                        const std::atomic<bool>* cancel,
                        const std::function<void(double)>& progress) {
  const io::StackInfo& info = r.reader->info();
  const compute::Shape stack{info.z, info.y, info.x};
  const compute::Job job(cancel, progress);
  compute::VolumeBinner binner(stack, compute::volumeBinning(stack, r.budget, r.maxSide));
  // As the ortho views: the voxels' aspect only where the file states a spacing.
  const bool known = info.spacingKnown;
  const compute::Spacing spacing{known ? info.spacing[0] : 1.0, known ? info.spacing[1] : 1.0,
                                 known ? info.spacing[2] : 1.0, known, info.units[2]};
  if (r.pipeline) {
    compute::runPipelineOverStack(
        backend, *r.pipeline, stack, spacing,
        [&](int64_t z, float* out) { r.reader->readSlice(z, out); },
        [&](int64_t z, const float* data) { binner.add(z, data); }, job);
  } else {
    std::vector<float> slice(size_t(info.y * info.x));
    for (int64_t z = 0; z < info.z; ++z) {
      job.checkCancelled();
      r.reader->readSlice(z, slice.data());
      binner.add(z, slice.data());
      job.report(double(z + 1) / double(info.z));
    }
  }
  LoadedVolume loaded;
  loaded.bin = binner.bin();
  loaded.volume = binner.finish(spacing, &loaded.low, &loaded.high);
  loaded.note = binner.note(r.budget);
  return loaded;
}

}  // namespace stacklens::ui
