// runPipelineOverStack: a window of raw slices slides along z; each position's slab runs the
// pipeline and its centre slice goes to the writer.
#include "compute/pipeline_over_stack.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <map>

namespace stacklens::compute {
namespace {

// Raw slices by index, read one ahead on another thread.
class SliceWindow {
 public:
  SliceWindow(Shape volume, const SliceRead& read) : volume_(volume), read_(read) {}
  ~SliceWindow() {
    if (ahead_.valid()) ahead_.wait();
  }

  const Image& at(int64_t z) {
    if (auto it = slices_.find(z); it != slices_.end()) return it->second;
    if (ahead_.valid() && aheadZ_ == z) {
      slices_.emplace(z, ahead_.get());
    } else {
      if (ahead_.valid()) ahead_.wait();
      slices_.emplace(z, readSlice(z));
    }
    return slices_.at(z);
  }
  // Starts reading slice z unless it is kept or outside the stack.
  void readAhead(int64_t z) {
    if (z < 0 || z >= volume_.z || slices_.count(z) || (ahead_.valid() && aheadZ_ == z)) return;
    if (ahead_.valid()) ahead_.wait();
    aheadZ_ = z;
    ahead_ = std::async(std::launch::async, [this, z] { return readSlice(z); });
  }
  void dropBelow(int64_t z) { slices_.erase(slices_.begin(), slices_.lower_bound(z)); }

 private:
  Image readSlice(int64_t z) const {
    Image slice = Image::hostUninitialized({1, volume_.y, volume_.x});
    read_(z, slice.data());
    return slice;
  }

  Shape volume_;
  const SliceRead& read_;
  std::map<int64_t, Image> slices_;
  std::future<Image> ahead_;
  int64_t aheadZ_ = -1;
};

bool hasImageStage(const Pipeline& p) {
  return p.outliers.enabled || p.median.enabled || p.blur.enabled || p.deconvolution.enabled;
}

}  // namespace

StackPipelineReport runPipelineOverStack(Backend& backend, const Pipeline& pipeline, Shape volume,
                                         const Spacing& spacing, const SliceRead& read,
                                         const SliceWrite& write, const Job& job) {
  pipeline.validate();
  if (!pipeline.anyEnabled())
    throw InvalidArgument("the pipeline has no stage enabled: nothing to run over the stack");
  if (volume.empty()) throw InvalidArgument("the stack is empty");
  const int64_t half = pipeline.slabHalfWidth();
  const int64_t sliceCount = volume.sliceCount();
  StackPipelineReport report;
  SliceWindow window(volume, read);
  for (int64_t z = 0; z < volume.z; ++z) {
    job.checkCancelled();
    const int64_t z0 = std::max<int64_t>(0, z - half);
    const int64_t z1 = std::min<int64_t>(volume.z - 1, z + half);
    Image slab = Image::hostUninitialized({z1 - z0 + 1, volume.y, volume.x});
    slab.spacing = spacing;
    for (int64_t k = z0; k <= z1; ++k)
      std::memcpy(slab.slice(k - z0), window.at(k).data(),
                  static_cast<size_t>(sliceCount) * sizeof(float));
    window.dropBelow(z1 + 1 - 2 * half);  // the next slab starts at z + 1 − half
    window.readAhead(z1 + 1);
    const Job sub(job.cancelFlag(), [&job, z, &volume](double f) {
      job.report((static_cast<double>(z) + std::clamp(f, 0.0, 1.0)) /
                 static_cast<double>(volume.z));
    });
    PipelineResult r = runPipeline(backend, slab, z - z0, pipeline, sub);
    if (r.statistics) report.statistics.emplace_back(z, *r.statistics);
    if (r.segmentation)
      for (Source s : r.segmentation->sources) {
        s.z = z;
        report.sources.push_back(s);
      }
    write(z, hasImageStage(pipeline) ? r.image.data() : slab.slice(z - z0));
    job.report(static_cast<double>(z + 1) / static_cast<double>(volume.z));
  }
  return report;
}

}  // namespace stacklens::compute
