// The cuFFT functions StackLens calls, defined here to forward to the library loaded with dlopen
// (compute/cuda/host/cufft_loader.h). Without the library each returns CUFFT_NOT_SUPPORTED, which
// the backend never meets: cudaUsable() refuses the GPU first, giving cufftLoaded()'s reason.
#include "compute/cuda/host/cufft_loader.h"

#include <cufft.h>
#include <cufftXt.h>
#include <dlfcn.h>

#include <cstdlib>

namespace stacklens::compute::cuda {
namespace {

struct LoadedCufft {
  void* handle = nullptr;
  std::string why;
};

const LoadedCufft& loadedCufft() {
  static const LoadedCufft loaded = [] {
    LoadedCufft l;
    const char* chosen = std::getenv("STACKLENS_CUFFT_LIBRARY");
    const std::string name = chosen && *chosen ? chosen : STACKLENS_CUFFT_SONAME;
    l.handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!l.handle) {
      const char* error = ::dlerror();
      l.why = "cuFFT (" + name + ") could not be loaded" +
              (error ? std::string(": ") + error : std::string()) + "; install NVIDIA's cuFFT " +
              std::to_string(CUFFT_VER_MAJOR) + " (from the CUDA toolkit) to compute on the GPU";
    }
    return l;
  }();
  return loaded;
}

// The library's function `name` of type F, or nullptr.
template <class F>
F* resolve(const char* name) {
  const LoadedCufft& l = loadedCufft();
  return l.handle ? reinterpret_cast<F*>(::dlsym(l.handle, name)) : nullptr;
}

}  // namespace

bool cufftLoaded(std::string* why) {
  const LoadedCufft& l = loadedCufft();
  if (!l.handle && why) *why = l.why;
  return l.handle != nullptr;
}

}  // namespace stacklens::compute::cuda

using stacklens::compute::cuda::resolve;

// Each forwarder looks its function up once.
extern "C" {

cufftResult CUFFTAPI cufftCreate(cufftHandle* handle) {
  static auto* const f = resolve<decltype(cufftCreate)>("cufftCreate");
  return f ? f(handle) : CUFFT_NOT_SUPPORTED;
}

cufftResult CUFFTAPI cufftDestroy(cufftHandle plan) {
  static auto* const f = resolve<decltype(cufftDestroy)>("cufftDestroy");
  return f ? f(plan) : CUFFT_NOT_SUPPORTED;
}

cufftResult CUFFTAPI cufftSetStream(cufftHandle plan, cudaStream_t stream) {
  static auto* const f = resolve<decltype(cufftSetStream)>("cufftSetStream");
  return f ? f(plan, stream) : CUFFT_NOT_SUPPORTED;
}

cufftResult CUFFTAPI cufftSetWorkArea(cufftHandle plan, void* workArea) {
  static auto* const f = resolve<decltype(cufftSetWorkArea)>("cufftSetWorkArea");
  return f ? f(plan, workArea) : CUFFT_NOT_SUPPORTED;
}

cufftResult CUFFTAPI cufftSetAutoAllocation(cufftHandle plan, int autoAllocate) {
  static auto* const f = resolve<decltype(cufftSetAutoAllocation)>("cufftSetAutoAllocation");
  return f ? f(plan, autoAllocate) : CUFFT_NOT_SUPPORTED;
}

cufftResult CUFFTAPI cufftMakePlanMany64(cufftHandle plan, int rank, long long int* n,
                                         long long int* inembed, long long int istride,
                                         long long int idist, long long int* onembed,
                                         long long int ostride, long long int odist, cufftType type,
                                         long long int batch, size_t* workSize) {
  static auto* const f = resolve<decltype(cufftMakePlanMany64)>("cufftMakePlanMany64");
  return f ? f(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch,
               workSize)
           : CUFFT_NOT_SUPPORTED;
}

cufftResult CUFFTAPI cufftExecR2C(cufftHandle plan, cufftReal* idata, cufftComplex* odata) {
  static auto* const f = resolve<decltype(cufftExecR2C)>("cufftExecR2C");
  return f ? f(plan, idata, odata) : CUFFT_NOT_SUPPORTED;
}

cufftResult CUFFTAPI cufftExecC2R(cufftHandle plan, cufftComplex* idata, cufftReal* odata) {
  static auto* const f = resolve<decltype(cufftExecC2R)>("cufftExecC2R");
  return f ? f(plan, idata, odata) : CUFFT_NOT_SUPPORTED;
}

cufftResult CUFFTAPI cufftXtSetJITCallback(cufftHandle plan, const char* lto_callback_symbol_name,
                                           const void* lto_callback_fatbin,
                                           size_t lto_callback_fatbin_size,
                                           cufftXtCallbackType type, void** caller_info) {
  static auto* const f = resolve<decltype(cufftXtSetJITCallback)>("cufftXtSetJITCallback");
  return f ? f(plan, lto_callback_symbol_name, lto_callback_fatbin, lto_callback_fatbin_size, type,
               caller_info)
           : CUFFT_NOT_SUPPORTED;
}

}  // extern "C"
