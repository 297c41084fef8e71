#include "python/src/backends.h"

#include <map>
#include <memory>

#include "compute/params.h"

namespace stacklens::python {
namespace {

struct Kept {
  std::unique_ptr<compute::Backend> backend;
  std::mutex calls;
};

// "cuda:N" → N, else -1.
int deviceIndex(const std::string& name) {
  if (name.rfind("cuda:", 0) != 0 || name.size() == 5 ||
      name.find_first_not_of("0123456789", 5) != std::string::npos)
    return -1;
  return std::stoi(name.substr(5));
}

}  // namespace

BackendUse useBackend(const std::string& name) {
  int device = deviceIndex(name);
  if (name != "cpu" && name != "cuda" && name != "auto" && device < 0)
    throw compute::InvalidArgument("backend: expected 'cpu', 'cuda', 'cuda:N' or 'auto', got '" +
                                   name + "'");
  static std::mutex made;
  static std::map<std::string, std::shared_ptr<Kept>> backends;
  std::shared_ptr<Kept> kept;
  {
    std::lock_guard lock(made);
    std::shared_ptr<Kept>& slot = backends[name];
    if (!slot) {
      // "auto" and "cuda" are the same backends as "cpu" or "cuda:0".
      std::unique_ptr<compute::Backend> fresh;
      std::string key = name;
      if (name == "auto") {
        std::string note;
        fresh = compute::makeBackend("auto", &note);
        key = fresh->name() == "cuda" ? "cuda:0" : "cpu";
      } else if (name == "cuda" || device >= 0) {
        device = std::max(device, 0);
        key = "cuda:" + std::to_string(device);
        if (!backends[key]) fresh = compute::makeCudaBackend(device);
      } else {
        fresh = compute::makeBackend(name);
      }
      std::shared_ptr<Kept>& shared = backends[key];
      if (!shared) {
        shared = std::make_shared<Kept>();
        shared->backend = std::move(fresh);
      }
      slot = shared;
    }
    kept = slot;
  }
  // Kept for the process's life in the map: the reference stays valid.
  compute::Backend& backend = *kept->backend;
  std::unique_lock lock(kept->calls);
  CurrentDeviceKept callersDevice(backend.name() == "cuda");
  backend.device().bindToThisThread();
  return BackendUse{backend, std::move(lock), std::move(callersDevice)};
}

std::string backendFor(const std::string& name, const compute::Image& in) {
  if (in.onHost()) return name;
  if (name == "cpu")
    throw compute::InvalidArgument(
        "backend 'cpu' cannot take a device array (CuPy): use 'auto' or 'cuda', or pass "
        "array.get()");
  const int device = compute::cudaDeviceOfPointer(in.data());
  if (device < 0) throw compute::InvalidArgument("the device array's memory is not on a GPU");
  return "cuda:" + std::to_string(device);
}

}  // namespace stacklens::python
