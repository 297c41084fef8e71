// The Zarr store for local files: metadata, chunks and shard ranges read with pread.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/io_error.h"
#include "io/unique_fd.h"
#include "io/zarr_store.h"

namespace stacklens::io {

namespace {

// The open file and its size, or fd -1 where it does not exist (a chunk never written).
struct OpenedFile {
  UniqueFd fd;
  int64_t size = 0;
};

OpenedFile openIfPresent(const std::string& path) {
  OpenedFile f;
  f.fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return f;
    throw IoError(path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(f.fd.get(), &st) != 0) throw IoError(path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw IoError(path, "is not a regular file");
  f.size = st.st_size;
  return f;
}

// Reads n bytes at offset; throws IoError on a short read (the file shrank under us).
StoreBytes readAt(int fd, int64_t offset, int64_t n, const std::string& path) {
  StoreBytes out(static_cast<size_t>(n));
  int64_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out.data() + done, size_t(n - done), off_t(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw IoError(path, std::strerror(errno));
    if (got == 0) throw IoError(path, "the file ends early");
    done += got;
  }
  return out;
}

class LocalZarrStore : public ZarrStore {
 public:
  bool exists(const std::string& location) const override {
    struct stat st {};
    return ::stat(location.c_str(), &st) == 0;
  }

  std::optional<StoreBytes> read(const std::string& location, int64_t maxBytes,
                                 StoreObject) const override {
    OpenedFile f = openIfPresent(location);
    if (f.fd.get() < 0) return std::nullopt;
    if (f.size > maxBytes) throw StoreObjectTooLarge(location, f.size, maxBytes);
    return readAt(f.fd.get(), 0, f.size, location);
  }

  std::optional<StoreRange> readRange(const std::string& location, int64_t offset,
                                      int64_t n) const override {
    OpenedFile f = openIfPresent(location);
    if (f.fd.get() < 0) return std::nullopt;
    StoreRange r;
    r.objectSize = f.size;
    const int64_t from = offset < 0 ? std::max<int64_t>(0, f.size - n) : std::min(offset, f.size);
    r.bytes = readAt(f.fd.get(), from, std::min(n, f.size - from), location);
    return r;
  }

  // Decoding dominates local reads; the machines StackLens runs on have at least two cores,
  // usually shared with the viewer's other work.
  int parallelReads() const override { return 4; }
};

}  // namespace

std::shared_ptr<const ZarrStore> localZarrStore() {
  static const auto store = std::make_shared<const LocalZarrStore>();
  return store;
}

}  // namespace stacklens::io
