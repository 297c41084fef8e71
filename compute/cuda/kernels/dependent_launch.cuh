// Programmatic dependent launch, the kernels' side (host/dependent_launch.cuh launches them): a
// kernel lets the next one's blocks start once all of its own have (letNextStart), and the next
// waits for its end and its memory before it reads what the previous one wrote
// (waitForPrevious), so that launching and placing the next blocks overlaps the previous kernel's
// last ones. Both are no-ops below sm_90 and in a kernel launched without the attribute. (For
// compute/cuda/*.cu only.)
#pragma once

namespace stacklens::compute::cuda {

__device__ __forceinline__ void letNextStart() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void waitForPrevious() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace stacklens::compute::cuda
