// Stands in for the CUDA backend in builds without the CUDA toolkit.
#include "compute/backend.h"
#include "compute/device_list.h"

namespace stacklens::compute {

bool cudaUsable(std::string* why) {
  if (why) *why = "this build of StackLens has no CUDA backend";
  return false;
}

std::unique_ptr<Backend> makeCudaBackend(int) {
  throw BackendUnavailable("this build of StackLens has no CUDA backend");
}

int cudaDeviceCount() { return 0; }

int cudaDeviceOfPointer(const void*) { return -1; }

void cudaWaitForStream(uintptr_t, int) {}

void cudaSynchronizeDevice(int) {}

int cudaCurrentDevice() { return -1; }

void cudaSetCurrentDevice(int) {}

int64_t cudaDeviceBytesInUse(int) { return -1; }

std::vector<std::string> cudaDeviceNames() { return {}; }

}  // namespace stacklens::compute
