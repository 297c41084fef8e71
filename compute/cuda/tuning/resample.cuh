// Launch shape of the resampling's gather kernel (compute/cuda/cuda_resample.cu; its spline
// prefilter runs on the separable filters of tuning/filters.cuh). (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct ResamplePolicy {
  // gatherAlongAxis: 256 threads along x, one output each, so that a warp's loads of each tap
  // are neighbouring values; 8 blocks fill an SM's 2048 thread slots.
  static constexpr int gatherThreads = 256;
};

}  // namespace stacklens::compute::cuda::tuning
