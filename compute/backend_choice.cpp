// Chooses a backend by name: "cpu", "cuda", or "auto" (CUDA when a device is usable).
#include "compute/backend.h"

namespace stacklens::compute {

std::unique_ptr<Backend> makeBackend(const std::string& name, std::string* note) {
  if (name == "cpu") return makeCpuBackend();
  if (name == "cuda") return makeCudaBackend();
  if (name == "auto") {
    std::string why;
    if (cudaUsable(&why)) {
      auto backend = makeCudaBackend();
      if (note) *note = "using CUDA: " + backend->deviceName();
      return backend;
    }
    if (note) *note = why + "; processing runs on the CPU";
    return makeCpuBackend();
  }
  throw InvalidArgument("unknown backend '" + name + "' (expected cpu, cuda or auto)");
}

}  // namespace stacklens::compute
