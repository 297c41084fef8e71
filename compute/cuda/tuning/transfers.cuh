// Staging buffer sizes and chunk sizes of the host ↔ device transfers
// (compute/cuda/host/cuda_context.cu, compute/cuda/host/cuda_stack_pipeline.cu); the measurements
// that chose them are in compute/BENCHMARKS.md; the copy threads that fill the staging are in
// tuning/host_copies.cuh. (For compute/cuda/*.cu only.)
#pragma once

#include <cstddef>

namespace stacklens::compute::cuda::tuning {

struct TransferPolicy {
  // Each of Context::upload/download's two page-locked staging buffers: 16 MiB, large enough
  // that a DMA runs at the link's speed, small enough to keep pinned for the context's life.
  static constexpr size_t stagingBytes = size_t(16) << 20;
  // A pageable stack's chunks go up in pieces of 4 MiB (the stack pipeline): a piece's DMA starts
  // as soon as the copy threads have staged it, so a chunk's copy and DMA overlap. A 4 MiB DMA
  // still runs at the link's speed.
  static constexpr size_t uploadPieceBytes = size_t(4) << 20;
  // One pageable image (Context::upload) of up to 32 MiB goes up in pieces of 1 MiB through a
  // ring of 8 slots at the start of the staging. The link waits for the first piece alone, and
  // the ring refills each slot as soon as its DMA has read it. Each DMA costs a few microseconds
  // more than its bytes, which over the hundreds of pieces of a larger upload (a volume) adds up:
  // that goes in 4 MiB pieces (uploadPieceBytes) through 6 slots of its own after the small ones.
  static constexpr size_t pageableUploadPieceBytes = size_t(1) << 20;
  static constexpr int pageableUploadSlots = 8;
  static constexpr size_t largeUploadBytes = size_t(32) << 20;
  static constexpr int largeUploadSlots = 6;
  // The stack pipeline's chunks hold at most 32 MiB of input, so that a large stack goes in
  // several chunks whose copies overlap the compute.
  static constexpr size_t targetChunkBytes = size_t(32) << 20;
  // One host image through a local filter goes in bands of rows of at least 4 MiB (the band
  // pipeline): each band's download runs while the next band goes up, the two directions of
  // the link at once; a band is one upload piece, so its DMA starts when it is staged.
  static constexpr size_t bandBytes = size_t(4) << 20;
};

}  // namespace stacklens::compute::cuda::tuning
