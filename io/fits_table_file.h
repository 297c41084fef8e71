// A FITS file opened for the catalog reader: read whole into memory (a .gz inflated there, up to
// the allocation cap), its headers checked by our own pass (io/fits_prescan.h) before cfitsio
// parses any, a rejected HDU's header replaced by a harmless one. cfitsio 4.2.0 crashes on some
// damaged headers while it moves through HDUs; the stack reader guards against the same.
// (Internal to io.)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/fits_support.h"

namespace stacklens::io {

class FitsTableFile {
 public:
  // IoError naming path: unreadable, not FITS, a .gz larger than the allocation cap, or a file
  // cfitsio cannot open.
  explicit FitsTableFile(const std::string& path);
  FitsTableFile(const FitsTableFile&) = delete;
  FitsTableFile& operator=(const FitsTableFile&) = delete;

  fitsfile* get() const { return file_.get(); }
  // The bytes cfitsio reads (the inflated size for a .gz).
  uint64_t size() const { return size_; }
  // "HDU n: reason" for each HDU the header pass rejected (cfitsio sees an empty image there).
  const std::vector<std::string>& rejected() const { return rejected_; }

 private:
  std::vector<char> bytes_;
  std::vector<std::string> rejected_;
  // cfitsio's memory driver keeps the addresses of these two.
  void* pointer_ = nullptr;
  size_t size_ = 0;
  FitsHandle file_;  // declared last: closed before the bytes it reads go
};

}  // namespace stacklens::io
