// Host memcpy split over a few threads, for the copies between pageable and page-locked memory
// on either side of a DMA (Context::upload/download, the stack pipeline). (For compute/cuda/*.cu
// only.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace stacklens::compute::cuda {

// memcpy(dst, src, bytes) on up to HostCopyPolicy::maxThreads kept threads, each with at least
// minPartBytes: one thread copying (page faults included) is slower than the
// PCIe link it feeds. Small copies stay on the calling thread.
void copyParallel(void* dst, const void* src, size_t bytes);

// Where copyForDmaInPieces stages each piece of its input, and what happens to it then.
struct DmaPieces {
  size_t pieceBytes = 0;
  int64_t slots = 0;  // staging slots of pieceBytes each, reused in turn
  // The slot of the first piece; piece k goes to slot (firstSlot + k) % slots. A caller that
  // uploads back to back starts each call where the last one stopped, on the slots whose DMAs
  // were sent longest ago, so that the new copies need not wait for the DMAs just sent.
  int64_t firstSlot = 0;
  // The slot's page-locked memory.
  std::function<char*(int64_t slot)> staging;
  // Blocks until the DMA sent from the slot last, by this call or an earlier one, has read it
  // (called by each copy thread before it copies a part of a piece into the slot).
  std::function<void(int64_t slot)> waitUntilRead;
  // Queues the DMA of piece `piece` (at byte piece * pieceBytes of the input), staged in `slot`.
  // Called once per piece, in piece order, from any of the copy threads.
  std::function<void(int64_t piece, int64_t slot, const char* staged, size_t bytes)> send;
  // If set, called on the calling thread, between the parts it copies, each time more pieces
  // have been sent than at its last call (with their number), until every piece has been: work
  // that follows the DMAs is queued from there, off the copy threads' path to the next sends.
  std::function<void(int64_t sentPieces)> afterSent;
};

// Copies pageable src into the pieces' staging on the kept copy threads and sends each piece as
// soon as its last part is in: the DMA of one piece runs while the threads fill the next ones,
// with no barrier between pieces. The copies use streaming stores, which write around the
// caches: cached stores would leave the data dirty in the host's caches, where the DMA then has
// to fetch it from (a slower read than from memory), and each would first read its line.
// Rethrows the first exception of send or waitUntilRead.
void copyForDmaInPieces(const void* src, size_t bytes, const DmaPieces& pieces);

}  // namespace stacklens::compute::cuda
