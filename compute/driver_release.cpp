#include "compute/driver_release.h"

#include <dlfcn.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace stacklens::compute {
namespace {

bool looksLikeRelease(const std::string& w) {
  return !w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) &&
         w.find('.') != std::string::npos;
}

std::string fromProc() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  return std::getline(f, line) ? driverReleaseFromProcLine(line) : "";
}

std::string fromNvml() {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) return "";
  using InitFn = int (*)();
  using VersionFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(nvml, "nvmlInit_v2"));
  auto version = reinterpret_cast<VersionFn>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(nvml, "nvmlShutdown"));
  char text[96] = {0};
  const bool ok = init && version && init() == 0 && version(text, sizeof text) == 0;
  if (ok && shutdown) shutdown();
  dlclose(nvml);
  return ok ? text : "";
}

}  // namespace

std::string driverReleaseFromProcLine(const std::string& line) {
  std::istringstream words(line);
  std::string w;
  bool afterModule = false;
  while (words >> w) {
    if (afterModule && looksLikeRelease(w)) return w;
    if (w == "Module") afterModule = true;
  }
  return "";
}

std::string driverRelease() {
  static const std::string release = [] {
    std::string r = fromProc();
    return r.empty() ? fromNvml() : r;
  }();
  return release;
}

}  // namespace stacklens::compute
