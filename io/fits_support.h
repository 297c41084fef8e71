// cfitsio status codes turned into IoError, and an owning fitsfile handle (internal).
#pragma once

#include <fitsio.h>

#include <string>

#include "io/io_error.h"

namespace stacklens::io {

// Collects a cfitsio status; check() throws IoError with cfitsio's own explanation.
class FitsStatus {
 public:
  explicit FitsStatus(std::string path) : path_(std::move(path)) {}
  int* ptr() { return &status_; }
  int code() const { return status_; }
  void clear() {
    status_ = 0;
    fits_clear_errmsg();
  }
  void check(const std::string& what) {
    if (status_ != 0) throw IoError(path_, message(what));
  }
  // "what: cfitsio text (status N)", clearing cfitsio's message stack.
  std::string message(const std::string& what) {
    char text[FLEN_STATUS] = {};
    fits_get_errstatus(status_, text);
    std::string out = what + ": " + text;
    char detail[FLEN_ERRMSG] = {};
    // The first stacked message usually says most (e.g. which keyword was bad).
    if (fits_read_errmsg(detail) && detail[0] && std::string(detail) != text)
      out += " (" + std::string(detail) + ")";
    fits_clear_errmsg();
    status_ = 0;
    return out;
  }

 private:
  std::string path_;
  int status_ = 0;
};

// Closes the file when it goes out of scope (errors on that path are ignored: a write that
// matters is closed explicitly with close()).
class FitsHandle {
 public:
  explicit FitsHandle(fitsfile* f = nullptr) : f_(f) {}
  ~FitsHandle() {
    if (f_) {
      int status = 0;
      fits_close_file(f_, &status);
    }
  }
  FitsHandle(const FitsHandle&) = delete;
  FitsHandle& operator=(const FitsHandle&) = delete;
  fitsfile* get() const { return f_; }
  // Hands the file over to the caller, who closes it.
  fitsfile* release() {
    fitsfile* f = f_;
    f_ = nullptr;
    return f;
  }
  void close(FitsStatus& status) {
    if (f_) fits_close_file(f_, status.ptr());
    f_ = nullptr;
  }

 private:
  fitsfile* f_;
};

}  // namespace stacklens::io
