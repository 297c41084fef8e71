// The volume renderer's ray marching (compute/cuda/cuda_volume_render.cu): one thread per output
// pixel walks its ray (compute/volume_ray.h, shared with the CPU twin) through the volume's 3D
// texture, whose unit does the trilinear interpolation and the edge clamping in one fetch. Launch
// shape: tuning/volume_render.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "compute/cuda/tuning/volume_render.cuh"
#include "compute/volume_ray.h"

namespace stacklens::compute::cuda {
namespace {

constexpr int kTile = tuning::VolumeRenderPolicy::tile;

struct TextureSampler {
  cudaTextureObject_t texture;
  __device__ float operator()(float x, float y, float z) const {
    return tex3D<float>(texture, x + 0.5f, y + 0.5f, z + 0.5f);  // texel centres at .5
  }
};

__global__ void marchRays(VolumeGeometry g, cudaTextureObject_t texture, float* __restrict__ out) {
  const int i = int(blockIdx.x) * kTile + int(threadIdx.x);
  const int j = int(blockIdx.y) * kTile + int(threadIdx.y);
  if (i >= g.width || j >= g.height) return;
  out[int64_t(j) * g.width + i] = marchVolumeRay(g, i, j, TextureSampler{texture});
}

}  // namespace
}  // namespace stacklens::compute::cuda
