// Launch shape of the projections and spectral moments along z (compute/cuda/cuda_projection.cu).
// (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct ProjectionPolicy {
  // 256 threads, one pixel's column each: a warp reads 32 neighbouring x of a slice at every
  // step; 8 blocks fill an SM's 2048 thread slots.
  static constexpr int threads = 256;
};

}  // namespace stacklens::compute::cuda::tuning
