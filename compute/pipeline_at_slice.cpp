// A benchmark with a second backend compares once (the differences) and then times each backend
// on its own, so that neither's timing includes the other's.
#include "compute/pipeline_at_slice.h"

#include <algorithm>
#include <string>

namespace stacklens::compute {

SliceRun runPipelineAtSlice(const Pipeline& pipeline, const SliceRunRequest& r,
                            const SliceRead& read, const Job& job) {
  if (!r.primary) throw InvalidArgument("no processing backend is chosen");
  if (r.z < 0 || r.z >= r.volume.z)
    throw InvalidArgument("slice " + std::to_string(r.z) + " is outside the stack");
  const int64_t half = pipeline.slabHalfWidth();
  const int64_t z0 = std::max<int64_t>(0, r.z - half);
  const int64_t z1 = std::min<int64_t>(r.volume.z - 1, r.z + half);
  Image slab = Image::host({z1 - z0 + 1, r.volume.y, r.volume.x});
  slab.spacing = r.spacing;
  for (int64_t k = z0; k <= z1; ++k) {
    job.checkCancelled();
    read(k, slab.slice(k - z0));
  }
  const int64_t centre = r.z - z0;
  SliceRun run;
  if (r.secondary)
    run.comparison = compareBackends(*r.primary, *r.secondary, slab, centre, pipeline, job);
  if (r.repeats > 0) {
    RunOptions options;
    options.measureTransfers = true;
    run.result = benchmarkPipeline(*r.primary, slab, centre, pipeline, r.repeats, job, options);
    if (run.comparison) {
      run.comparison->a = run.result;
      run.comparison->b =
          benchmarkPipeline(*r.secondary, slab, centre, pipeline, r.repeats, job, options);
    }
  } else if (run.comparison) {
    run.result = run.comparison->a;
  } else {
    run.result = runPipeline(*r.primary, slab, centre, pipeline, job);
  }
  run.raw = cloneHost(sliceView(slab, centre));
  return run;
}

}  // namespace stacklens::compute
