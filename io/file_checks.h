// Checks on input and output paths made before any library touches them, so that errors name
// the real cause (missing, a folder, no permission, empty) instead of a library's error code.
#pragma once

#include <cstdint>
#include <string>

namespace stacklens::io {

// Throws IoError unless path is an existing, readable, non-empty regular file; returns its size.
uint64_t checkReadableFile(const std::string& path);

// The most bytes a reader allocates for what a file claims to hold (a compressed TIFF page, the
// head of a FITS file read around a damaged HDU): half the machine's memory, at most 64 GiB. A
// claim above it is refused with a message rather than trusted; below it a valid file opens
// whatever its compression ratio. STACKLENS_ALLOCATION_CAP_MB sets it instead.
uint64_t allocationCap();

// Whether a and b name the same file or folder (by inode, else by canonical path); false when
// either is empty.
bool sameFile(const std::string& a, const std::string& b);

// Makes a rename inside folder durable (fsync of the folder); an IoError naming path when it
// cannot be flushed.
void flushFolder(const std::string& folder, const std::string& path);

// A file written under a temporary name in the destination's folder and renamed into place by
// commit(); destroyed without commit() it removes the temporary file. Refuses to write over
// sourcePath (the same file by inode, or the same canonical path).
//
// The temporary file is created exclusively inside a folder of its own (mode 0700) beside the
// destination, so that the libraries that reopen it by name cannot be led elsewhere; the folder
// is named after this process and host, and those a dead process left for the same destination
// are removed first (io/temporary_folders.h). commit() refuses once the writers were stopped
// (io/write_stop.h). A file that
// is replaced keeps its mode bits. A destination that is a symbolic link is written through: the
// link's target is replaced and the link stays, pointing at the new data (replacing the link
// itself would leave the old data where the link points and a copy beside the link, which is not
// what someone who linked a data file into a working folder means by "save over it"). The folder
// is flushed after the rename, so the new name survives a crash.
class AtomicOutput {
 public:
  AtomicOutput(const std::string& path, const std::string& sourcePath);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& tempPath() const { return temp_; }
  const std::string& path() const { return path_; }  // the symbolic link's target, if it was one
  // Gives the temporary file the replaced file's mode (else read-write as umask allows), renames
  // it to path() and flushes the folder.
  void commit();

 private:
  std::string path_, folder_, temp_;
  bool committed_ = false;
};

}  // namespace stacklens::io
