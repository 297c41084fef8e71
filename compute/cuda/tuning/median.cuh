// Launch shapes of the median filter and outlier removal (compute/cuda/cuda_median.cu); the
// measurements that chose them are in compute/BENCHMARKS.md. (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct MedianPolicy {
  // 3×3 (median3x3, median3x3Pairs): 128 threads along x, each walking down a column (or two).
  // Small blocks spread a slice's few thousand column walks over every SM.
  static constexpr int strip3Threads = 128;
  // Rows each 3×3 thread walks: 16, so that its 2 halo rows (loaded by the strips above and
  // below too) add an eighth, while a 2048² slice still makes 2048 blocks to fill the GPU.
  static constexpr int strip3Rows = 16;
  // 5×5 (median5x5): 128 threads along x, each walking down two columns.
  static constexpr int strip5Threads = 128;
  // Rows each 5×5 thread walks: 48, so that its 4 halo rows (sorted by the neighbouring strips
  // too) add a twelfth, while a 1024² slice still makes 22 strips a column. A multiple of 4, so
  // that strips end on whole iterations (two outputs per step, two steps per iteration).
  static constexpr int strip5Rows = 48;
  // 5×5 blocks an SM must hold: 4, which caps the kernel at 128 registers a thread; uncapped it
  // takes a few more and only three blocks fit, too few warps to keep the min/max pipe busy.
  static constexpr int strip5MinBlocks = 4;
  // Larger windows (medianLarge): one thread per pixel in 32 × 8 tiles; a warp takes a row
  // segment, so each tap's loads are coalesced.
  static constexpr int largeTileX = 32;
  static constexpr int largeTileY = 8;
};

}  // namespace stacklens::compute::cuda::tuning
