// Boxes into a block file: the sample encodings, and the copies into a mapping (bands of rows over
// a few threads) or through pwrite (whole rows, merged into their band, or row by row).
#include "io/block_boxes.h"

#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "io/io_error.h"
#include "io/parallel_tasks.h"
#include "io/writers.h"

namespace stacklens::io {

namespace {

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
  runTasks(threads, threads, [&](int64_t t) {
    slices(b.z0 + count * t / threads, b.z0 + count * (t + 1) / threads);
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
  runTasks(count * bands, threads, [&](int64_t i) {
    band(b.z0 + i / bands, rows * (i % bands) / bands, rows * (i % bands + 1) / bands);
  });
}

}  // namespace

SampleEncoding encodingOf(BlockSamples samples) {
  switch (samples) {
    case BlockSamples::TiffFloat32:
      return {4, float32Bytes<!kLittleEndianHost>};  // little-endian
    case BlockSamples::TiffUInt16:
      return {2, littleEndianUInt16};
    case BlockSamples::FitsFloat32:
    case BlockSamples::ZarrFloat32:  // never placed in a file (its chunks are encoded)
      break;
  }
  return {4, float32Bytes<kLittleEndianHost>};  // big-endian
}

void writeAll(int fd, const void* data, size_t bytes, int64_t offset, const std::string& path) {
  transferAll(::pwrite, fd, static_cast<const char*>(data), bytes, offset, path, "cannot write");
}

void readAll(int fd, void* data, size_t bytes, int64_t offset, const std::string& path) {
  transferAll(::pread, fd, static_cast<char*>(data), bytes, offset, path, "cannot read back");
}

// Thousands of small writes per slice serialise on the file's lock: each slice goes out in one
// write of whole rows, merged into what the band holds (other boxes' columns, or zeros). Safe
// because boxes come one at a time and a box's slices go to different threads.
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

void writeBoxRowsUnmerged(int fd, const Placement& p, const Box& b, const BoxValues& values,
                          const std::string& path) {
  const int64_t by = b.y1 - b.y0, bx = b.x1 - b.x0;
  const bool wholeRows = bx == p.sx;
  overSlices(b, [&](int64_t from, int64_t to) {
    std::vector<char> rows(static_cast<size_t>((wholeRows ? by : 1) * bx * p.encoding.bytes));
    for (int64_t k = from; k < to; ++k) {
      if (wholeRows) {
        for (int64_t r = 0; r < by; ++r)
          p.encoding.encode(values.row(k - b.z0, r), bx, rows.data() + r * bx * p.encoding.bytes);
        writeAll(fd, rows.data(), rows.size(), p.offset(k, b.y0, 0), path);
        continue;
      }
      for (int64_t r = 0; r < by; ++r) {
        p.encoding.encode(values.row(k - b.z0, r), bx, rows.data());
        writeAll(fd, rows.data(), rows.size(), p.offset(k, b.y0 + r, b.x0), path);
      }
    }
  });
}

// Bands of rows converted into place by a few threads, then the band's pages let go of, so that
// the process does not hold the whole output as resident pages.
void writeBoxMapped(char* mapped, const Placement& p, const Box& b, const BoxValues& values) {
  const int64_t bx = b.x1 - b.x0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  overRowBands(b, [&](int64_t k, int64_t r0, int64_t r1) {
    if (r0 == r1) return;
    for (int64_t r = r0; r < r1; ++r)
      p.encoding.encode(values.row(k - b.z0, r), bx, mapped + p.offset(k, b.y0 + r, b.x0));
    const auto begin =
        reinterpret_cast<uintptr_t>(mapped + p.offset(k, b.y0 + r0, b.x0)) / page * page;
    const auto end = reinterpret_cast<uintptr_t>(mapped + p.offset(k, b.y0 + r1 - 1, b.x1));
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  });
}

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

bool mappingTurnedOff() {
  const char* v = std::getenv("STACKLENS_WRITE_WITHOUT_MAPPING");
  return v && std::string(v) == "1";
}

}  // namespace stacklens::io
