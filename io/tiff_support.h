// libtiff handles whose errors and warnings are captured per handle instead of printed (internal).
#pragma once

#include <tiffio.h>

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

// Closes the handle at scope exit.
class TiffHandle {
 public:
  explicit TiffHandle(TIFF* t = nullptr) : t_(t) {}
  ~TiffHandle() {
    if (t_) TIFFClose(t_);
  }
  TiffHandle(const TiffHandle&) = delete;
  TiffHandle& operator=(const TiffHandle&) = delete;
  TIFF* get() const { return t_; }
  void reset(TIFF* t) {
    if (t_) TIFFClose(t_);
    t_ = t;
  }
  TIFF* release() {
    TIFF* t = t_;
    t_ = nullptr;
    return t;
  }

 private:
  TIFF* t_;
};

// "what: libtiff's last error" (or just what when libtiff said nothing).
std::string tiffReason(const std::string& what, const TiffMessages& messages);

}  // namespace stacklens::io
