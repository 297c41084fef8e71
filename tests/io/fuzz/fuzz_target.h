// What the FITS and TIFF fuzzers (and the corpus replay test) do with one input: open it as a
// stack through a temporary file, read every slice and format its WCS. Any outcome but success
// or IoError (a crash, a sanitizer report, another exception type) is a bug.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/stack.h"
#include "io/wcs.h"

namespace stacklens::io::fuzz {

// Inputs are written to a file because the readers take paths (as the viewer does); the
// extension only names the file, openStack goes by content.
inline std::string tempPathFor(const char* extension) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/stacklens-fuzz-" + std::to_string(::getpid()) +
         extension;
}

// Returns true when the input opened and every slice read.
inline bool openAndReadEverything(const std::string& path) {
  // The fuzzers run within -rss_limit_mb=2048 (and the replay in CI on small machines): what a
  // file may make the readers allocate stays well below (their allocation cap,
  // io/file_checks.h).
  static const bool capped = (::setenv("STACKLENS_ALLOCATION_CAP_MB", "512", 0), true);
  (void)capped;
  try {
    auto reader = openStack(path);
    const StackInfo& info = reader->info();
    // The readers accept big images that the file can hold; the fuzzer's memory is limited.
    if (info.y * info.x > (int64_t{1} << 22)) return true;
    std::vector<float> slice(static_cast<size_t>(info.y * info.x));
    for (int64_t k = 0; k < info.z && k < 64; ++k) reader->readSlice(k, slice.data());
    if (const Wcs* wcs = reader->wcs()) {
      wcs->axisTypes();
      wcs->pixelToWorld(0.5, 1.5, 0);
      wcs->formatCelestial(0, 0, 0);
      wcs->formatSpectral(0);
    }
    return true;
  } catch (const IoError&) {
    return false;
  }
}

inline int fuzzOneInput(const uint8_t* data, size_t size, const char* extension) {
  const std::string path = tempPathFor(extension);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  openAndReadEverything(path);
  std::remove(path.c_str());
  return 0;
}

}  // namespace stacklens::io::fuzz
