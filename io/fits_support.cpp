// The cfitsio error wording and the fitsfile handle's closing.
#include "io/fits_support.h"

namespace stacklens::io {

std::string cfitsioErrorMessage(int status, const std::string& what) {
  char text[FLEN_STATUS] = {};
  fits_get_errstatus(status, text);
  std::string out = what + ": " + text;
  char detail[FLEN_ERRMSG] = {};
  // The first stacked message usually says most (e.g. which keyword was bad).
  if (fits_read_errmsg(detail) && detail[0] && std::string(detail) != text)
    out += " (" + std::string(detail) + ")";
  fits_clear_errmsg();
  return out;
}

void throwOnCfitsioError(int status, const std::string& path, const std::string& what) {
  if (status != 0) throw IoError(path, cfitsioErrorMessage(status, what));
}

void FitsFileCloser::operator()(fitsfile* f) const noexcept {
  int status = 0;
  fits_close_file(f, &status);
  if (status != 0) fits_clear_errmsg();  // or the next error would quote this one
}

void FitsHandle::close(FitsStatus& status) {
  if (fitsfile* f = release()) fits_close_file(f, status.ptr());
}

std::optional<std::string> readOptionalKey(fitsfile* f, const std::string& key) {
  char value[FLEN_VALUE] = {};
  int status = 0;
  fits_read_key_str(f, key.c_str(), value, nullptr, &status);
  if (status != 0) {
    fits_clear_errmsg();
    return std::nullopt;
  }
  return std::string(value);
}

}  // namespace stacklens::io
