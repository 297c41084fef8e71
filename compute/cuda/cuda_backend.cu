// The CUDA backend: device detection now; operations land with the CUDA issue.
#include <cuda_runtime.h>

#include <string>

#include "compute/backend.h"

namespace stacklens::compute {

bool cudaUsable(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device found";
    return false;
  }
  return true;
}

std::unique_ptr<Backend> makeCudaBackend() {
  std::string why;
  if (!cudaUsable(&why)) throw BackendUnavailable(why);
  throw BackendUnavailable("the CUDA operations are not implemented yet");
}

}  // namespace stacklens::compute
