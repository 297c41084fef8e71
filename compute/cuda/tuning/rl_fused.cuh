// Launch shapes of Richardson–Lucy's fused FFT passes (compute/cuda/cuda_rl_fused.cu) and the
// shared-memory line layout of their block FFTs (compute/cuda/kernels/block_fft.cuh); the
// measurements that chose them are in compute/BENCHMARKS.md. (For compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda::tuning {

// The block FFT's defaults (block_fft.cuh).
struct BlockFftPolicy {
  // 16 complex values per thread (radix-16 stages) unless a pass asks for 32: half the
  // registers of 32, at one more shared-memory exchange for long lines.
  static constexpr int valuesPerThread = 16;
  // Complex values after a line's padded positions 0 … L−1 in shared memory: the first holds the
  // real transforms' Nyquist term (index L), so at least 1; 4 (8 banks) makes neighbouring lines
  // start in different banks.
  static constexpr int lineGapValues = 4;
};

// The row passes (one row of real length 2L per L/V threads) and the column passes (C adjacent
// columns of length L per block) of the fused transforms.
struct RlFusedPolicy {
  // Values per thread for the lengths that do not take the wide layout below.
  static constexpr int narrowValues = BlockFftPolicy::valuesPerThread;
  // Values per thread for long lines: one shared-memory exchange fewer per transform (the passes
  // are bound by shared-memory and load-pipe traffic), at twice the registers.
  static constexpr int wideValues = 32;

  // Rows of complex length ≥ 512 (1024 samples) take wideValues: 1024 = 32·32 instead of
  // 16·16·4, and a 2048² frame's rows fit one wave of warps at 128 registers.
  static constexpr int rowWideFromLength = 512;
  // Threads per row-pass block: 8 warps; 128-thread blocks were slower at 32 values per thread.
  static constexpr int rowBlockThreads = 256;
  // Resident threads per SM the row passes' register allocation must allow: 768 at 16 values
  // (up to 80 registers a thread), 512 at 24 or 32 (128 registers, for the values they hold).
  static constexpr int rowResidentThreadsNarrow = 768;
  static constexpr int rowResidentThreadsWide = 512;

  // Columns of length ≥ 2048 take wideValues: 2048 = 32·32·2 reads fewer unit roots and spills
  // less than 16·16·8 at 64 registers; columns of 1024 gained nothing from it.
  static constexpr int columnWideFromLength = 2048;
  // Resident threads per SM for the column passes: 1024 at 16 values (64 registers each: more
  // resident warps hide the memory waits between the compute phases), 512 at 24 or 32.
  static constexpr int columnResidentThreadsNarrow = 1024;
  static constexpr int columnResidentThreadsWide = 512;
  // Columns per block: adjacent columns make a row segment's global accesses contiguous (4
  // columns: 32 bytes); fewer threads per column want more columns, and 4096-long columns take 2
  // so that a block of 256 threads keeps its 32 values per thread in registers.
  static constexpr int columnsPerBlock(int length, bool powerOfTwo) {
    if (!powerOfTwo) return length >= 2048 ? 4 : length >= 1024 ? 8 : 16;
    return length >= 4096   ? 2
           : length >= 2048 ? 4
           : length >= 512  ? 8
           : length >= 256  ? 32
           : length >= 128  ? 16
                            : 32;
  }

  // The spectrum's rows are padded to a multiple of 8 complex values (64 bytes), so that the
  // column passes' accesses start on aligned segments.
  static constexpr int spectrumPitchValues = 8;
};

}  // namespace stacklens::compute::cuda::tuning
