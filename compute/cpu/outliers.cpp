// Outlier removal on the CPU: pixels far from their local median are replaced by that median.
//
// Semantics (the CUDA backend must match these bit for bit):
// - m = the k×k median of medianFilter (reflect boundary, NaN ranked above +Inf).
// - d = double(value) − double(m), compared with the threshold in double:
//   Bright: d > threshold; Dark: −d > threshold; Both: |d| > threshold. Such a pixel becomes m;
//   every other pixel keeps its value exactly.
// - A NaN value or a NaN median makes every comparison false, so the pixel is kept (NaN stays
//   NaN). An infinite value next to a finite median is an outlier in its direction.
// - The parameters as validate(OutlierParams) (compute/params.h) checks them.
#include <cmath>
#include <string>

#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {

Image removeOutliers(const Image& in, const OutlierParams& p, const Job& job, ThreadPool& pool) {
  validate(p);
  if (in.empty()) throw InvalidArgument("outliers: the image is empty");
  // The median image becomes the output: pixels that are not outliers get their value back.
  Image out = medianFilter(in, p.size, job, pool);
  const float* src = in.data();
  float* dst = out.data();
  const double threshold = p.threshold;
  const OutlierMode mode = p.mode;
  pool.parallelFor(
      in.shape().count(),
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const double d = double(src[i]) - double(dst[i]);
          const bool outlier = mode == OutlierMode::Bright ? d > threshold
                               : mode == OutlierMode::Dark ? -d > threshold
                                                           : std::fabs(d) > threshold;
          if (!outlier) dst[i] = src[i];
        }
      },
      1 << 16);
  out.spacing = in.spacing;
  return out;
}

}  // namespace stacklens::compute::cpu
