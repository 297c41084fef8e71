// The resident Richardson–Lucy frames' own kernels (compute/cuda/cuda_resident_frames.cu): the PSF
// placed into a frame for the shared OTF, and the halo exchange, which copies each halo voxel of
// a frame from the estimate of the block whose interior owns it (one kernel per frame, no staging
// buffer). The iterations themselves are the fused passes' (cuda_rl_fused.cuh). (For
// compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace stacklens::compute::cuda {
namespace {

struct Extent {
  int64_t z, y, x;
};

// The PSF wrapped so that its centre sample (index size / 2) sits at the origin of the frame.
__global__ void placePsf(const float* __restrict__ psf, Extent p, float* __restrict__ frame,
                         Extent f) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= p.z * p.y * p.x) return;
  const int64_t x = i % p.x, y = (i / p.x) % p.y, z = i / (p.x * p.y);
  const int64_t tx = ((x - p.x / 2) % f.x + f.x) % f.x, ty = ((y - p.y / 2) % f.y + f.y) % f.y,
                tz = ((z - p.z / 2) % f.z + f.z) % f.z;
  atomicAdd(&frame[(tz * f.y + ty) * f.x + tx], psf[i]);  // a PSF longer than the frame wraps
}

// One frame's tables (ResidentLayout::Axis): owner block and owner index per frame index along
// z, y and x, and the interior.
struct FrameTables {
  const int32_t *blockZ, *indexZ, *blockY, *indexY, *blockX, *indexX;
  int64_t from[3], to[3];
};

// Every voxel of `frame` outside its interior ← the owner's estimate at the owner's index.
__global__ void fillHalo(float* const* __restrict__ estimates, float* __restrict__ frame, Extent f,
                         Extent counts, FrameTables t) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= f.z * f.y * f.x) return;
  const int64_t x = i % f.x, y = (i / f.x) % f.y, z = i / (f.x * f.y);
  if (z >= t.from[0] && z < t.to[0] && y >= t.from[1] && y < t.to[1] && x >= t.from[2] &&
      x < t.to[2])
    return;
  const int64_t owner = (int64_t(t.blockZ[z]) * counts.y + t.blockY[y]) * counts.x + t.blockX[x];
  frame[i] = estimates[owner][(int64_t(t.indexZ[z]) * f.y + t.indexY[y]) * f.x + t.indexX[x]];
}

}  // namespace
}  // namespace stacklens::compute::cuda
