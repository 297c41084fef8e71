// The host copies between pageable and page-locked memory on either side of a DMA
// (compute/cuda/host/host_copy.cu): how many threads, and how the work is cut between them.
// (For compute/cuda/*.cu only.)
#pragma once

#include <cstddef>

namespace stacklens::compute::cuda::tuning {

struct HostCopyPolicy {
  // Whole copies are split over persistent threads, at least 512 KiB each: one thread copying
  // (page faults included) is slower than the PCIe link it feeds; smaller parts cost more to hand
  // out than they save.
  static constexpr size_t minPartBytes = size_t(512) << 10;
  // Uploads in pieces (copyForDmaInPieces) are taken in parts of 256 KiB, several threads to a
  // piece, each thread taking the next part as it finishes one.
  static constexpr size_t dmaPartBytes = size_t(256) << 10;
  // At most 16 threads: a copy of a stack larger than the caches keeps getting faster up to a
  // thread a core on a 16-core GPU host, and even then is slower than the link reads it.
  static constexpr size_t maxThreads = 16;
  // After a copy the threads poll this long for the next one before they sleep: waking a
  // sleeping thread takes longer than staging a piece (tens of microseconds or more on a virtual
  // machine's host), and an upload's first pieces wait for it. Copies come back to back (each
  // upload and download of an operation, each chunk of a stack), so within this they are
  // still awake.
  static constexpr int pollMicroseconds = 1000;
};

}  // namespace stacklens::compute::cuda::tuning
