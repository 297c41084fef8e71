// Launch shapes of the segmentation's labelling and measuring kernels
// (compute/cuda/cuda_segment.cu); the measurements that chose them are in compute/BENCHMARKS.md.
// (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct SegmentPolicy {
  // Local labelling tiles (labelTiles): 32 wide, so that a warp takes a tile row as one coalesced
  // load and one ballot, and a tile row is one 32-pixel segment of the root counts.
  static constexpr int tileWidth = 32;
  // 64 rows: fewer tile borders to join in global memory (whose chains of parents are walked
  // one dependent load at a time), and shared memory stays small (8 KiB).
  static constexpr int tileHeight = 64;
  // 8 warps a tile, each loading 8 rows before any waits: the loads in flight hide DRAM latency
  // (one pixel per thread left the pass latency-bound). The relabelling takes the same tiles, a
  // warp 8 consecutive rows of a strip, whose sums of one source it adds up before its atomics.
  static constexpr int tileThreadRows = 8;
  // The relabelling's blocks resident on an SM at least, and the blocks it launches an SM (one
  // wave, whose warps take the listed strips with foreground in turn): 2 leave its registers (a
  // source's sums and its rows' state) room without spilling to local memory, and 16 warps an
  // SM still outnumber a sky's strips with foreground.
  static constexpr int relabelBlocksPerSm = 2;
  // The per-border-pixel and per-source passes: 256 threads, 8 blocks fill an SM's 2048 thread
  // slots. A multiple of 32: their warp votes and shuffles use every lane.
  static constexpr int pixelThreads = 256;
  // The stack's rows up to which each block of the numbering adds up the root counts of the rows
  // before its own (at most 32 loads a thread), instead of CUB's device-wide scan first.
  static constexpr int rowsSummedByBlocks = 8192;
  // The numbering's rows a warp (endRootSegments), scanned side by side: 4 make its blocks few
  // enough (an image's) to leave most SMs room for two relabelling blocks, which start while it
  // runs.
  static constexpr int numberingRowsPerWarp = 4;
  // Sources whose sums are set aside before their number is known (more: measured again).
  static constexpr int minSourceCapacity = 4096;
};

}  // namespace stacklens::compute::cuda::tuning
