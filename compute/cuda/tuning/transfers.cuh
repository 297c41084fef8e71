// Staging buffer sizes, chunk sizes and copy threads of the host ↔ device transfers
// (compute/cuda/host/cuda_context.cu, compute/cuda/host/cuda_stack_pipeline.cu); the measurements
// that chose them are in compute/BENCHMARKS.md. (For compute/cuda/*.cu only.)
#pragma once

#include <cstddef>

namespace stacklens::compute::cuda::tuning {

struct TransferPolicy {
  // Each of Context::upload/download's two page-locked staging buffers: 16 MiB, large enough
  // that a DMA runs at the link's speed, small enough to keep pinned for the context's life.
  static constexpr size_t stagingBytes = size_t(16) << 20;
  // Context::upload cuts pageable input into pieces of 4 MiB, four to a staging buffer: the host
  // copy of one piece overlaps the DMA of the one before, where whole buffers would leave a
  // 16 MiB image's copy and DMA one after the other. A 4 MiB DMA still runs at the link's speed.
  static constexpr size_t uploadPieceBytes = size_t(4) << 20;
  // The stack pipeline's chunks hold at most 32 MiB of input, so that a large stack goes in
  // several chunks whose copies overlap the compute.
  static constexpr size_t targetChunkBytes = size_t(32) << 20;
  // The host copies between pageable and page-locked memory (the staging buffers' and the
  // pipeline's) are split over persistent threads, at least 512 KiB each: one thread copying
  // (page faults included) is slower than the PCIe link it feeds, so a 4 MiB upload piece is
  // filled by all eight; smaller parts cost more to hand out than they save.
  static constexpr size_t parallelCopyPieceBytes = size_t(512) << 10;
  // At most 8 such threads: more only compete for the host's memory bandwidth.
  static constexpr size_t parallelCopyMaxThreads = 8;
};

}  // namespace stacklens::compute::cuda::tuning
