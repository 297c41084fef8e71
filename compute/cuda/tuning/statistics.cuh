// Launch shapes and buffer sizes of the sigma-clipped statistics (compute/cuda/cuda_statistics.cu);
// the measurements that chose them are in compute/BENCHMARKS.md. (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

struct SigmaClipPolicy {
  // Threads per block of the counting passes: 512, so that the block's two shared 2048-bin
  // histograms are cleared, flushed and scanned four bins a thread. Must divide the bin count.
  static constexpr int threads = 512;
  // Blocks per SM of the counting passes (a grid-stride loop): two keep the per-block histogram
  // flushes (global atomics) few.
  static constexpr int blocksPerSm = 2;
  // The guessed first-digit bin's values the moments pass keeps (64 Ki floats, 256 KiB for the
  // context's life) so that the later digit passes read only those; a fuller bin counts as a
  // miss and those passes read the whole data.
  static constexpr int candidates = 1 << 16;
  // Of those, each block of the moments pass gathers up to 2048 (8 KiB of shared memory) before
  // appending them with one global atomic: a block sees about 16 Ki values of a 2048² image, a
  // few hundred of them in the median's bin.
  static constexpr int blockCandidates = 2048;
  // Histogram bins counted with one shared atomic per value, not with the lanes of a bin added
  // first (__match_any_sync), which cost more than the conflicts it saves on sky data.
  // STACKLENS_CLIP_BINNING=match overrides it, to compare the two.
  static constexpr bool matchAnyBinning = false;
  // The on-chip loop (clipResident): one block of 1024 threads per SM, so that a block has all of
  // its SM's shared memory for its share of the values and enough threads to count it.
  static constexpr int residentThreads = 1024;
  // The window's values each block of the on-chip loop lists (16 KiB of its shared memory, a
  // 32nd for each warp; also where the block sums are staged); where a warp finds more, the
  // median's later digits are counted over the whole shares. A block sees about 32 Ki values of
  // a 2048² image, a few hundred of them in the windows of the sky's evaluations.
  static constexpr int residentCandidates = 4096;
  // The on-chip loop's windows around the last median, as log2 of their half-width in keys: the
  // first (after the evaluation of every value) wide enough for the sky's first moves; later
  // ones four times the median's last move, no narrower than the least (so that a median that
  // stays put still finds its neighbours) and no wider than the most (the median's move while
  // the sky's outliers go).
  static constexpr int residentFirstHalfBits = 22;
  static constexpr int residentLeastHalfBits = 11;
  static constexpr int residentMostHalfBits = 23;
  // log2 of the bins a window is counted in: each block adds its non-empty ones to the summed
  // histogram at the barrier, and the middle ranks' bins are gathered from every block.
  static constexpr int residentWindowBinBits = 11;
  // Each window bin's room for its values in device memory, from which every block gathers the
  // middle ranks' bins (the sky's hold a few dozen): a fuller bin's remaining digits are counted
  // over the whole shares. At most half the resident threads (a thread loads each place).
  static constexpr int residentBinRoom = 128;
  // resetWorkspace: 256 threads, one histogram bin each.
  static constexpr int resetThreads = 256;
};

}  // namespace stacklens::compute::cuda::tuning
