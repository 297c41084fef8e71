// StackBlockWriter: boxes at their place in the file (FITS: in the data unit after the header;
// TIFF: after the directories), converted by several threads into the mapped file or pwritten in
// whole rows; a single FITS image through cfitsio; the temporary file is renamed into place.
#include "io/block_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "io/file_checks.h"
#include "io/fits_support.h"
#include "io/tiff_layout.h"
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

// How the file stores samples: bytes per sample, and a run of float32 values converted into them.
struct SampleEncoding {
  int64_t bytes;
  void (*encode)(const float* in, int64_t count, char* out);
};

constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;

template <bool swap>
void float32Bytes(const float* in, int64_t count, char* out) {
  if constexpr (!swap) {
    std::memcpy(out, in, static_cast<size_t>(count) * sizeof(float));
  } else {
    for (int64_t i = 0; i < count; ++i) {
      uint32_t u;
      std::memcpy(&u, in + i, sizeof u);
      u = __builtin_bswap32(u);
      std::memcpy(out + i * int64_t(sizeof u), &u, sizeof u);
    }
  }
}

void littleEndianUInt16(const float* in, int64_t count, char* out) {
  for (int64_t i = 0; i < count; ++i) {
    uint16_t v = toUInt16(in[i]);
    if constexpr (!kLittleEndianHost) v = __builtin_bswap16(v);
    std::memcpy(out + i * int64_t(sizeof v), &v, sizeof v);
  }
}

constexpr SampleEncoding kFitsFloat32{4, float32Bytes<kLittleEndianHost>};   // big-endian
constexpr SampleEncoding kTiffFloat32{4, float32Bytes<!kLittleEndianHost>};  // little-endian
constexpr SampleEncoding kTiffUInt16{2, littleEndianUInt16};

}  // namespace

struct StackBlockWriter::State {
  State(const std::string& p, const std::string& source) : path(p), out(p, source) {}
  std::string path;
  AtomicOutput out;  // removes the temporary file unless committed
  // Closed before the temporary file is removed. Stacks: boxes go to their place at once,
  // through the descriptor (FITS: in the data unit; TIFF: after the directories).
  Descriptor data;
  std::unique_ptr<WriteBack> writeBack;  // of data.fd; stopped before it closes
  SampleEncoding encoding = kFitsFloat32;
  int64_t dataStart = 0;             // of the first sample
  std::unique_ptr<FitsHandle> file;  // a single FITS image, through cfitsio
  // Columns written so far of each band of rows (z0, z1, y0, y1) that boxes narrower than the
  // stack share; its pages go back to disk once, when its last box is in.
  std::map<std::array<int64_t, 4>, int64_t> bandColumns;
  // The file mapped whole (header included, from offset 0), when the file system could reserve
  // its blocks; boxes are then written straight into it, several at once.
  char* mapped = nullptr;
  size_t mappedBytes = 0;
  // In tmpfs the blocks are reserved while the first boxes compute: 0 or the reservation's errno.
  std::shared_future<int> reserved;
  // Held by writeBox except for the mapped path, and for the band records always.
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
  State& s = *state_;
  s.z = z;
  s.y = y;
  s.x = x;
  if (outputFormat(path) == OutputFormat::Tiff) {
    const TiffStackLayout layout =
        layOutTiffStack(path, z, y, x, options, tiffDescription(z, options));
    s.encoding = options.tiffUInt16 ? kTiffUInt16 : kTiffFloat32;
    openForBoxes(s);
    writeAll(s.data.fd, layout.head.data(), layout.head.size(), 0, path);
    s.dataStart = layout.pixelStart;
    sizeForBoxes(s, layout.fileBytes());
    return;
  }
  if (z == 1) {
    s.file = std::make_unique<FitsHandle>(
        createFitsImage(s.out.tempPath(), path, SampleKind::Float32, z, y, x, options));
    return;
  }
  FitsStatus status(path);
  {
    FitsHandle header(
        createFitsImage(s.out.tempPath(), path, SampleKind::Float32, 2, y, x, options));
    LONGLONG headStart = 0, dataStart = 0, dataEnd = 0;
    fits_get_hduaddrll(header.get(), &headStart, &dataStart, &dataEnd, status.ptr());
    status.check("cannot locate the data unit");
    s.dataStart = static_cast<int64_t>(dataStart);
    header.close(status);
    status.check("cannot write the header");
  }
  openForBoxes(s);
  setSliceCount(s.data.fd, s.dataStart, z, path);
  // The data unit at its full length (whole 2880-byte records), zeros until boxes arrive.
  const int64_t bytes = z * y * x * int64_t(sizeof(float));
  s.dataStart =
      pageAlignedDataStart(s.data.fd, s.dataStart, x * int64_t(sizeof(float)), bytes, path);
  sizeForBoxes(s, s.dataStart + (bytes + 2879) / 2880 * 2880);
}

// The header written, boxes go to their place through a descriptor of the temporary file.
void StackBlockWriter::openForBoxes(State& s) {
  s.data.fd = ::open(s.out.tempPath().c_str(), O_RDWR | O_CLOEXEC);
  if (s.data.fd < 0)
    throw IoError(s.path, std::string("cannot reopen the file: ") + std::strerror(errno));
  s.writeBack = std::make_unique<WriteBack>(s.data.fd);
}

// The file at its full length, zeros until boxes arrive, and mapped where it can be.
void StackBlockWriter::sizeForBoxes(State& s, int64_t fileBytes) {
  if (::ftruncate(s.data.fd, static_cast<off_t>(fileBytes)) != 0)
    throw IoError(s.path, std::string("cannot size the file: ") + std::strerror(errno));
  mapWhenReserved(s, fileBytes);
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

// Where samples go in the file: the stack's rows and columns, the first sample's offset and
// how samples are stored.
struct Placement {
  int64_t dataStart, sy, sx;
  SampleEncoding encoding;
  int64_t offset(int64_t k, int64_t j, int64_t i) const {
    return dataStart + ((k * sy + j) * sx + i) * encoding.bytes;
  }
};

// A box: [z0, z1) × [y0, y1) × [x0, x1).
struct Box {
  int64_t z0, z1, y0, y1, x0, x1;
};

// Slices [z0, z1) through slices(from, to), split over a few threads for a large box (the
// conversion and the copies into the page cache are what take the time); the first failure is
// rethrown.
template <class Slices>
void overSlices(const Box& b, const Slices& slices) {
  const int64_t count = b.z1 - b.z0;
  const int threads = static_cast<int>(
      std::clamp<int64_t>(std::min<int64_t>(count, std::thread::hardware_concurrency()), 1, 8));
  if (threads == 1 || count * (b.y1 - b.y0) * (b.x1 - b.x0) < (int64_t(1) << 20))
    return slices(b.z0, b.z1);
  std::mutex m;
  std::exception_ptr failure;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        slices(b.z0 + count * t / threads, b.z0 + count * (t + 1) / threads);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!failure) failure = std::current_exception();
      }
    });
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// A box's rows to their places through pwrite. Each slice goes out in one write of whole rows:
// a box narrower than the stack first reads the band of rows it lies in (other boxes' columns,
// or zeros) and merges into it, since thousands of small writes per slice serialise on the
// file's lock. Safe because boxes come one at a time and a box's slices go to different threads.
void writeBoxRows(int fd, const Placement& p, const Box& b, const float* data,
                  const std::string& path) {
  const int64_t by = b.y1 - b.y0, bx = b.x1 - b.x0;
  overSlices(b, [&](int64_t from, int64_t to) {
    std::vector<char> band(static_cast<size_t>(by * p.sx * p.encoding.bytes));
    for (int64_t k = from; k < to; ++k) {
      const int64_t offset = p.offset(k, b.y0, 0);
      if (bx != p.sx) readAll(fd, band.data(), band.size(), offset, path);
      for (int64_t r = 0; r < by; ++r)
        p.encoding.encode(data + ((k - b.z0) * by + r) * bx, bx,
                          band.data() + (r * p.sx + b.x0) * p.encoding.bytes);
      writeAll(fd, band.data(), band.size(), offset, path);
    }
  });
}

// The rows of a box's slices through band(k, r0, r1) (slice k, rows [r0, r1) of the box), split
// into bands over a few threads for a large box, so that a box of a few slices keeps them busy
// too; the first failure is rethrown.
template <class Band>
void overRowBands(const Box& b, const Band& band) {
  const int64_t count = b.z1 - b.z0, rows = b.y1 - b.y0;
  const int threads = static_cast<int>(std::clamp<int64_t>(
      std::min<int64_t>(count * rows, std::thread::hardware_concurrency()), 1, 8));
  if (threads == 1 || count * rows * (b.x1 - b.x0) < (int64_t(1) << 20)) {
    for (int64_t k = b.z0; k < b.z1; ++k) band(k, 0, rows);
    return;
  }
  const int64_t bands = std::clamp<int64_t>(2 * threads / count, 1, rows);
  std::atomic<int64_t> next{0};
  std::mutex m;
  std::exception_ptr failure;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      try {
        for (int64_t i = next++; i < count * bands; i = next++)
          band(b.z0 + i / bands, rows * (i % bands) / bands, rows * (i % bands + 1) / bands);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!failure) failure = std::current_exception();
      }
    });
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// The same into the mapped file: bands of rows converted into place by a few threads, then the
// band's pages let go of (they stay in the page cache, dirty), so that the process does not hold
// the whole output as resident pages.
void writeBoxMapped(char* mapped, const Placement& p, const Box& b, const float* data) {
  const int64_t by = b.y1 - b.y0, bx = b.x1 - b.x0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  overRowBands(b, [&](int64_t k, int64_t r0, int64_t r1) {
    if (r0 == r1) return;
    for (int64_t r = r0; r < r1; ++r)
      p.encoding.encode(data + ((k - b.z0) * by + r) * bx, bx,
                        mapped + p.offset(k, b.y0 + r, b.x0));
    const auto begin =
        reinterpret_cast<uintptr_t>(mapped + p.offset(k, b.y0 + r0, b.x0)) / page * page;
    const auto end = reinterpret_cast<uintptr_t>(mapped + p.offset(k, b.y0 + r1 - 1, b.x1));
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  });
}

}  // namespace

void StackBlockWriter::writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0,
                                int64_t x1, const float* data) {
  State& s = *state_;
  if ((!s.file || !s.file->get()) && s.data.fd < 0)
    throw IoError(s.path, "the file is already finished");
  if (z0 < 0 || y0 < 0 || x0 < 0 || z1 > s.z || y1 > s.y || x1 > s.x || z0 >= z1 || y0 >= y1 ||
      x0 >= x1)
    throw IoError(s.path, "a block outside the stack");
  if (s.data.fd < 0) {
    std::lock_guard whole(s.lock);
    FitsStatus status(s.path);
    // FITS pixels are 1-based, axis 1 = x.
    long first[3] = {static_cast<long>(x0 + 1), static_cast<long>(y0 + 1),
                     static_cast<long>(z0 + 1)};
    long last[3] = {static_cast<long>(x1), static_cast<long>(y1), static_cast<long>(z1)};
    fits_write_subset(s.file->get(), TFLOAT, first, last, const_cast<float*>(data), status.ptr());
    status.check("cannot write a block");
    return;
  }
  const Placement place{s.dataStart, s.y, s.x, s.encoding};
  const Box box{z0, z1, y0, y1, x0, x1};
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
    const int64_t bytes = s.encoding.bytes;
    return page > 0 && s.dataStart % page == 0 && s.x * bytes % page == 0 &&
           x0 * bytes % page == 0 && x1 * bytes % page == 0;
  };
  // Start writing the band's pages back at once (the writer of a whole-stack run has time while
  // the next blocks compute), so that the flush at commit has little left to do. When a band is
  // shared by several boxes, only its last box does, so that its pages go to disk once.
  auto startWriteBack = [&] {
    const int64_t first = place.offset(z0, y0, 0), last = place.offset(z1 - 1, y1, 0);
    s.writeBack->start(static_cast<off_t>(first), static_cast<off_t>(last - first));
  };
  if (s.mapped) {
    waitUntilReserved(s);
    writeBoxMapped(s.mapped, place, box, data);
    if (ownsItsPages() || completesBand()) startWriteBack();
    return;
  }
  std::lock_guard whole(s.lock);
  writeBoxRows(s.data.fd, place, box, data, s.path);
  if (completesBand()) startWriteBack();
}

void StackBlockWriter::commit() {
  State& s = *state_;
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
