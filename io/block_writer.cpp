// StackBlockWriter: FITS boxes at their place (whole rows pwritten into the data unit by several
// threads; a single image through cfitsio) or TIFF pages in order as they fill; the temporary file
// is renamed into place at the end.
#include "io/block_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "io/file_checks.h"
#include "io/fits_support.h"
#include "io/write_back.h"
#include "io/writers.h"

namespace stacklens::io {

namespace {

// A file descriptor closed with its owner.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// All of [offset, offset + bytes) through pread or pwrite, resuming after short transfers.
template <class Transfer, class Pointer>
void transferAll(Transfer transfer, int fd, Pointer data, size_t bytes, int64_t offset,
                 const std::string& path, const char* what) {
  while (bytes > 0) {
    const ssize_t done = transfer(fd, data, bytes, static_cast<off_t>(offset));
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) throw IoError(path, std::string(what) + ": " + std::strerror(errno));
    data += done;
    bytes -= static_cast<size_t>(done);
    offset += done;
  }
}

void writeAll(int fd, const void* data, size_t bytes, int64_t offset, const std::string& path) {
  transferAll(::pwrite, fd, static_cast<const char*>(data), bytes, offset, path, "cannot write");
}

void readAll(int fd, void* data, size_t bytes, int64_t offset, const std::string& path) {
  transferAll(::pread, fd, static_cast<char*>(data), bytes, offset, path, "cannot read back");
}

// cfitsio writes the header of a stack with two slices (it fills a data unit with zeros when
// the file is closed: for a whole stack that would be all of it); then NAXIS3 becomes the real
// length. The value field is fixed (columns 11–30, right-justified), so nothing else moves.
void setSliceCount(int fd, int64_t dataStart, int64_t z, const std::string& path) {
  std::string header(static_cast<size_t>(dataStart), ' ');
  if (::pread(fd, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size()))
    throw IoError(path, "cannot read back the header written");
  for (size_t c = 0; c + 80 <= header.size(); c += 80)
    if (header.compare(c, 9, "NAXIS3  =") == 0) {
      const std::string v = std::to_string(z);
      const std::string field = std::string(20 - v.size(), ' ') + v;
      writeAll(fd, field.data(), field.size(), static_cast<int64_t>(c + 10), path);
      return;
    }
  throw IoError(path, "the header written has no NAXIS3");
}

// Large stacks whose rows are whole memory pages get a data unit that starts on a page too: the
// pages of a box narrower than the stack are then its own, and go back to disk as soon as the box
// is written instead of waiting for the other boxes of its band (see writeBox). The header is
// padded with blank records (allowed anywhere before END); the data unit then starts at a
// multiple of both 2880 and the page size (at most 64 records of 2880 bytes for 4 KiB pages).
int64_t pageAlignedDataStart(int fd, int64_t dataStart, int64_t rowBytes, int64_t dataBytes,
                             const std::string& path) {
  const auto page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  if (page <= 0 || rowBytes % page != 0 || dataBytes < (int64_t(32) << 20)) return dataStart;
  const int64_t both = std::lcm(int64_t(2880), page);
  const int64_t aligned = (dataStart + both - 1) / both * both;
  if (aligned == dataStart) return dataStart;
  std::string header(static_cast<size_t>(dataStart), ' ');
  if (::pread(fd, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size()))
    throw IoError(path, "cannot read back the header written");
  size_t end = std::string::npos;
  for (size_t c = 0; c + 80 <= header.size(); c += 80)
    if (header.compare(c, 8, "END     ") == 0) {
      end = c;
      break;
    }
  if (end == std::string::npos) throw IoError(path, "the header written has no END");
  header.resize(static_cast<size_t>(aligned), ' ');
  header.replace(end, 3, "   ");
  header.replace(static_cast<size_t>(aligned) - 80, 3, "END");
  writeAll(fd, header.data(), header.size(), 0, path);
  return aligned;
}

}  // namespace

struct StackBlockWriter::State {
  State(const std::string& p, const std::string& source) : path(p), out(p, source) {}
  std::string path;
  AtomicOutput out;  // removes the temporary file unless committed
  // Closed before the temporary file is removed. FITS stacks: boxes go to their place at once,
  // through the descriptor; a single FITS image through cfitsio.
  Descriptor data;
  std::unique_ptr<WriteBack> writeBack;  // of data.fd; stopped before it closes
  int64_t dataStart = 0;
  std::unique_ptr<FitsHandle> file;
  // TIFF: pages in order; a slice waits here until boxes have covered all of it.
  std::unique_ptr<TiffPageWriter> pages;
  std::map<int64_t, std::pair<std::vector<float>, int64_t>> waiting;  // z → (pixels, covered)
  int64_t nextPage = 0;
  // FITS stacks: columns written so far of each band of rows (z0, z1, y0, y1) that boxes narrower
  // than the stack share; its pages go back to disk once, when its last box is in.
  std::map<std::array<int64_t, 4>, int64_t> bandColumns;
  // FITS stacks: the file mapped whole (header included, from offset 0), when the file system
  // could reserve its blocks; boxes are then written straight into it, several at once.
  char* mapped = nullptr;
  size_t mappedBytes = 0;
  // In tmpfs the blocks are reserved while the first boxes compute: 0 or the reservation's errno.
  std::shared_future<int> reserved;
  // Held by writeBox except for the mapped FITS path, and for the band records always.
  std::mutex lock, bands;
  int64_t z = 0, y = 0, x = 0;
  ~State() {
    if (reserved.valid()) reserved.wait();
    if (mapped) ::munmap(mapped, mappedBytes);
  }
};

bool StackBlockWriter::supports(const std::string& path) {
  return outputFormat(path) != OutputFormat::Unknown;
}

StackBlockWriter::StackBlockWriter(const std::string& path, int64_t z, int64_t y, int64_t x,
                                   const WriteOptions& options) {
  if (!supports(path))
    throw IoError(path, "unknown output format (use .fits, .fit, .fts, .tif or .tiff)");
  if (z < 1 || y < 1 || x < 1) throw IoError(path, "cannot write an empty or negative shape");
  state_ = std::make_unique<State>(path, options.sourcePath);
  state_->z = z;
  state_->y = y;
  state_->x = x;
  if (outputFormat(path) == OutputFormat::Tiff) {
    state_->pages =
        std::make_unique<TiffPageWriter>(state_->out.tempPath(), path, SampleKind::Float32, z, y, x,
                                         options, tiffDescription(z, options));
    return;
  }
  if (z == 1) {
    state_->file = std::make_unique<FitsHandle>(
        createFitsImage(state_->out.tempPath(), path, SampleKind::Float32, z, y, x, options));
    return;
  }
  FitsStatus status(path);
  {
    FitsHandle header(
        createFitsImage(state_->out.tempPath(), path, SampleKind::Float32, 2, y, x, options));
    LONGLONG headStart = 0, dataStart = 0, dataEnd = 0;
    fits_get_hduaddrll(header.get(), &headStart, &dataStart, &dataEnd, status.ptr());
    status.check("cannot locate the data unit");
    state_->dataStart = static_cast<int64_t>(dataStart);
    header.close(status);
    status.check("cannot write the header");
  }
  Descriptor& d = state_->data;
  d.fd = ::open(state_->out.tempPath().c_str(), O_RDWR | O_CLOEXEC);
  if (d.fd < 0) throw IoError(path, std::string("cannot reopen the file: ") + std::strerror(errno));
  state_->writeBack = std::make_unique<WriteBack>(d.fd);
  setSliceCount(d.fd, state_->dataStart, z, path);
  // The data unit at its full length (whole 2880-byte records), zeros until boxes arrive.
  const int64_t bytes = z * y * x * int64_t(sizeof(float));
  state_->dataStart =
      pageAlignedDataStart(d.fd, state_->dataStart, x * int64_t(sizeof(float)), bytes, path);
  const int64_t fileBytes = state_->dataStart + (bytes + 2879) / 2880 * 2880;
  if (::ftruncate(d.fd, static_cast<off_t>(fileBytes)) != 0)
    throw IoError(path, std::string("cannot size the file: ") + std::strerror(errno));
  mapWhenReserved(*state_, fileBytes);
}

namespace {

// Whether the file lives on a network or user-space file system: there a write into a mapping
// whose page cannot be written back (a lost server, a full quota) would be a signal, not an
// error, so such outputs keep to pwrite.
// Whether the file lives in memory (tmpfs, e.g. /dev/shm).
bool inMemoryFileSystem(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && static_cast<unsigned long>(fs.f_type) == 0x01021994;
}

bool onNetworkFileSystem(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return true;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x6969:      // NFS
    case 0xFF534D42:  // CIFS
    case 0xFE534D42:  // SMB2
    case 0x517B:      // SMB
    case 0x65735546:  // FUSE (sshfs, s3fs, ...)
    case 0x01021997:  // 9P
    case 0x00C36400:  // Ceph
    case 0x0BD00BD0:  // Lustre
    case 0x47504653:  // GPFS
    case 0x013111A8:  // IBRIX
    case 0x6B414653:  // AFS
      return true;
    default:
      return false;
  }
}

}  // namespace

// Reserves the file's blocks (a full disk is then said now, not found by a write into the
// mapping, which would be a signal instead of an error) and maps the file for writing. Boxes
// are then copied into the mapping by every writer at once, with no file lock between them and
// no read-back of the rows they share. Where the file system cannot reserve blocks or map the
// file, boxes go through pwrite as before.
void StackBlockWriter::mapWhenReserved(State& s, int64_t fileBytes) {
  // The pwrite path on request too (tests; a file system whose mappings misbehave).
  if (const char* v = std::getenv("STACKLENS_WRITE_WITHOUT_MAPPING"); v && std::string(v) == "1")
    return;
  if (onNetworkFileSystem(s.data.fd)) return;
  const std::string full =
      "not enough free space for the output (" + std::to_string(fileBytes >> 20) + " MiB)";
  if (inMemoryFileSystem(s.data.fd)) {
    // Reserving in tmpfs allocates and zeroes every page (seconds for a whole stack): it runs
    // while the first boxes compute, and writeBox waits for it. The free space is checked now.
    struct statvfs fs {};
    if (::fstatvfs(s.data.fd, &fs) == 0 && int64_t(fs.f_bavail) * int64_t(fs.f_frsize) < fileBytes)
      throw IoError(s.path, full);
    const int fd = s.data.fd;
    s.reserved = std::async(std::launch::async, [fd, fileBytes] {
                   return ::fallocate(fd, 0, 0, static_cast<off_t>(fileBytes)) == 0 ? 0 : errno;
                 }).share();
  } else if (::fallocate(s.data.fd, 0, 0, static_cast<off_t>(fileBytes)) != 0) {
    if (errno == ENOSPC) throw IoError(s.path, full);
    return;  // e.g. EOPNOTSUPP: no reservation, no mapping
  }
  void* m = ::mmap(nullptr, static_cast<size_t>(fileBytes), PROT_READ | PROT_WRITE, MAP_SHARED,
                   s.data.fd, 0);
  if (m == MAP_FAILED) {
    if (s.reserved.valid()) s.reserved.wait();
    s.reserved = {};
    return;
  }
  s.mapped = static_cast<char*>(m);
  s.mappedBytes = static_cast<size_t>(fileBytes);
}

// Waits for a reservation made in the background (see mapWhenReserved), if any.
void StackBlockWriter::waitUntilReserved(State& s) {
  if (!s.reserved.valid()) return;
  if (const int error = s.reserved.get(); error != 0)
    throw IoError(s.path, error == ENOSPC ? "not enough free space for the output"
                                          : std::string("cannot reserve the output's space: ") +
                                                std::strerror(error));
}

StackBlockWriter::~StackBlockWriter() = default;

namespace {

// Big-endian float32 rows of a box to their places in the data unit: slices split over a few
// threads (the byte swap and the copies into the page cache are what take the time). Each slice
// goes out in one write of whole rows: a box narrower than the stack first reads the band of rows
// it lies in (other boxes' columns, or zeros) and merges into it, since thousands of small writes
// per slice serialise on the file's lock. Safe because boxes come one at a time and a box's
// slices go to different threads.
// writeBack: where to start writing the band's pages back to disk (see below), or null: when a
// band is shared by several boxes, only its last box does, so that its pages go to disk once.
void writeBoxRows(int fd, int64_t dataStart, int64_t sy, int64_t sx, int64_t z0, int64_t z1,
                  int64_t y0, int64_t y1, int64_t x0, int64_t x1, const float* data,
                  WriteBack* writeBack, const std::string& path) {
  const int64_t by = y1 - y0, bx = x1 - x0;
  auto writeSlices = [&](int64_t from, int64_t to) {
    std::vector<uint32_t> band(static_cast<size_t>(by * sx));
    const size_t bytes = band.size() * sizeof(uint32_t);
    for (int64_t k = from; k < to; ++k) {
      const int64_t offset = dataStart + (k * sy + y0) * sx * int64_t(sizeof(float));
      if (bx != sx) readAll(fd, band.data(), bytes, offset, path);
      for (int64_t r = 0; r < by; ++r) {
        const float* in = data + ((k - z0) * by + r) * bx;
        uint32_t* out = band.data() + r * sx + x0;
        for (int64_t i = 0; i < bx; ++i) {
          uint32_t u;
          std::memcpy(&u, in + i, sizeof u);
          out[i] = __builtin_bswap32(u);
        }
      }
      writeAll(fd, band.data(), bytes, offset, path);
    }
  };
  const int64_t slices = z1 - z0;
  const int threads = static_cast<int>(
      std::clamp<int64_t>(std::min<int64_t>(slices, std::thread::hardware_concurrency()), 1, 8));
  // Start writing the box's pages back at once (the writer of a whole-stack run has time while
  // the next blocks compute), so that the flush at commit has little left to do.
  const int64_t first = dataStart + (z0 * sy + y0) * sx * int64_t(sizeof(float));
  const int64_t last = dataStart + ((z1 - 1) * sy + y1) * sx * int64_t(sizeof(float));
  const auto startWriteBack = [&] {
    if (writeBack) writeBack->start(static_cast<off_t>(first), static_cast<off_t>(last - first));
  };
  if (threads == 1 || slices * by * bx < (int64_t(1) << 20)) {
    writeSlices(z0, z1);
    startWriteBack();
    return;
  }
  std::mutex m;
  std::string failure;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        writeSlices(z0 + slices * t / threads, z0 + slices * (t + 1) / threads);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(m);
        if (failure.empty()) failure = e.what();
      }
    });
  for (std::thread& t : pool) t.join();
  if (!failure.empty()) throw IoError(path, failure);
  startWriteBack();
}

// The same into the mapped file: each slice's rows byte-swapped into place by one of a few
// threads, then the slice's pages let go of (they stay in the page cache, dirty), so that the
// process does not hold the whole output as resident pages.
void writeBoxMapped(char* mapped, int64_t dataStart, int64_t sy, int64_t sx, int64_t z0, int64_t z1,
                    int64_t y0, int64_t y1, int64_t x0, int64_t x1, const float* data) {
  const int64_t by = y1 - y0, bx = x1 - x0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto writeSlices = [&](int64_t from, int64_t to) {
    for (int64_t k = from; k < to; ++k) {
      char* slice = mapped + dataStart + (k * sy + y0) * sx * int64_t(sizeof(float));
      for (int64_t r = 0; r < by; ++r) {
        const float* in = data + ((k - z0) * by + r) * bx;
        char* out = slice + (r * sx + x0) * int64_t(sizeof(float));
        for (int64_t i = 0; i < bx; ++i) {
          uint32_t u;
          std::memcpy(&u, in + i, sizeof u);
          u = __builtin_bswap32(u);
          std::memcpy(out + i * int64_t(sizeof u), &u, sizeof u);
        }
      }
      const auto begin =
          reinterpret_cast<uintptr_t>(slice + x0 * int64_t(sizeof(float))) / page * page;
      const auto end =
          reinterpret_cast<uintptr_t>(slice + ((by - 1) * sx + x1) * int64_t(sizeof(float)));
      ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
    }
  };
  const int64_t slices = z1 - z0;
  const int threads = static_cast<int>(
      std::clamp<int64_t>(std::min<int64_t>(slices, std::thread::hardware_concurrency()), 1, 8));
  if (threads == 1 || slices * by * bx < (int64_t(1) << 20)) return writeSlices(z0, z1);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(writeSlices, z0 + slices * t / threads, z0 + slices * (t + 1) / threads);
  for (std::thread& t : pool) t.join();
}

}  // namespace

void StackBlockWriter::writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0,
                                int64_t x1, const float* data) {
  State& s = *state_;
  if ((!s.file || !s.file->get()) && !s.pages && s.data.fd < 0)
    throw IoError(s.path, "the file is already finished");
  if (z0 < 0 || y0 < 0 || x0 < 0 || z1 > s.z || y1 > s.y || x1 > s.x || z0 >= z1 || y0 >= y1 ||
      x0 >= x1)
    throw IoError(s.path, "a block outside the stack");
  // Whether the box's band is complete with it: its pages can then go back to disk once.
  auto completesBand = [&] {
    if (x1 - x0 == s.x) return true;
    std::lock_guard band(s.bands);
    const std::array<int64_t, 4> key{z0, z1, y0, y1};
    int64_t& columns = s.bandColumns[key];
    columns += x1 - x0;
    if (columns < s.x) return false;
    s.bandColumns.erase(key);
    return true;
  };
  // Whether the box's pages hold nothing of other boxes (see pageAlignedDataStart).
  auto ownsItsPages = [&] {
    const auto page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
    const auto f = int64_t(sizeof(float));
    return page > 0 && s.dataStart % page == 0 && s.x * f % page == 0 && x0 * f % page == 0 &&
           x1 * f % page == 0;
  };
  if (s.mapped) {
    waitUntilReserved(s);
    writeBoxMapped(s.mapped, s.dataStart, s.y, s.x, z0, z1, y0, y1, x0, x1, data);
    if (ownsItsPages() || completesBand()) {
      // Start writing the band's pages back at once (the writer of a whole-stack run has time
      // while the next blocks compute), so that the flush at commit has little left to do.
      const int64_t first = s.dataStart + (z0 * s.y + y0) * s.x * int64_t(sizeof(float));
      const int64_t last = s.dataStart + ((z1 - 1) * s.y + y1) * s.x * int64_t(sizeof(float));
      s.writeBack->start(static_cast<off_t>(first), static_cast<off_t>(last - first));
    }
    return;
  }
  std::lock_guard whole(s.lock);
  if (s.pages) {
    const int64_t by = y1 - y0, bx = x1 - x0;
    for (int64_t k = z0; k < z1; ++k) {
      if (k < s.nextPage) throw IoError(s.path, "a block over a page already written");
      auto& [pixels, covered] = s.waiting[k];
      if (pixels.empty()) pixels.resize(static_cast<size_t>(s.y * s.x));
      for (int64_t r = 0; r < by; ++r)
        std::memcpy(pixels.data() + (y0 + r) * s.x + x0, data + ((k - z0) * by + r) * bx,
                    static_cast<size_t>(bx) * sizeof(float));
      covered += by * bx;
    }
    // Pages go out in order, as soon as every box has covered them.
    for (auto it = s.waiting.find(s.nextPage);
         it != s.waiting.end() && it->second.second >= s.y * s.x; it = s.waiting.find(s.nextPage)) {
      s.pages->writePage(it->second.first.data());
      s.waiting.erase(it);
      ++s.nextPage;
    }
    return;
  }
  if (s.data.fd >= 0) {
    writeBoxRows(s.data.fd, s.dataStart, s.y, s.x, z0, z1, y0, y1, x0, x1, data,
                 completesBand() ? s.writeBack.get() : nullptr, s.path);
    return;
  }
  FitsStatus status(s.path);
  // FITS pixels are 1-based, axis 1 = x.
  long first[3] = {static_cast<long>(x0 + 1), static_cast<long>(y0 + 1), static_cast<long>(z0 + 1)};
  long last[3] = {static_cast<long>(x1), static_cast<long>(y1), static_cast<long>(z1)};
  fits_write_subset(s.file->get(), TFLOAT, first, last, const_cast<float*>(data), status.ptr());
  status.check("cannot write a block");
}

void StackBlockWriter::commit() {
  State& s = *state_;
  if (s.pages) {
    s.pages->finish();  // throws unless every page is in
    s.pages.reset();
    s.out.commit();
    return;
  }
  if (s.data.fd >= 0) {
    waitUntilReserved(s);
    s.writeBack.reset();  // the flush below writes what it had not started
    if (s.mapped) {
      ::munmap(s.mapped, s.mappedBytes);
      s.mapped = nullptr;
    }
    const int fd = s.data.fd;
    s.data.fd = -1;
    if (::close(fd) != 0)
      throw IoError(s.path, std::string("cannot finish the file: ") + std::strerror(errno));
    s.out.commit();
    return;
  }
  FitsStatus status(s.path);
  if (!s.file) throw IoError(s.path, "the file is already finished");
  s.file->close(status);
  status.check("cannot finish the file");
  s.out.commit();
}

}  // namespace stacklens::io
