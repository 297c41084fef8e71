// Median filter and outlier removal on the GPU, 2D per slice with scipy's reflect boundary:
// 3×3 and 5×5 windows by min/max networks in registers that share the work of overlapping windows
// (each thread walks down a column, or two: 5×5 always, 3×3 on even widths); larger windows by a
// 32-step radix (bitwise) selection. Kernels: kernels/median.cuh; launch shapes: tuning/median.cuh.
#include <cmath>
#include <cstdint>
#include <string>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/median.cuh"
#include "compute/cuda/tuning/median.cuh"

namespace stacklens::compute::cuda {
namespace {

Image medianOrOutliers(const ContextPtr& ctx, const Image& input, int size, OutlierRule rule,
                       const Job& job) {
  if (input.empty()) throw InvalidArgument("median filter: the image is empty");
  if (input.shape().y > INT32_MAX / 2 || input.shape().x > INT32_MAX / 2)
    throw InvalidArgument("median filter: the slices are too large");
  Image in = onDevice(ctx, input);
  const Shape s = in.shape();
  Image out = deviceBuffer<float>(ctx, s);
  out.spacing = in.spacing;
  int half = size / 2;
  dim3 block(kTileX, kTileY);
  // Slices go in groups (grid z is limited, and cancellation is checked between groups).
  const int64_t group = 65535;
  for (int64_t z0 = 0; z0 < s.z; z0 += group) {
    job.checkCancelled();
    unsigned nz = static_cast<unsigned>(std::min(group, s.z - z0));
    dim3 grid(blocksFor(s.x, kTileX), blocksFor(s.y, kTileY), nz);
    if (size == 1 && !rule.enabled) {
      SL_CUDA(cudaMemcpyAsync(out.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice,
                              ctx->stream()));
      break;
    }
    if (size == 3) {
      dim3 strips(blocksFor(s.x, kStripThreads), blocksFor(s.y, kStripRows), nz);
      // Two columns per thread where rows are 8-byte aligned: one 8-byte load and store for two
      // outputs.
      const bool pairs = s.x % 2 == 0 && reinterpret_cast<uintptr_t>(in.data()) % 8 == 0 &&
                         reinterpret_cast<uintptr_t>(out.data()) % 8 == 0;
      if (pairs) {
        dim3 pairs(blocksFor(s.x / 2, kStripThreads), blocksFor(s.y, kStripRows), nz);
        median3x3Pairs<<<pairs, kStripThreads, 0, ctx->stream()>>>(in.data(), out.data(), int(s.y),
                                                                   int(s.x), int(z0), rule);
      } else {
        median3x3<<<strips, kStripThreads, 0, ctx->stream()>>>(in.data(), out.data(), int(s.y),
                                                               int(s.x), int(z0), rule);
      }
    } else if (size == 5) {
      // Two columns per thread; rows read and written as float2 where they are 8-byte aligned.
      const bool pairedRows = s.x % 2 == 0 && reinterpret_cast<uintptr_t>(in.data()) % 8 == 0 &&
                              reinterpret_cast<uintptr_t>(out.data()) % 8 == 0;
      dim3 strips(blocksFor((s.x + 1) / 2, kMedian5Threads), blocksFor(s.y, kMedian5Rows), nz);
      median5x5<<<strips, kMedian5Threads, 0, ctx->stream()>>>(in.data(), out.data(), int(s.y),
                                                               int(s.x), int(z0), pairedRows, rule);
    } else
      medianLarge<<<grid, block, 0, ctx->stream()>>>(in.data(), out.data(), s.y, s.x, z0, half,
                                                     rule);
    SL_LAUNCHED();
    job.report(double(z0 + nz) / double(s.z));
  }
  return out;
}

}  // namespace

void checkMedianSize(int size) {
  validateMedianSize(size);
  // The kernels' own limit, below the parameter's.
  if (size > 255) throw InvalidArgument("median size must be at most 255 on the GPU");
}

Image medianFilter(const ContextPtr& ctx, const Image& in, int size, const Job& job) {
  checkMedianSize(size);
  return medianOrOutliers(ctx, in, size, OutlierRule{}, job);
}

Image removeOutliers(const ContextPtr& ctx, const Image& in, const OutlierParams& p,
                     const Job& job) {
  validate(p);
  checkMedianSize(p.size);
  OutlierRule rule;
  rule.enabled = true;
  rule.mode = static_cast<int>(p.mode);
  rule.threshold = p.threshold;
  return medianOrOutliers(ctx, in, p.size, rule, job);
}

}  // namespace stacklens::compute::cuda
