// cfitsio status codes turned into IoError, and an owning fitsfile handle (internal).
#pragma once

#include <fitsio.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "io/io_error.h"

namespace stacklens::io {

// "what: cfitsio text (first stacked message)" for a non-zero status, clearing cfitsio's
// message stack: the one wording of every cfitsio failure io reports.
std::string cfitsioErrorMessage(int status, const std::string& what);

// Throws IoError(path, cfitsioErrorMessage(status, what)) when status is not 0.
void throwOnCfitsioError(int status, const std::string& path, const std::string& what);

// Collects a cfitsio status through a chain of calls; check() throws with cfitsio's own
// explanation (throwOnCfitsioError).
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
    const int status = std::exchange(status_, 0);
    throwOnCfitsioError(status, path_, what);
  }
  // cfitsioErrorMessage of the status collected so far, which is then cleared.
  std::string message(const std::string& what) {
    return cfitsioErrorMessage(std::exchange(status_, 0), what);
  }

 private:
  std::string path_;
  int status_ = 0;
};

// Closes a file, ignoring errors: a file whose close matters (a write) is closed explicitly with
// FitsHandle::close first.
struct FitsFileCloser {
  void operator()(fitsfile* f) const noexcept;
};

// An owning fitsfile handle: closed when it goes out of scope, on every return and throw path.
class FitsHandle : public std::unique_ptr<fitsfile, FitsFileCloser> {
 public:
  using std::unique_ptr<fitsfile, FitsFileCloser>::unique_ptr;
  // Closes now, with cfitsio's errors (e.g. a failed last flush) in status.
  void close(FitsStatus& status);
};

// A string keyword of the current HDU, or nothing when it is absent or unreadable (cfitsio's
// message stack is left clear either way).
std::optional<std::string> readOptionalKey(fitsfile* f, const std::string& key);

}  // namespace stacklens::io
