// Path checks for reading and the temporary-file-and-rename scheme for writing.
#include "io/file_checks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/io_error.h"

namespace stacklens::io {

uint64_t checkReadableFile(const std::string& path) {
  if (path.empty()) throw IoError(path, "empty file name");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError(path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw IoError(path, "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw IoError(path, "is not a regular file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, std::strerror(errno));
  ::close(fd);
  if (st.st_size == 0) throw IoError(path, "the file is empty");
  return static_cast<uint64_t>(st.st_size);
}

namespace {

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

// The process umask, read without changing it (umask() would race with other threads).
mode_t currentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 022;
}

}  // namespace

AtomicOutput::AtomicOutput(const std::string& path, const std::string& sourcePath) : path_(path) {
  if (path.empty()) throw IoError(path, "empty output file name");
  if (sameFile(path, sourcePath))
    throw IoError(path, "refusing to write over the input file " + sourcePath);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw IoError(path, "is a directory, not a file");
  std::filesystem::path p(path);
  std::filesystem::path folder = p.parent_path();
  if (folder.empty()) folder = ".";
  std::string pattern = (folder / ("." + p.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    throw IoError(path, std::string("cannot create a temporary file in ") + folder.string() + ": " +
                            std::strerror(errno));
  ::close(fd);
  temp_ = pattern;
}

AtomicOutput::~AtomicOutput() {
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicOutput::commit() {
  // The data must be on disk before the new name is, or a crash could leave an empty file
  // where the old one was.
  const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw IoError(path_, "cannot flush the temporary file: " + why);
  }
  ::close(fd);
  ::chmod(temp_.c_str(), 0666 & ~currentUmask());
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    throw IoError(
        path_, std::string("cannot rename the temporary file into place: ") + std::strerror(errno));
  committed_ = true;
}

}  // namespace stacklens::io
