// The resampling's order-1 pass (compute/cuda/cuda_resample.cu): one axis of
// scipy.ndimage.zoom(order=1, mode='mirror'), each output gathering its two taps at
// o·(n_in−1)/(n_out−1) from the samples. One thread per output, neighbouring threads along x, so
// that a warp's loads of each tap are coalesced. The order-3 pass is kernels/spline_zoom.cuh.
// (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/kernels/cuda_kernels.cuh"

namespace stacklens::compute::cuda {
namespace {

struct AxisGeometry {
  int nx, ny;      // the array's x and y lengths (z is the grid's)
  int axis;        // 0 z, 1 y, 2 x
  int n;           // the array's length along axis
  int64_t stride;  // between neighbours along axis
};

// Position along `axis` of the element (z, y, x), and a pointer to its line's start.
__device__ inline int positionOn(const AxisGeometry& g, int z, int y, int x) {
  return g.axis == 2 ? x : g.axis == 1 ? y : z;
}

// Output (z, y, x) of an array whose `axis` has length nOut, gathered linearly from `src` whose
// axis has length nIn (the other axes equal).
__global__ void gatherLinearAlongAxis(const float* __restrict__ src, float* __restrict__ out,
                                      AxisGeometry outGeometry, int nIn, int64_t inStride,
                                      double step, int z0) {
  const AxisGeometry& g = outGeometry;
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = z0 + blockIdx.z;
  if (x >= g.nx) return;
  int o = positionOn(g, z, y, x);
  // The same element with the axis coordinate set to 0, in the source's layout.
  int64_t lineStart;
  if (g.axis == 2)
    lineStart = (int64_t(z) * g.ny + y) * nIn;
  else if (g.axis == 1)
    lineStart = int64_t(z) * nIn * g.nx + x;
  else
    lineStart = int64_t(y) * g.nx + x;
  const float* line = src + lineStart;
  double c = double(o) * step;
  double fl = floor(c);
  float t = static_cast<float>(c - fl);
  int i0 = static_cast<int>(fl);
  out[(int64_t(z) * g.ny + y) * g.nx + x] = (1.f - t) * line[mirrorIndex(i0, nIn) * inStride] +
                                            t * line[mirrorIndex(i0 + 1, nIn) * inStride];
}

}  // namespace
}  // namespace stacklens::compute::cuda
