// Inflating a .fits.gz into an unnamed temporary file.
#include "io/gzip_inflation.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <zlib.h>

#include "io/io_error.h"
#include "io/read_stop.h"

namespace stacklens::io {
namespace {

struct GzCloser {
  void operator()(gzFile_s* in) const noexcept { gzclose(in); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

constexpr size_t kStep = size_t(8) << 20;  // bytes inflated between looks at the stop flag
constexpr uint64_t kMinimumFree = uint64_t(1) << 30;

// An unnamed file in folder: O_TMPFILE where the file system has it, else a named one removed at
// once (the name exists for a moment only, and is ours alone).
UniqueFd unnamedFile(const std::string& folder, const std::string& path) {
  UniqueFd fd(::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (fd.get() >= 0) return fd;
  std::string name = folder + "/stacklens-inflated-XXXXXX";
  fd = UniqueFd(::mkostemp(name.data(), O_CLOEXEC));
  if (fd.get() < 0)
    throw IoError(path, "cannot make a temporary file in " + folder + " to inflate it into (" +
                            std::strerror(errno) + "; set TMPDIR to another folder)");
  ::unlink(name.c_str());
  return fd;
}

// Whether the folder's file system still has room beyond the margin: 1 GiB or a twentieth of
// it, whichever is more, is left for everything else on it.
bool roomLeft(int fd) {
  struct statvfs s {};
  if (::fstatvfs(fd, &s) != 0) return true;  // cannot tell: the write itself will say
  const uint64_t total = uint64_t(s.f_blocks) * s.f_frsize;
  const uint64_t free = uint64_t(s.f_bavail) * s.f_frsize;
  return free > std::max(kMinimumFree, total / 20);
}

void writeAll(int fd, const char* data, size_t n, uint64_t at, const std::string& path,
              const std::string& folder) {
  while (n > 0) {
    const ssize_t put = ::pwrite(fd, data, n, static_cast<off_t>(at));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0)
      throw IoError(path, "cannot inflate it into " + folder + " (" + std::strerror(errno) +
                              "; set TMPDIR to a folder with more room)");
    data += put;
    at += static_cast<uint64_t>(put);
    n -= static_cast<size_t>(put);
  }
}

}  // namespace

InflatedFile::InflatedFile(UniqueFd fd, uint64_t size)
    : fd_(std::move(fd)), size_(size), readPath_("/proc/self/fd/" + std::to_string(fd_.get())) {}

std::string inflationFolder() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? std::string(tmp) : std::string("/var/tmp");
}

std::shared_ptr<const InflatedFile> inflateGzip(const std::string& path) {
  const GzFile in(gzopen(path.c_str(), "rb"));
  if (!in) throw IoError(path, "cannot open the gzip stream");
  const std::string folder = inflationFolder();
  UniqueFd out = unnamedFile(folder, path);
  std::vector<char> buffer(kStep);
  uint64_t used = 0;
  uint64_t nextRoomCheck = 0;
  for (;;) {
    if (readsStopped()) throw ReadsStopped(path);
    const int got = gzread(in.get(), buffer.data(), static_cast<unsigned>(buffer.size()));
    if (got < 0) {
      int code = 0;
      throw IoError(path, "damaged gzip file: " + std::string(gzerror(in.get(), &code)));
    }
    if (got == 0) break;
    if (used == 0 && (got < 9 || std::memcmp(buffer.data(), "SIMPLE  =", 9) != 0))
      throw IoError(path, "a gzip file that does not hold a FITS file");
    if (used >= nextRoomCheck) {
      if (!roomLeft(out.get()))
        throw IoError(path, "inflating it would leave too little room in " + folder + " (" +
                                std::to_string(used >> 20) +
                                " MiB inflated so far; set TMPDIR to a folder with more room)");
      nextRoomCheck = used + kStep * 8;
    }
    writeAll(out.get(), buffer.data(), static_cast<size_t>(got), used, path, folder);
    used += static_cast<uint64_t>(got);
  }
  if (used < 2880)
    throw IoError(path, "a gzip file that does not hold a FITS file (" + std::to_string(used) +
                            " bytes decompressed)");
  return std::make_shared<const InflatedFile>(std::move(out), used);
}

}  // namespace stacklens::io
