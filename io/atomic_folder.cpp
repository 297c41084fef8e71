// AtomicFolder: the tree built in a temporary folder, swapped into place at commit.
#include "io/atomic_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "io/file_checks.h"
#include "io/io_error.h"
#include "io/ome_zarr.h"
#include "io/temporary_folders.h"
#include "io/unique_fd.h"
#include "io/write_stop.h"

namespace stacklens::io {

namespace {

std::string withoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// Whether inner is folder or lies inside it (by canonical paths; inner need not exist).
bool inside(const std::string& inner, const std::string& folder) {
  if (inner.empty()) return false;
  std::error_code ea, eb;
  const std::string a = std::filesystem::weakly_canonical(inner, ea).string();
  const std::string b = std::filesystem::weakly_canonical(folder, eb).string();
  return !ea && !eb && (a == b || a.rfind(b + "/", 0) == 0);
}

}  // namespace

AtomicFolder::AtomicFolder(const std::string& path, const std::string& sourcePath) {
  if (path.empty()) throw IoError(path, "empty output folder name");
  path_ = withoutTrailingSlashes(path);
  if (sameFile(path_, sourcePath) || inside(sourcePath, path_))
    throw IoError(path, "refusing to write over the input " + sourcePath);
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      throw IoError(path, "is a symbolic link; name the folder it points to to replace it");
    if (!S_ISDIR(st.st_mode))
      throw IoError(path, "exists and is not a folder; a Zarr output is a folder");
    if (!isZarrFolder(path_))
      throw IoError(path, "is a folder that holds no Zarr metadata; not replacing it");
  }
  std::filesystem::path p(path_);
  std::filesystem::path parent = p.parent_path();
  if (parent.empty()) parent = ".";
  const std::string name = p.filename().string();
  noticeTemporaries(sweepTemporaryFolders(parent.string(), name));
  std::string pattern = temporaryFolderPattern(parent.string(), name);
  if (!::mkdtemp(pattern.data()))
    throw IoError(path, std::string("cannot create a temporary folder in ") + parent.string() +
                            ": " + std::strerror(errno));
  folder_ = pattern;
  tree_ = folder_ + "/" + name;
  scratch_ = folder_ + "/" + name + ".partial";
  if (::mkdir(tree_.c_str(), 0777) != 0 || ::mkdir(scratch_.c_str(), 0700) != 0) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
    throw IoError(path, "cannot create the temporary folder: " + why);
  }
}

AtomicFolder::~AtomicFolder() {
  if (committed_ || folder_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

void AtomicFolder::commit() {
  throwIfWritesStopped(path_);
  // The chunks must be on disk before the new name is, or a crash could leave a store whose
  // chunk files are empty where the old one was. syncfs flushes every file of the tree at once.
  {
    const UniqueFd fd(::open(tree_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0 || ::syncfs(fd.get()) != 0)
      throw IoError(path_,
                    std::string("cannot flush the temporary folder: ") + std::strerror(errno));
  }
  std::error_code ignored;
  std::filesystem::remove_all(scratch_, ignored);
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0) {
    if (::renameat2(AT_FDCWD, tree_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) != 0 &&
        ::rename(tree_.c_str(), path_.c_str()) != 0)
      throw IoError(path_, std::string("cannot rename the temporary folder into place: ") +
                               std::strerror(errno));
  } else {
    if (!S_ISDIR(st.st_mode) || !isZarrFolder(path_))
      throw IoError(path_, "appeared meanwhile and is not a Zarr folder; not replacing it");
    // One step: the old tree takes the new one's place in the temporary folder, whatever the
    // moment a reader looks. Where the file system cannot exchange, the old tree is moved aside
    // first (a reader may then briefly find nothing at the destination).
    if (::renameat2(AT_FDCWD, tree_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0) {
      const std::string aside = folder_ + "/replaced";
      if (::rename(path_.c_str(), aside.c_str()) != 0)
        throw IoError(
            path_, std::string("cannot move the replaced folder aside: ") + std::strerror(errno));
      if (::rename(tree_.c_str(), path_.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::rename(aside.c_str(), path_.c_str());
        throw IoError(path_, "cannot rename the temporary folder into place: " + why);
      }
    }
  }
  committed_ = true;
  std::filesystem::remove_all(folder_, ignored);  // the replaced tree, if any
  std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  flushFolder(parent.empty() ? "." : parent.string(), path_);
}

}  // namespace stacklens::io
