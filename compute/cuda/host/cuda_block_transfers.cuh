// The CUDA backend's BlockTransfers (compute/block_transfers.h). (For compute/cuda/*.cu only.)
#pragma once

#include <memory>

#include "compute/block_transfers.h"
#include "compute/cuda/host/cuda_context.cuh"

namespace stacklens::compute::cuda {

std::unique_ptr<BlockTransfers> makeBlockTransfers(const ContextPtr& ctx);

}  // namespace stacklens::compute::cuda
