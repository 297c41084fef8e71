// The build's facts come from CMake (version, toolkit and Qt versions), git (the revision) and the
// libraries' own headers and symbols (cuFFT's version macros, FFTW's version string).
#include "version/build_info.h"

#include <fftw3.h>

#include <sstream>

#include "revision.h"

#ifdef STACKLENS_HAVE_CUDA
#include <cufft.h>
#endif

namespace stacklens::build_info {

std::string version() { return STACKLENS_VERSION; }

std::string revision() { return STACKLENS_REVISION; }

std::vector<Component> components() {
  std::vector<Component> list;
#ifdef STACKLENS_HAVE_CUDA
  list.push_back(
      {"CUDA toolkit", STACKLENS_CUDA_TOOLKIT_VERSION, "used when a GPU is found, else the CPU"});
  list.push_back({"cuFFT",
                  std::to_string(CUFFT_VER_MAJOR) + "." + std::to_string(CUFFT_VER_MINOR) + "." +
                      std::to_string(CUFFT_VER_PATCH),
                  ""});
#else
  list.push_back({"CUDA toolkit", "", "processing runs on the CPU"});
  list.push_back({"cuFFT", "", ""});
#endif
  // "fftw-3.3.10-sse2-avx": the library loaded, whose SIMD variants are its own build's.
  std::string fftw = fftwf_version;
  if (fftw.rfind("fftw-", 0) == 0) fftw.erase(0, 5);
  list.push_back({"FFTW", fftw, "single precision, threads"});
#ifdef STACKLENS_QT_VERSION
  list.push_back({"Qt", STACKLENS_QT_VERSION, "the viewer"});
#else
  list.push_back({"Qt", "", "no viewer"});
#endif
  return list;
}

std::string describe(const std::string& program) {
  std::ostringstream out;
  out << program << " " << version() << "\n";
  out << "revision: " << revision() << "\n";
  for (const Component& c : components()) {
    out << c.name << ": " << (c.version.empty() ? "not built" : c.version);
    if (!c.note.empty()) out << " (" << c.note << ")";
    out << "\n";
  }
  return out.str();
}

}  // namespace stacklens::build_info
