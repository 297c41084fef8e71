// Launch shapes of the resampling (compute/cuda/cuda_resample.cu: the cubic path's fused kernels in
// kernels/spline_zoom.cuh and kernels/spline_zoom_walk.cuh, the linear path's gather). (For
// compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct ResamplePolicy {
  // gatherAlongAxis (order 1): 256 threads along x, one output each, so that a warp's loads of
  // each tap are neighbouring values; 8 blocks fill an SM's 2048 thread slots.
  static constexpr int gatherThreads = 256;
};

struct SplineZoomPolicy {
  // 256 threads: 32 lines × 8 rows of threads, each row a warp.
  static constexpr int threads = 256;
  // Coefficients a thread makes in one run of the recursions: each run starts its two sums
  // afresh (32 multiply–adds), so longer runs cost less per value; 16 gives 32 lines × 8
  // segments = one per thread for a block of 128 coefficients.
  static constexpr int segment = 16;
  // Coefficients a block's outputs read, about: the prefilter's reach (16 each side) is staged
  // by the blocks on both sides of a run, so runs much longer than the reach keep the extra
  // reads few, while the shared arrays (about 40 KiB) still let five blocks share an SM (64,
  // eight blocks of 22 KiB, measured slower).
  static constexpr int coefficientsPerBlock = 128;
  // Blocks an SM holds at once (the shared arrays of five fit): the registers are capped so
  // that as many fit, since a block's staging, prefilter and stores take turns.
  static constexpr int blocksPerSm = 5;
  // Where a block's coefficients take the place of its samples (runs of at most one segment a
  // thread), its shared arrays are half as large: six blocks an SM.
  static constexpr int blocksPerSmInPlace = 6;
  // Outputs along the axis per block when enlarging a lot, so that long axes still make many
  // blocks.
  static constexpr int maxOutputsPerBlock = 1024;
  // Along y and z (kernels/spline_zoom_walk.cuh): 4 warps a block, each its own 32 columns of the
  // block's run (64 where a thread walks two), so that the run's weights are worked out once for
  // 128 columns or more.
  static constexpr int walkThreads = 128;
  // Walking blocks an SM holds at once: a thread keeps two segments' samples and one's
  // coefficients in registers (about 95 with five blocks), and enough warps hide the loads'
  // latency. Enlarging, where each window's outputs are unrolled, four blocks (about 100
  // registers) measured faster than five; shrinking, five.
  static constexpr int walkBlocksPerSm = 5;
  static constexpr int walkBlocksPerSmEnlarging = 4;
  // Enlarging with two columns a thread (twice the samples and coefficients, about 165
  // registers): three blocks fit without spilling; four (128 registers) spill and measured
  // slower.
  static constexpr int walkBlocksPerSmPairs = 3;
};

}  // namespace stacklens::compute::cuda::tuning
