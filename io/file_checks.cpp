// Path checks for reading and the temporary-file-and-rename scheme for writing.
#include "io/file_checks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/io_error.h"
#include "io/temporary_folders.h"
#include "io/unique_fd.h"
#include "io/write_stop.h"

namespace stacklens::io {

uint64_t checkReadableFile(const std::string& path) {
  if (path.empty()) throw IoError(path, "empty file name");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError(path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw IoError(path, "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw IoError(path, "is not a regular file");
  if (UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)).get() < 0)
    throw IoError(path, std::strerror(errno));
  if (st.st_size == 0) throw IoError(path, "the file is empty");
  return static_cast<uint64_t>(st.st_size);
}

uint64_t allocationCap() {
  // STACKLENS_ALLOCATION_CAP_MB lowers it (the fuzzers run within 2 GB; a small machine may want
  // less than half its memory).
  if (const char* mb = std::getenv("STACKLENS_ALLOCATION_CAP_MB")) {
    const unsigned long long v = std::strtoull(mb, nullptr, 10);
    if (v > 0) return v << 20;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const uint64_t half = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) / 2 : 4ull << 30;
  return std::clamp<uint64_t>(half, 1ull << 30, 64ull << 30);
}

bool sameFile(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  auto ca = std::filesystem::weakly_canonical(a, ea);
  auto cb = std::filesystem::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

namespace {

// The process umask, read without changing it (umask() would race with other threads).
mode_t currentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 022;
}

// The file a destination names: a symbolic link's target (resolved whether or not it exists).
std::string resolvedDestination(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  std::error_code ec;
  std::filesystem::path target = std::filesystem::read_symlink(path, ec);
  if (ec) throw IoError(path, "cannot read the symbolic link: " + ec.message());
  if (target.is_relative()) target = std::filesystem::path(path).parent_path() / target;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(target, ec);
  return ec ? target.string() : resolved.string();
}

}  // namespace

void flushFolder(const std::string& folder, const std::string& path) {
  const UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0 || ::fsync(fd.get()) != 0)
    throw IoError(
        path, std::string("written, but its folder could not be flushed: ") + std::strerror(errno));
}

AtomicOutput::AtomicOutput(const std::string& path, const std::string& sourcePath) {
  if (path.empty()) throw IoError(path, "empty output file name");
  path_ = resolvedDestination(path);
  if (sameFile(path_, sourcePath))
    throw IoError(path, "refusing to write over the input file " + sourcePath);
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw IoError(path, "is a directory, not a file");
  std::filesystem::path p(path_);
  std::filesystem::path parent = p.parent_path();
  if (parent.empty()) parent = ".";
  // Folders left by runs that died on this output go first; the new one is named so that a
  // later run can tell the same of it (io/temporary_folders.h).
  noticeTemporaries(sweepTemporaryFolders(parent.string(), p.filename().string()));
  std::string pattern = temporaryFolderPattern(parent.string(), p.filename().string());
  if (!::mkdtemp(pattern.data()))
    throw IoError(path, std::string("cannot create a temporary folder in ") + parent.string() +
                            ": " + std::strerror(errno));
  folder_ = pattern;
  temp_ = (std::filesystem::path(folder_) / p.filename()).string();
  if (UniqueFd(::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)).get() < 0) {
    const std::string why = std::strerror(errno);
    ::rmdir(folder_.c_str());
    throw IoError(path, "cannot create the temporary file: " + why);
  }
}

AtomicOutput::~AtomicOutput() {
  if (committed_) return;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  if (!folder_.empty()) ::rmdir(folder_.c_str());
}

void AtomicOutput::commit() {
  throwIfWritesStopped(path_);
  // The data must be on disk before the new name is, or a crash could leave an empty file
  // where the old one was.
  {
    const UniqueFd fd(::open(temp_.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 || ::fsync(fd.get()) != 0)
      throw IoError(path_, std::string("cannot flush the temporary file: ") + std::strerror(errno));
  }
  struct stat old {};
  const mode_t mode =
      ::stat(path_.c_str(), &old) == 0 ? (old.st_mode & 07777) : (0666 & ~currentUmask());
  ::chmod(temp_.c_str(), mode);
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    throw IoError(
        path_, std::string("cannot rename the temporary file into place: ") + std::strerror(errno));
  committed_ = true;
  ::rmdir(folder_.c_str());
  std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  flushFolder(parent.empty() ? "." : parent.string(), path_);
}

}  // namespace stacklens::io
