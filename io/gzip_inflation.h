// A .fits.gz inflated into an unnamed temporary file, so that a compressed plane of any size is
// then read like a plain FITS file: slice by slice, rows and strided samples by pread(), never
// whole in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/unique_fd.h"

namespace stacklens::io {

class InflatedFile {
 public:
  InflatedFile(UniqueFd fd, uint64_t size);
  // A name that opens the file again while this object lives (/proc/self/fd/N): cfitsio and
  // pread() read the inflated bytes through it.
  const std::string& readPath() const { return readPath_; }
  uint64_t size() const { return size_; }

 private:
  UniqueFd fd_;
  uint64_t size_ = 0;
  std::string readPath_;
};

// The folder the inflated file goes to: $TMPDIR if set, else /var/tmp (on disk where /tmp may be
// memory).
std::string inflationFolder();

// Inflates every member of the gzip file at path (concatenated members are one stream to
// gzread; cfitsio's own inflation sees only the first and trusts the trailer's size). The file
// has no name from the start, so nothing is left behind however the program ends. Throws
// IoError(path, reason) for a damaged stream, content that is not FITS, a temporary folder
// without room (it stops while a margin of the folder's space is still free: a small gzip bomb
// can claim a thousand times its size) or reads stopped (io/read_stop.h).
std::shared_ptr<const InflatedFile> inflateGzip(const std::string& path);

}  // namespace stacklens::io
