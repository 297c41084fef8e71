// Launch shapes of the segmentation's labelling and measuring kernels
// (compute/cuda/cuda_segment.cu); the measurements that chose them are in compute/BENCHMARKS.md.
// (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct SegmentPolicy {
  // Local labelling tiles (labelTiles): 32 wide, so that a warp takes a tile row as one coalesced
  // load and one ballot, and a tile row is one 32-pixel segment of the root counts.
  static constexpr int tileWidth = 32;
  // 32 rows: fewer tile borders to join in global memory than 16, and shared memory stays small.
  static constexpr int tileHeight = 32;
  // 8 warps a tile, each loading 4 rows before any waits: the loads in flight hide DRAM latency
  // (one pixel per thread left the pass latency-bound).
  static constexpr int tileThreadRows = 8;
  // The per-pixel and per-segment passes: 256 threads, 8 blocks fill an SM's 2048 thread slots.
  // A multiple of 32: their warp votes and shuffles use every lane.
  static constexpr int pixelThreads = 256;
  // Sources whose sums are set aside before their number is known (more: measured again).
  static constexpr int minSourceCapacity = 4096;
};

}  // namespace stacklens::compute::cuda::tuning
