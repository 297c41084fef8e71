// Host memcpy split over a few threads, for the copies between pageable and page-locked memory
// on either side of a DMA (Context::upload/download, the stack pipeline). (For compute/cuda/*.cu
// only.)
#pragma once

#include <cstddef>

namespace stacklens::compute::cuda {

// memcpy(dst, src, bytes) on up to TransferPolicy::parallelCopyMaxThreads kept threads, each with
// at least parallelCopyPieceBytes: one thread copying (page faults included) is slower than the
// PCIe link it feeds. Small copies stay on the calling thread.
void copyParallel(void* dst, const void* src, size_t bytes);

// copyParallel into page-locked staging that a DMA reads next and the host does not: with
// streaming stores, which write around the caches. Cached stores leave the data dirty in the
// host's caches, where the DMA then has to fetch it from (a slower read than from memory), and
// each store first reads its line.
void copyParallelForDma(void* dst, const void* src, size_t bytes);

}  // namespace stacklens::compute::cuda
