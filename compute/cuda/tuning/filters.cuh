// Launch shapes of the separable 1D filters (compute/cuda/kernels/cuda_filters.cuh: the Gaussian
// blur's passes and the resampling's spline prefilter); the measurements that chose them are in
// compute/BENCHMARKS.md. (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct SeparableFilterPolicy {
  // filterRows: 256 threads a block, 8 warps reading consecutive x.
  static constexpr int rowThreads = 256;
  // Outputs per thread along x: a block covers 1024 outputs of a row, so the 2r halo values it
  // stages in shared memory are shared by more outputs.
  static constexpr int rowOutputsPerThread = 4;
  // filterColumns: strips 32 columns wide, one warp along x, so that every row of the strip is
  // one coalesced load.
  static constexpr int columnWidth = 32;
  // Outputs along the axis per block: the 2r halo rows are staged once for 64 outputs.
  static constexpr int columnRows = 64;
  // Rows of threads per block: 8, 256 threads with the 32 columns.
  static constexpr int columnThreadsY = 8;
  // filterAxis (radii too large for a shared tile): 256 threads along x, one output each.
  static constexpr int axisThreads = 256;
};

}  // namespace stacklens::compute::cuda::tuning
