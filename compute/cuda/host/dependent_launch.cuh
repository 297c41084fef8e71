// Programmatic dependent launch, the host's side (kernels/dependent_launch.cuh is the kernels'):
// a kernel launched on the context's stream whose blocks may start while the kernel before it
// finishes. (For compute/cuda/*.cu only.)
#pragma once

#include <cuda_runtime.h>

#include "compute/cuda/host/cuda_context.cuh"

namespace stacklens::compute::cuda {

// Launches kernel(args...) on ctx's stream after the work before it, as a programmatic dependent
// launch where the device has it (sm_90 on); below that, as a plain launch.
template <class... Params, class... Args>
void launchAfterPrevious(const ContextPtr& ctx, void (*kernel)(Params...), dim3 grid, dim3 block,
                         size_t sharedBytes, Args... args) {
  int major = 0;
  SL_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx->device()));
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = sharedBytes;
  config.stream = ctx->stream();
  config.attrs = &overlap;
  config.numAttrs = major >= 9 ? 1 : 0;
  SL_CUDA(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
}

}  // namespace stacklens::compute::cuda
