// Launch shapes of the segmentation's labelling and measuring kernels
// (compute/cuda/cuda_segment.cu); the measurements that chose them are in compute/BENCHMARKS.md.
// (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct SegmentPolicy {
  // Local labelling tiles (labelTiles, mergeTileBorders), one thread per pixel: 32 wide, so that
  // a warp takes a tile row and its loads are coalesced.
  static constexpr int tileWidth = 32;
  // 16 rows: 512 threads a tile, of which only the border pixels (about a tenth) work in the
  // merge pass.
  static constexpr int tileHeight = 16;
  // The per-pixel passes (flattenAndCount, markKeptRoots, initSums, relabelAndMeasure): 256
  // threads, 8 blocks fill an SM's 2048 thread slots. A multiple of 32: their warp votes and
  // shuffles use every lane.
  static constexpr int pixelThreads = 256;
};

}  // namespace stacklens::compute::cuda::tuning
