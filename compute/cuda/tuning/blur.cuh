// Launch shapes of the Gaussian blur's fused 2D kernel and its NaN passes
// (compute/cuda/cuda_blur.cu); the measurements that chose them are in compute/BENCHMARKS.md.
// (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

// blur2dFused: a column of tileWidth-wide output tiles per block, radius R on both axes.
struct FusedBlurPolicy {
  // Output tiles 64 wide: an input row (64 + 2R floats, R rounded up to a float4) is at most 24
  // float4s, one per lane of the warp that loads it. A multiple of 4 (float4 rows).
  static constexpr int tileWidth = 64;
  // 256 threads: 8 warps, each loading one input row at a time.
  static constexpr int threads = 256;
  // Equal radii up to 16 take the fused kernel (one instantiation per radius; the taps travel as
  // a kernel parameter); larger ones the separable passes.
  static constexpr int maxRadius = 16;
  // Tiles of 64 rows where the input rows and the x pass's rows fit the 48 KiB of static shared
  // memory (radius 8 or less), else 32: a thread's y pass makes 16 outputs down a column from
  // 16 + 2R rows, each serving up to 16 of them (64 columns × 4 runs of 16 rows are the block's
  // 256 threads; runs of 8 rows in tiles of 32).
  static constexpr int tallTileHeight = 64;
  static constexpr int tileHeight = 32;
  // The x pass makes four adjacent outputs per thread (a float4 of the x-pass rows).
  static constexpr int outputsPerThreadX = 4;
  // Each block walks down a column of tiles, filtering the x-pass rows they share once: the walk is
  // the shortest that leaves at most this many blocks per SM (fewer where shared memory fits
  // fewer), and the registers are budgeted for as many.
  static constexpr int walkBlocksPerSm = 4;
};

// splitNan / joinNan, the NaN-aware blur's element-wise passes.
struct BlurNanPolicy {
  // 256 threads, one value each: 8 such blocks fill an SM's 2048 thread slots, and a partial
  // last block idles few threads.
  static constexpr int threads = 256;
};

}  // namespace stacklens::compute::cuda::tuning
