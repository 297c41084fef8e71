// Launch shape of the volume renderer's ray marching (compute/cuda/cuda_volume_render.cu).
// (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct VolumeRenderPolicy {
  // One thread per output pixel in 16 × 16 tiles (256 threads): neighbouring rays share the
  // texture cache's texels in both directions, which a row of 256 would not.
  static constexpr int tile = 16;
};

}  // namespace stacklens::compute::cuda::tuning
