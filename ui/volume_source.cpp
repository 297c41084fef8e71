#include "ui/volume_source.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "compute/pipeline_over_stack.h"

namespace stacklens::ui {
namespace {

int64_t binned(int64_t n, int64_t bin) { return (n + bin - 1) / bin; }

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(size_t(1) << 30));
  return text;
}

// Adds slices into the volume's block sums; finish() turns them into means.
class Binner {
 public:
  Binner(const io::StackInfo& info, int64_t bin) : info_(info), bin_(bin) {
    shape_ = {binned(info.z, bin), binned(info.y, bin), binned(info.x, bin)};
    sum_.assign(size_t(shape_.sliceCount()), 0.0);
    count_.assign(sum_.size(), 0);
    volume_ = compute::Image::hostUninitialized(shape_);
  }
  void add(int64_t z, const float* slice) {
    for (int64_t y = 0; y < info_.y; ++y) {
      const float* row = slice + y * info_.x;
      double* sums = sum_.data() + (y / bin_) * shape_.x;
      int32_t* counts = count_.data() + (y / bin_) * shape_.x;
      for (int64_t x = 0; x < info_.x; ++x)
        if (std::isfinite(row[x])) sums[x / bin_] += row[x], ++counts[x / bin_];
    }
    if ((z + 1) % bin_ == 0 || z + 1 == info_.z) flush(z / bin_);
  }
  compute::Image finish(float* low, float* high) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    float* v = volume_.data();
    for (int64_t i = 0; i < shape_.count(); ++i)
      if (std::isfinite(v[i])) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
    if (!(lo <= hi)) lo = hi = 0;
    for (int64_t i = 0; i < shape_.count(); ++i)
      if (!std::isfinite(v[i])) v[i] = lo;
    *low = lo, *high = hi;
    return volume_;
  }

 private:
  void flush(int64_t k) {
    float* out = volume_.slice(k);
    for (size_t i = 0; i < sum_.size(); ++i)
      out[i] = count_[i] ? float(sum_[i] / count_[i]) : std::numeric_limits<float>::quiet_NaN();
    std::fill(sum_.begin(), sum_.end(), 0.0);
    std::fill(count_.begin(), count_.end(), 0);
  }

  const io::StackInfo& info_;
  int64_t bin_;
  compute::Shape shape_;
  std::vector<double> sum_;
  std::vector<int32_t> count_;
  compute::Image volume_;
};

}  // namespace

int64_t volumeBinning(const io::StackInfo& info, size_t budget, int64_t maxSide) {
  const int64_t longest = std::max({info.z, info.y, info.x});
  for (int64_t bin = 1;; ++bin) {
    const double bytes = 4.0 * double(binned(info.z, bin)) * double(binned(info.y, bin)) *
                         double(binned(info.x, bin));
    const bool fits = bytes <= double(budget) && binned(longest, bin) <= maxSide;
    if (fits || bin >= longest) return bin;
  }
}

LoadedVolume loadVolume(const VolumeRequest& r, compute::Backend& backend,
                        const std::atomic<bool>* cancel,
                        const std::function<void(double)>& progress) {
  const io::StackInfo& info = r.reader->info();
  const compute::Job job(cancel, progress);
  LoadedVolume loaded;
  loaded.bin = volumeBinning(info, r.budget, r.maxSide);
  Binner binner(info, loaded.bin);
  // As the ortho views: the voxels' aspect only where the file states a spacing.
  const bool known = info.spacingKnown;
  const compute::Spacing spacing{known ? info.spacing[0] : 1.0, known ? info.spacing[1] : 1.0,
                                 known ? info.spacing[2] : 1.0, known, info.units[2]};
  if (r.pipeline) {
    compute::runPipelineOverStack(
        backend, *r.pipeline, {info.z, info.y, info.x}, spacing,
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
  loaded.volume = binner.finish(&loaded.low, &loaded.high);
  const double b = double(loaded.bin);
  loaded.volume.spacing = {spacing.z * b, spacing.y * b, spacing.x * b, spacing.known,
                           spacing.unit};
  if (loaded.bin > 1) {
    const compute::Shape s = loaded.volume.shape();
    loaded.note = "drawn from a copy binned " + std::to_string(loaded.bin) + "× along each axis (" +
                  std::to_string(s.z) + " × " + std::to_string(s.y) + " × " + std::to_string(s.x) +
                  "): the whole stack needs " +
                  gib(4.0 * double(info.z) * double(info.y) * double(info.x)) + ", the view " +
                  gib(double(r.budget)) + " at most";
  }
  return loaded;
}

}  // namespace stacklens::ui
