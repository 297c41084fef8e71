// Host stacks through the device in chunks of slices, for the per-slice operations: how many
// slices fit the memory budget, and the pipeline that uploads chunk k+1 while chunk k computes
// and chunk k−1 downloads (for compute/cuda/*.cu only).
#pragma once

#include <functional>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/tuning/transfers.cuh"

namespace stacklens::compute::cuda {

// What a per-slice operation needs on the device besides its input chunk: bytes per input voxel
// (its output and scratch, which grow with the chunk) and bytes per chunk that do not (e.g. one
// slice's FFT frame).
struct SliceWork {
  size_t bytesPerVoxel = sizeof(float);
  size_t fixedBytes = 0;
};

// Slices per chunk for a host stack of `shape`: as many as fit
//   fixedBytes + slices · (2 · slice bytes + 2 · bytesPerVoxel · slice voxels) ≤ budget
// (two input chunks resident, one uploading while the other computes, and two results, one
// computing while the other downloads), at most the slices holding kTargetChunkBytes of input (so
// that a large stack goes in several chunks whose copies overlap the compute), at least 1 when one
// fits, at most shape.z. 0 when not even one slice fits the budget.
inline constexpr size_t kTargetChunkBytes = tuning::TransferPolicy::targetChunkBytes;
int64_t planChunkSlices(size_t budget, Shape shape, SliceWork work);

// The operation on one device chunk (a view of slices z0 … z0+n−1), given a sub-job whose progress
// is mapped onto the whole stack; its result on the device, slices in the same order.
using SliceOp = std::function<Image(const Image& chunk, const Job& job)>;

struct PipelineRun {
  Image result;             // on the host
  int chunks = 0;           // chunks processed (those before a halving included)
  int64_t chunkSlices = 0;  // slices per chunk at the end
};

// Runs op over the host stack `in` chunk by chunk through page-locked staging on three streams
// (uploads, the context's compute stream, downloads). When the device runs out of memory, drops
// the chunks in flight, halves the chunk and goes on from the first unfinished slice; throws
// DeviceOutOfMemory when a single slice does not fit. `in` is only read. `what` names the
// operation in the messages (when the budget, not the pipeline's granularity, splits the stack).
PipelineRun pipelineSlices(const ContextPtr& ctx, const char* what, const Image& in, SliceWork work,
                           const SliceOp& op, const Job& job);

// Waits for both copy streams and the compute stream (no throw): before buffers they may still
// use are released, after an error or a cancellation.
void drain(const Context& ctx);
struct DrainOnExit {
  const Context& ctx;
  ~DrainOnExit() { drain(ctx); }
};

// False when STACKLENS_CUDA_PIPELINE=0 (host stacks are then uploaded whole, as before: for
// comparing the two in benchmarks).
bool pipelineEnabled();

}  // namespace stacklens::compute::cuda
