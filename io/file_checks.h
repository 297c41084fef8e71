// Checks on input and output paths made before any library touches them, so that errors name
// the real cause (missing, a folder, no permission, empty) instead of a library's error code.
#pragma once

#include <cstdint>
#include <string>

namespace stacklens::io {

// Throws IoError unless path is an existing, readable, non-empty regular file; returns its size.
uint64_t checkReadableFile(const std::string& path);

// A file written under a temporary name in the destination's folder and renamed into place by
// commit(); destroyed without commit() it removes the temporary file. Refuses to write over
// sourcePath (the same file by inode, or the same canonical path).
class AtomicOutput {
 public:
  AtomicOutput(const std::string& path, const std::string& sourcePath);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& tempPath() const { return temp_; }
  const std::string& path() const { return path_; }
  // Makes the temporary file world-readable as umask allows and renames it to path().
  void commit();

 private:
  std::string path_, temp_;
  bool committed_ = false;
};

}  // namespace stacklens::io
