// Launch shapes of the Gaussian blur's fused 2D kernel and its NaN passes
// (compute/cuda/cuda_blur.cu); the measurements that chose them are in compute/BENCHMARKS.md.
// (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

// blur2dFused: one tileWidth × tileHeight output tile per block, radius R on both axes.
struct FusedBlurPolicy {
  // Output tiles 64 wide: an input row (64 + 2R floats, R rounded up to a float4) is at most 24
  // float4s, one per lane of the warp that loads it. A multiple of 4 (float4 rows).
  static constexpr int tileWidth = 64;
  // 256 threads: 8 warps, each loading one input row at a time.
  static constexpr int threads = 256;
  // Equal radii up to 16 take the fused kernel (one instantiation per radius; the taps travel as
  // a kernel parameter); larger ones the separable passes.
  static constexpr int maxRadius = 16;
  // Tiles of 32 rows for every radius: both shared arrays stay within 48 KiB at radius 16, and at
  // radius 7 eight blocks fit an SM (taller tiles filter fewer halo rows but fit fewer blocks and
  // measured no faster).
  static constexpr int tileHeight = 32;
  // The x pass makes four adjacent outputs per thread (a float4 of the x-pass rows); the y pass
  // eight down a column per thread (each of the 8 + 2R rows it reads serves up to eight outputs;
  // 64 columns × 4 runs of eight rows are the block's 256 threads).
  static constexpr int outputsPerThreadX = 4;
  static constexpr int outputsPerItemY = 8;
  // Each block walks down a column of tiles, reusing the x-pass rows they share; the walk is as
  // long as leaves at least this many blocks per SM (or as shared memory fits, if fewer).
  static constexpr int walkBlocksPerSm = 8;
};

// splitNan / joinNan, the NaN-aware blur's element-wise passes.
struct BlurNanPolicy {
  // 256 threads, one value each: 8 such blocks fill an SM's 2048 thread slots, and a partial
  // last block idles few threads.
  static constexpr int threads = 256;
};

}  // namespace stacklens::compute::cuda::tuning
