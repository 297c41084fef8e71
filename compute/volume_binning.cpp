#include "compute/volume_binning.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace stacklens::compute {
namespace {

int64_t binned(int64_t n, int64_t bin) { return (n + bin - 1) / bin; }

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(size_t(1) << 30));
  return text;
}

}  // namespace

int64_t volumeBinning(const Shape& s, size_t budget, int64_t maxSide) {
  const int64_t longest = std::max({s.z, s.y, s.x});
  for (int64_t bin = 1;; ++bin) {
    const double bytes =
        4.0 * double(binned(s.z, bin)) * double(binned(s.y, bin)) * double(binned(s.x, bin));
    const bool fits = bytes <= double(budget) && binned(longest, bin) <= maxSide;
    if (fits || bin >= longest) return bin;
  }
}

VolumeBinner::VolumeBinner(const Shape& stack, int64_t bin) : stack_(stack), bin_(bin) {
  shape_ = {binned(stack.z, bin), binned(stack.y, bin), binned(stack.x, bin)};
  sum_.assign(size_t(shape_.sliceCount()), 0.0);
  count_.assign(sum_.size(), 0);
  volume_ = Image::hostUninitialized(shape_);
}

void VolumeBinner::add(int64_t z, const float* slice) {
  for (int64_t y = 0; y < stack_.y; ++y) {
    const float* row = slice + y * stack_.x;
    double* sums = sum_.data() + (y / bin_) * shape_.x;
    int32_t* counts = count_.data() + (y / bin_) * shape_.x;
    for (int64_t x = 0; x < stack_.x; ++x)
      if (std::isfinite(row[x])) sums[x / bin_] += row[x], ++counts[x / bin_];
  }
  if ((z + 1) % bin_ == 0 || z + 1 == stack_.z) flush(z / bin_);
}

void VolumeBinner::flush(int64_t k) {
  float* out = volume_.slice(k);
  for (size_t i = 0; i < sum_.size(); ++i)
    out[i] = count_[i] ? float(sum_[i] / count_[i]) : std::numeric_limits<float>::quiet_NaN();
  std::fill(sum_.begin(), sum_.end(), 0.0);
  std::fill(count_.begin(), count_.end(), 0);
}

Image VolumeBinner::finish(const Spacing& spacing, float* low, float* high) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  float* v = volume_.data();
  for (int64_t i = 0; i < shape_.count(); ++i)
    if (std::isfinite(v[i])) lo = std::min(lo, v[i]), hi = std::max(hi, v[i]);
  if (!(lo <= hi)) lo = hi = 0;
  for (int64_t i = 0; i < shape_.count(); ++i)
    if (!std::isfinite(v[i])) v[i] = lo;
  *low = lo, *high = hi;
  const double b = double(bin_);
  volume_.spacing = {spacing.z * b, spacing.y * b, spacing.x * b, spacing.known, spacing.unit};
  return volume_;
}

std::string VolumeBinner::note(size_t budget) const {
  if (bin_ == 1) return {};
  return "drawn from a copy binned " + std::to_string(bin_) + "× along each axis (" +
         std::to_string(shape_.z) + " × " + std::to_string(shape_.y) + " × " +
         std::to_string(shape_.x) + "): the whole stack needs " +
         gib(4.0 * double(stack_.count())) + ", the view " + gib(double(budget)) + " at most";
}

}  // namespace stacklens::compute
