// Launch shapes, queue depth, caches and cuFFT-callback defaults of Richardson–Lucy on cuFFT
// (compute/cuda/cuda_deconvolve.cu, compute/cuda/host/rl_otf_cache.cuh; the fused passes are in
// tuning/rl_fused.cuh); the measurements that chose them are in compute/BENCHMARKS.md.
// (For compute/cuda/*.cu only.)
#pragma once

#include <cstddef>

namespace stacklens::compute::cuda::tuning {

struct RichardsonLucyPolicy {
  // The element-wise passes (padding, cropping, products, ratio, update, TV, extrapolation, the
  // acceleration's dot products): 256 threads, one value each; 8 blocks fill an SM's 2048
  // thread slots.
  static constexpr int threads = 256;
  // Blocks per SM of the acceleration's grid-stride dot products: 8, enough loads in flight to
  // stream both arrays, with one pair of double atomics per block.
  static constexpr int dotBlocksPerSm = 8;
  // Iterations queued ahead of the GPU: a cancellation takes effect within a few iterations,
  // without a synchronisation per iteration that would leave the GPU idle.
  static constexpr int iterationsAhead = 3;
  // Whether the four transforms of an iteration carry their element-wise work in cuFFT store
  // callbacks by default: in 3D yes (the callbacks save a pass over the frame per transform); in
  // 2D no, since cuFFT's 2048² plans with callbacks are slower than the plain plans plus the
  // separate passes (a 2100² frame gains a little with callbacks on the two R2C transforms
  // only, too little to take the loss at 2048²).
  static constexpr bool callbacksIn3D = true;
  static constexpr bool callbacksIn2D = false;
  // Frame shapes whose callback plans are kept: a few, since each holds a cuFFT work area for the
  // context's life.
  static constexpr size_t callbackPlanShapes = 4;
  // The last OTF is kept for the next call when it takes at most 1/16 of the memory budget: a
  // larger one would crowd other operations' plans.
  static constexpr size_t otfCacheBudgetDivisor = 16;
};

}  // namespace stacklens::compute::cuda::tuning
