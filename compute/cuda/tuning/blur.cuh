// Launch shapes of the Gaussian blur's fused 2D kernel and its NaN passes
// (compute/cuda/cuda_blur.cu); the measurements that chose them are in compute/BENCHMARKS.md.
// (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

// blur2dFused: one tileWidth × tileHeight(R) output tile per block, radius R on both axes.
struct FusedBlurPolicy {
  // Output tiles 64 wide: the input rows (64 + 2R floats) load in fewer, better-aligned segments
  // than those of 32-wide tiles. A multiple of 4 (each thread makes four adjacent outputs).
  static constexpr int tileWidth = 64;
  // 256 threads: 8 warps, each loading one input row at a time (one reflection per row).
  static constexpr int threads = 256;
  // Input rows each warp has in flight while the tile loads: two, to overlap their latencies.
  static constexpr int rowsInFlight = 2;
  // Equal radii up to 16 take the fused kernel (one instantiation per radius; the taps travel as
  // a kernel parameter); larger ones the separable passes.
  static constexpr int maxRadius = 16;
  // Tiles of 48 rows up to radius 8 (fewer halo rows per output), else 32 so that both shared
  // arrays stay within 48 KiB. Multiples of 4 (each thread makes four outputs down a column).
  static constexpr int tallTileMaxRadius = 8;
  static constexpr int tallTileHeight = 48;
  static constexpr int shortTileHeight = 32;
  static constexpr int tileHeight(int radius) {
    return radius <= tallTileMaxRadius ? tallTileHeight : shortTileHeight;
  }
};

// splitNan / joinNan, the NaN-aware blur's element-wise passes.
struct BlurNanPolicy {
  // 256 threads, one value each: 8 such blocks fill an SM's 2048 thread slots, and a partial
  // last block idles few threads.
  static constexpr int threads = 256;
};

}  // namespace stacklens::compute::cuda::tuning
