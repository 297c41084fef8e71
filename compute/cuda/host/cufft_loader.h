// cuFFT loaded when the program first needs it, not linked: a build with CUDA then runs on a
// machine without NVIDIA's cuFFT (Debian packages none), on the CPU as a build without CUDA does.
// (For compute/cuda only.)
#pragma once

#include <string>

namespace stacklens::compute::cuda {

// Whether cuFFT could be loaded (once per process); else why not, in words a user can act on.
// STACKLENS_CUFFT_LIBRARY names another library file to load instead of the one the build found.
bool cufftLoaded(std::string* why = nullptr);

}  // namespace stacklens::compute::cuda
