// Transfers for live slices (for compute/cuda/*.cu only): see DeviceControl's transfers.
#pragma once

#include <vector>

#include "compute/cuda/host/cuda_context.cuh"

namespace stacklens::compute::cuda {

// cudaHostRegister / cudaHostUnregister (portable: every context sees it page-locked).
bool pinHostMemory(void* p, size_t bytes);
void unpinHostMemory(void* p);
// A page-locked host image: one cudaMemcpyAsync on the compute stream, no wait; else onDevice().
Image uploadAsync(const ContextPtr& ctx, const Image& in);
// Into a page-locked host buffer: one DMA; into pageable memory: the staged download.
void downloadInto(const ContextPtr& ctx, const Image& in, Image& host);
// Slices stacked into one device image (DeviceControl::stackSlices), queued on the compute stream.
Image stackSlices(const ContextPtr& ctx, const std::vector<Image>& slices);
// Rows 0, step, 2·step, ... of slice z, in one strided copy.
Image downloadRows(const ContextPtr& ctx, const Image& in, int64_t z, int64_t step);

}  // namespace stacklens::compute::cuda
