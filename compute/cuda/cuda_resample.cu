// Resampling on the GPU as scipy.ndimage.zoom(mode='mirror'), one axis at a time (shrinking axes
// first). Order 3: one fused pass per axis makes the B-spline coefficients and gathers 4 taps at
// o·(n_in−1)/(n_out−1), along x in shared memory (kernels/spline_zoom.cuh), along y or z in a
// thread's registers as it walks a column (kernels/spline_zoom_walk.cuh); order 1 gathers 2
// taps from the samples, one thread per output with neighbouring threads along x, so that its
// loads are coalesced (kernels/resample.cuh). Launch shapes: tuning/resample.cuh. The cubic passes
// are programmatic dependent launches: each one's blocks start while the pass before finishes.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/host/dependent_launch.cuh"
#include "compute/cuda/kernels/resample.cuh"
#include "compute/cuda/kernels/spline_zoom.cuh"
#include "compute/cuda/kernels/spline_zoom_walk.cuh"
#include "compute/cuda/tuning/resample.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr int kGatherThreads = tuning::ResamplePolicy::gatherThreads;

// Runs kernel(grid, z0) over an array of shape s, the grid's z in chunks of at most 65535.
template <class Launch>
void overGrid(const Shape& s, Launch launch) {
  for (int64_t z0 = 0; z0 < s.z; z0 += 65535) {
    dim3 grid(blocksFor(s.x, kGatherThreads), static_cast<unsigned>(s.y),
              static_cast<unsigned>(std::min<int64_t>(65535, s.z - z0)));
    launch(grid, static_cast<int>(z0));
  }
}

// One axis of the cubic zoom: `in` of shape `cur` to `out` with nOut values along `axis`.
void splineZoomAlong(const ContextPtr& ctx, const float* in, float* out, const Shape& cur, int axis,
                     int64_t nOut) {
  constexpr int kMaxGrid = 65535;
  const dim3 threads(kZoomLines, kZoomThreadRows);
  // Long runs of outputs (large enlargements) need more than the 48 KiB of shared memory a launch
  // gets unasked. (Not asked otherwise: the call sits before the first pass's launch.)
  const auto allowShared = [](const void* kernel, size_t bytes) {
    if (bytes > 48 * 1024)
      SL_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(bytes)));
  };
  if (axis == 2) {
    const SplineZoomAxis a = splineZoomAxis(cur.x, nOut, cur.z * cur.y);
    const auto kernel = splineCoefficientsInPlace(a) ? splineZoomRows<true> : splineZoomRows<false>;
    const size_t shared = splineZoomSharedBytes(a, kRowSamplePitch, kRowCoefficientPitch);
    allowShared(reinterpret_cast<const void*>(kernel), shared);
    const int64_t rowBlocks = (a.lines + kZoomLines - 1) / kZoomLines;
    for (int64_t b0 = 0; b0 < rowBlocks; b0 += kMaxGrid) {
      dim3 grid(blocksFor(a.nOut, a.outputsPerBlock),
                static_cast<unsigned>(std::min<int64_t>(kMaxGrid, rowBlocks - b0)));
      launchAfterPrevious(ctx, kernel, grid, threads, shared, in, out, a, b0 * kZoomLines);
    }
    return;
  }
  const int64_t n = axis == 0 ? cur.z : cur.y;
  const int64_t inner = axis == 0 ? cur.y * cur.x : cur.x;
  const int64_t outer = axis == 0 ? 1 : cur.z;
  const SplineZoomAxis a = splineZoomAxis(n, nOut, inner);
  const int64_t blockColumns = int64_t(splineWalkColumns(a)) * SplineZoomPolicy::walkThreads;
  const int64_t columnBlocks = (inner + blockColumns - 1) / blockColumns;
  if (columnBlocks > INT32_MAX) throw InvalidArgument("resample: the slices are too large");
  const size_t shared = splineWalkSharedBytes(a);
  const SplineWalkKernel kernel = splineZoomWalkFor(a);
  allowShared(reinterpret_cast<const void*>(kernel), shared);
  // Along y the slabs go last first: the x pass before wrote them in order, so its last ones may
  // still be in L2 (along z there is one slab).
  const bool lastSlabsFirst = axis == 1;
  const int64_t outputBlocks = blocksFor(a.nOut, a.outputsPerBlock);
  for (int64_t o0 = 0; o0 < outputBlocks; o0 += kMaxGrid)
    for (int64_t s0 = 0; s0 < outer; s0 += kMaxGrid) {
      dim3 grid(static_cast<unsigned>(columnBlocks),
                static_cast<unsigned>(std::min<int64_t>(kMaxGrid, outputBlocks - o0)),
                static_cast<unsigned>(std::min<int64_t>(kMaxGrid, outer - s0)));
      launchAfterPrevious(ctx, kernel, grid, SplineZoomPolicy::walkThreads, shared, in, out, a,
                          int(o0), s0, lastSlabsFirst);
    }
}

}  // namespace

Image resample(const ContextPtr& ctx, const Image& input, const ResampleParams& p, const Job& job) {
  validate(p);
  if (input.empty()) throw InvalidArgument("resample: the image is empty");
  if (double(input.shape().y) * std::max(1.0, p.zoomY) > 65535)
    throw InvalidArgument("resample: results taller than 65535 rows are not supported");
  Image in = onDevice(ctx, input);
  Shape cur = in.shape();
  const int64_t nIn[3] = {cur.z, cur.y, cur.x};
  const Shape outShape = resampledShape(cur, p);
  const int64_t nOut[3] = {outShape.z, outShape.y, outShape.x};
  // Shrinking axes first keeps the intermediate arrays small.
  std::array<int, 3> order = {2, 1, 0};
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return double(nOut[a]) / nIn[a] < double(nOut[b]) / nIn[b];
  });
  for (int64_t n : {nOut[0], nOut[1], nOut[2], nIn[0], nIn[1], nIn[2]})
    if (n > INT32_MAX / 2) throw InvalidArgument("resample: an axis is too long");
  Image current = in;
  cudaStream_t st = ctx->stream();
  for (int axis : order) {
    if (nOut[axis] == nIn[axis]) continue;  // coordinates o·(n−1)/(n−1) = o: the identity
    job.checkCancelled();
    Shape next = cur;
    (axis == 0 ? next.z : axis == 1 ? next.y : next.x) = nOut[axis];
    Image dst = deviceBuffer<float>(ctx, next);
    if (p.order == 3) {
      splineZoomAlong(ctx, current.data(), dst.data(), cur, axis, nOut[axis]);
    } else {
      const int64_t inStride = axis == 0 ? cur.y * cur.x : axis == 1 ? cur.x : 1;
      const double step = nOut[axis] > 1 ? double(nIn[axis] - 1) / double(nOut[axis] - 1) : 0.0;
      AxisGeometry og{int(next.x), int(next.y), axis, int(nOut[axis]), 0};
      overGrid(next, [&](dim3 grid, int z0) {
        gatherLinearAlongAxis<<<grid, kGatherThreads, 0, st>>>(current.data(), dst.data(), og,
                                                               int(nIn[axis]), inStride, step, z0);
      });
      SL_LAUNCHED();
    }
    current = dst;
    cur = next;
  }
  if (current.data() == in.data()) {
    Image copy = deviceBuffer<float>(ctx, cur);
    SL_CUDA(cudaMemcpyAsync(copy.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice,
                            ctx->stream()));
    current = copy;
  }
  current.spacing = in.spacing;
  current.spacing.z /= p.zoomZ;
  current.spacing.y /= p.zoomY;
  current.spacing.x /= p.zoomX;
  return current;
}

}  // namespace stacklens::compute::cuda
