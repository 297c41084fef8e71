// A folder output (a Zarr store) built inside a temporary folder beside its destination and
// renamed into place by commit(), as AtomicOutput (io/file_checks.h) does for single files.
#pragma once

#include <string>

namespace stacklens::io {

// The tree is built at tempPath(), which is NAME inside ".NAME.tmp-PID@HOST-XXXXXX" beside the
// destination (io/temporary_folders.h: a later run removes it once this process is gone).
// Destroyed without commit() it removes everything it wrote. An existing destination is
// replaced only at commit(), in one step (rename with RENAME_EXCHANGE, then the old tree is
// removed), and only when it is itself a Zarr folder: another folder, a file or a symbolic
// link at the destination is refused at once rather than deleted. Refuses to write over
// sourcePath or a folder holding it. Throws IoError naming the destination.
class AtomicFolder {
 public:
  AtomicFolder(const std::string& path, const std::string& sourcePath);
  ~AtomicFolder();
  AtomicFolder(const AtomicFolder&) = delete;
  AtomicFolder& operator=(const AtomicFolder&) = delete;

  const std::string& tempPath() const { return tree_; }
  const std::string& path() const { return path_; }
  // A folder beside the tree, inside the temporary folder, for scratch files that must not end
  // up in the output; removed with it.
  const std::string& scratchPath() const { return scratch_; }
  // Flushes the tree's file system (every chunk file, in one call), renames the tree into place
  // and flushes the parent folder. Refuses once the writers were stopped (io/write_stop.h).
  void commit();

 private:
  std::string path_, folder_, tree_, scratch_;
  bool committed_ = false;
};

}  // namespace stacklens::io
