// libtiff handles whose errors and warnings are captured per handle instead of printed (internal).
#pragma once

#include <tiffio.h>

#include <memory>
#include <string>

#include "io/io_error.h"

namespace stacklens::io {

// The messages libtiff reported for one handle.
struct TiffMessages {
  std::string errors;
  std::string warnings;
};

// Opens path with libtiff's messages routed into messages (which must outlive the handle);
// returns nullptr on failure with the reason in messages.errors.
TIFF* openTiff(const std::string& path, const char* mode, TiffMessages& messages);

struct TiffCloser {
  void operator()(TIFF* t) const noexcept { TIFFClose(t); }
};

// An owning TIFF handle, closed when it goes out of scope. Declare it after the TiffMessages it
// was opened with, so that it closes first.
class TiffHandle : public std::unique_ptr<TIFF, TiffCloser> {
 public:
  using std::unique_ptr<TIFF, TiffCloser>::unique_ptr;
};

// "what: libtiff's first error" (or just what when libtiff said nothing): the one wording of
// every libtiff failure io reports.
std::string tiffReason(const std::string& what, const TiffMessages& messages);

// Throws IoError(path, tiffReason(what, messages)).
[[noreturn]] void throwTiffError(const std::string& path, const std::string& what,
                                 const TiffMessages& messages);

}  // namespace stacklens::io
