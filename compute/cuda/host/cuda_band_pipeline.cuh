// One host image through a local 2D filter (blur, median, outlier removal) in bands of rows:
// band k+1 goes up while band k computes and band k−1 comes down, so the two directions of the
// link overlap, which the stack pipeline's chunks of whole slices cannot do for a single image.
// (For compute/cuda/*.cu only.)
#pragma once

#include "compute/cuda/host/cuda_stack_pipeline.cuh"

namespace stacklens::compute::cuda {

// True when `in` (one host slice in page-locked memory, as the viewer's slices and the lab's
// images) is large enough to go in several bands for a filter whose outputs read `halo` rows on
// either side (planRowBands), and the input, the result and the filter's work (bytes per voxel)
// fit the memory budget at once. Pageable input stays one piece: its upload is paced by the
// host's memory, which the copy threads already keep busy, and the download's DMA into host
// memory would compete with them (bands gained nothing there).
bool bandsPay(const Context& ctx, const Image& in, int64_t halo, SliceWork work);

// Runs op on each band's rows plus its halo (views of the whole uploaded image, so a band's
// edge inside the image is never a boundary for its outputs) and downloads the band's own rows:
// the result equals op on the whole image bit for bit wherever op's outputs depend only on the
// inputs within `halo` rows and not on the image's height. The result is on the host.
PipelineRun pipelineRowBands(const ContextPtr& ctx, const Image& in, int64_t halo,
                             const SliceOp& op, const Job& job);

}  // namespace stacklens::compute::cuda
