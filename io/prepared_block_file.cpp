// writeBoxIntoPreparedFile: a box from another process into the file StackBlockWriter prepared,
// mapped where its blocks can be reserved, else row by row through pwrite.
#include "io/prepared_block_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/block_boxes.h"
#include "io/io_error.h"
#include "io/prepared_zarr_boxes.h"
#include "io/unique_fd.h"

namespace stacklens::io {
namespace {

UniqueFd openPrepared(const PreparedBlockFile& f) {
  UniqueFd fd(::open(f.path.c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0)
    throw IoError(f.target, "cannot open the prepared file " + f.path + ": " +
                                std::strerror(errno) +
                                (errno == ENOENT ? " (the run was stopped, or this worker does not "
                                                   "see the output's folder)"
                                                 : ""));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || st.st_size != f.fileBytes)
    throw IoError(f.target, f.path + " is not the file prepared for this output (its length)");
  return fd;
}

// Reserves [offset, offset + bytes) (in tmpfs this allocates the pages; on a disk the preparing
// process reserved the whole file and this finds it done), so that a write into the mapping
// cannot meet a full file system (a signal, not an error). False where the file system cannot.
bool reserved(int fd, int64_t offset, int64_t bytes, const std::string& target) {
  if (::fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(bytes)) == 0) return true;
  if (errno == ENOSPC) throw IoError(target, "not enough free space for the output");
  return false;
}

// The box into its part of the file mapped (from the page its first sample is on); false when it
// cannot be mapped.
bool writeMapped(int fd, const Placement& file, const Box& b, const BoxValues& values) {
  const int64_t first = file.offset(b.z0, b.y0, b.x0);
  const int64_t end = file.offset(b.z1 - 1, b.y1 - 1, b.x1);
  const auto page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  const int64_t start = page > 0 ? first / page * page : 0;
  const auto bytes = static_cast<size_t>(end - start);
  void* m =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(start));
  if (m == MAP_FAILED) return false;
  Placement here = file;
  here.dataStart -= start;
  try {
    writeBoxMapped(static_cast<char*>(m), here, b, values);
  } catch (...) {
    ::munmap(m, bytes);
    throw;
  }
  ::munmap(m, bytes);
  return true;
}

}  // namespace

void writeBoxIntoPreparedFile(const PreparedBlockFile& f, int64_t z0, int64_t z1, int64_t y0,
                              int64_t y1, int64_t x0, int64_t x1, const float* data,
                              int64_t rowStride, int64_t sliceStride) {
  if (z0 < 0 || y0 < 0 || x0 < 0 || z1 > f.z || y1 > f.y || x1 > f.x || z0 >= z1 || y0 >= y1 ||
      x0 >= x1)
    throw IoError(f.target, "a block outside the stack");
  if (f.samples == BlockSamples::ZarrFloat32)
    return writeBoxIntoPreparedZarr(f, {z0, z1, y0, y1, x0, x1}, data, rowStride, sliceStride);
  const UniqueFd fd = openPrepared(f);
  const Placement file{f.dataStart, f.y, f.x, encodingOf(f.samples)};
  const Box box{z0, z1, y0, y1, x0, x1};
  BoxValues values = BoxValues::contiguous(box, data);
  if (rowStride > 0) values.rowStride = rowStride;
  if (sliceStride > 0) values.sliceStride = sliceStride;
  const bool network = onNetworkFileSystem(fd.get());
  const int64_t first = file.offset(z0, y0, x0), end = file.offset(z1 - 1, y1 - 1, x1);
  if (network || mappingTurnedOff() || !reserved(fd.get(), first, end - first, f.target) ||
      !writeMapped(fd.get(), file, box, values))
    writeBoxRowsUnmerged(fd.get(), file, box, values, f.target);
  // The preparing process flushes the file before renaming it, but on a network file system its
  // flush does not reach what this host still caches.
  if (network && ::fsync(fd.get()) != 0)
    throw IoError(f.target, std::string("cannot flush a block: ") + std::strerror(errno));
  // Else the box's pages start going to disk now, while the next chunks compute, so that the
  // flush before the rename has little left to do (failures are left to that flush).
  if (!network) ::sync_file_range(fd.get(), first, end - first, SYNC_FILE_RANGE_WRITE);
}

}  // namespace stacklens::io
