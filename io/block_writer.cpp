// StackBlockWriter: the header first, then boxes at their place in the file (FITS: in the data
// unit after the header; TIFF: after the directories), into the mapped file or pwritten in whole
// rows (io/block_boxes.h), or by other processes into the prepared file; a single FITS image of
// this process's boxes through cfitsio; the temporary file is renamed into place.
#include "io/block_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <numeric>

#include "io/block_boxes.h"
#include "io/file_checks.h"
#include "io/fits_support.h"
#include "io/tiff_layout.h"
#include "io/write_back.h"
#include "io/writers.h"
#include "io/zarr_stack_writer.h"

namespace stacklens::io {

namespace {

// A file descriptor closed with its owner.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

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
  State(const std::string& p, const std::string& source, bool folder) : path(p) {
    if (!folder) out = std::make_unique<AtomicOutput>(p, source);
  }
  std::string path;
  std::unique_ptr<AtomicOutput> out;  // removes the temporary file unless committed
  // A Zarr output instead (a folder of chunks): boxes go to it, it commits itself.
  std::unique_ptr<ZarrStackWriter> zarr;
  BoxWriters writers = BoxWriters::ThisWriter;
  // Closed before the temporary file is removed. Stacks: boxes go to their place at once,
  // through the descriptor (FITS: in the data unit; TIFF: after the directories).
  Descriptor data;
  std::unique_ptr<WriteBack> writeBack;  // of data.fd; stopped before it closes
  BlockSamples samples = BlockSamples::FitsFloat32;
  int64_t dataStart = 0;             // of the first sample
  int64_t fileBytes = 0;             // the file's full length
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
                                   const WriteOptions& options, BoxWriters writers) {
  if (!supports(path))
    throw IoError(path, "unknown output format (use .fits, .fit, .fts, .tif, .tiff or .zarr)");
  if (z < 1 || y < 1 || x < 1) throw IoError(path, "cannot write an empty or negative shape");
  const bool zarr = outputFormat(path) == OutputFormat::Zarr;
  state_ = std::make_unique<State>(path, options.sourcePath, zarr);
  State& s = *state_;
  s.writers = writers;
  s.z = z;
  s.y = y;
  s.x = x;
  if (zarr) {
    s.zarr = std::make_unique<ZarrStackWriter>(path, z, y, x, false, options);
    return;
  }
  if (outputFormat(path) == OutputFormat::Tiff) {
    const TiffStackLayout layout =
        layOutTiffStack(path, z, y, x, options, tiffDescription(z, options));
    s.samples = options.tiffUInt16 ? BlockSamples::TiffUInt16 : BlockSamples::TiffFloat32;
    openForBoxes(s);
    writeAll(s.data.fd, layout.head.data(), layout.head.size(), 0, path);
    s.dataStart = layout.pixelStart;
    sizeForBoxes(s, layout.fileBytes());
    return;
  }
  if (z == 1 && writers == BoxWriters::ThisWriter) {
    s.file = std::make_unique<FitsHandle>(
        createFitsImage(s.out->tempPath(), path, SampleKind::Float32, z, y, x, options));
    return;
  }
  FitsStatus status(path);
  {
    // A single image for other processes: its header as cfitsio writes it, and the data unit of
    // one slice it fills with zeros on closing.
    FitsHandle header(createFitsImage(s.out->tempPath(), path, SampleKind::Float32, z == 1 ? 1 : 2,
                                      y, x, options));
    LONGLONG headStart = 0, dataStart = 0, dataEnd = 0;
    fits_get_hduaddrll(header.get(), &headStart, &dataStart, &dataEnd, status.ptr());
    status.check("cannot locate the data unit");
    s.dataStart = static_cast<int64_t>(dataStart);
    header.close(status);
    status.check("cannot write the header");
  }
  openForBoxes(s);
  if (z > 1) setSliceCount(s.data.fd, s.dataStart, z, path);
  // The data unit at its full length (whole 2880-byte records), zeros until boxes arrive.
  const int64_t bytes = z * y * x * int64_t(sizeof(float));
  s.dataStart =
      pageAlignedDataStart(s.data.fd, s.dataStart, x * int64_t(sizeof(float)), bytes, path);
  sizeForBoxes(s, s.dataStart + (bytes + 2879) / 2880 * 2880);
}

// The header written, boxes go to their place through a descriptor of the temporary file.
void StackBlockWriter::openForBoxes(State& s) {
  s.data.fd = ::open(s.out->tempPath().c_str(), O_RDWR | O_CLOEXEC);
  if (s.data.fd < 0)
    throw IoError(s.path, std::string("cannot reopen the file: ") + std::strerror(errno));
  s.writeBack = std::make_unique<WriteBack>(s.data.fd);
}

// The file at its full length, zeros until boxes arrive, and mapped where it can be (or its
// space reserved for the other processes' boxes).
void StackBlockWriter::sizeForBoxes(State& s, int64_t fileBytes) {
  if (::ftruncate(s.data.fd, static_cast<off_t>(fileBytes)) != 0)
    throw IoError(s.path, std::string("cannot size the file: ") + std::strerror(errno));
  s.fileBytes = fileBytes;
  if (s.writers == BoxWriters::ThisWriter)
    mapWhenReserved(s, fileBytes);
  else
    reserveForOthers(s, fileBytes);
}

namespace {

std::string notEnoughSpace(int64_t fileBytes) {
  return "not enough free space for the output (" + std::to_string(fileBytes >> 20) + " MiB)";
}

}  // namespace

// Reserves the file's blocks (a full disk is then said now, not found by a write into the
// mapping, which would be a signal instead of an error) and maps the file for writing. Boxes
// are then copied into the mapping by every writer at once, with no file lock between them and
// no read-back of the rows they share. Where the file system cannot reserve blocks or map the
// file, boxes go through pwrite as before.
void StackBlockWriter::mapWhenReserved(State& s, int64_t fileBytes) {
  if (mappingTurnedOff() || onNetworkFileSystem(s.data.fd)) return;
  if (inMemoryFileSystem(s.data.fd)) {
    // Reserving in tmpfs allocates and zeroes every page (seconds for a whole stack): it runs
    // while the first boxes compute, and writeBox waits for it. The free space is checked now.
    struct statvfs fs {};
    if (::fstatvfs(s.data.fd, &fs) == 0 && int64_t(fs.f_bavail) * int64_t(fs.f_frsize) < fileBytes)
      throw IoError(s.path, notEnoughSpace(fileBytes));
    const int fd = s.data.fd;
    s.reserved = std::async(std::launch::async, [fd, fileBytes] {
                   return ::fallocate(fd, 0, 0, static_cast<off_t>(fileBytes)) == 0 ? 0 : errno;
                 }).share();
  } else if (::fallocate(s.data.fd, 0, 0, static_cast<off_t>(fileBytes)) != 0) {
    if (errno == ENOSPC) throw IoError(s.path, notEnoughSpace(fileBytes));
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

// The other processes map their boxes where they can reserve them; a full disk is said now. In
// tmpfs reserving would allocate every page here, one process for all: each writer reserves its
// own box's pages instead (writeBoxIntoPreparedFile), and the free space is checked now.
void StackBlockWriter::reserveForOthers(State& s, int64_t fileBytes) {
  if (mappingTurnedOff() || onNetworkFileSystem(s.data.fd)) return;
  if (inMemoryFileSystem(s.data.fd)) {
    struct statvfs fs {};
    if (::fstatvfs(s.data.fd, &fs) == 0 && int64_t(fs.f_bavail) * int64_t(fs.f_frsize) < fileBytes)
      throw IoError(s.path, notEnoughSpace(fileBytes));
    return;
  }
  if (::fallocate(s.data.fd, 0, 0, static_cast<off_t>(fileBytes)) != 0 && errno == ENOSPC)
    throw IoError(s.path, notEnoughSpace(fileBytes));
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

PreparedBlockFile StackBlockWriter::prepared() const {
  const State& s = *state_;
  if (s.zarr) {
    PreparedBlockFile f;
    f.path = std::filesystem::absolute(s.zarr->tempFolder()).string();
    f.target = s.path;
    f.z = s.z, f.y = s.y, f.x = s.x;
    f.samples = BlockSamples::ZarrFloat32;
    f.zarrVersion = s.zarr->layout().omeVersion;
    f.zarrChunks = s.zarr->layout().chunks;
    f.zarrShards = s.zarr->layout().shards;
    return f;
  }
  if (s.data.fd < 0) throw IoError(s.path, "no prepared file (a single image, or finished)");
  PreparedBlockFile f;
  f.path = std::filesystem::absolute(s.out->tempPath()).string();
  f.target = s.path;
  f.z = s.z, f.y = s.y, f.x = s.x;
  f.dataStart = s.dataStart;
  f.fileBytes = s.fileBytes;
  f.samples = s.samples;
  return f;
}

void StackBlockWriter::writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0,
                                int64_t x1, const float* data) {
  State& s = *state_;
  if (s.zarr) return s.zarr->writeBox(z0, z1, y0, y1, x0, x1, data);
  if ((!s.file || !s.file->get()) && s.data.fd < 0)
    throw IoError(s.path, "the file is already finished");
  if (z0 < 0 || y0 < 0 || x0 < 0 || z1 > s.z || y1 > s.y || x1 > s.x || z0 >= z1 || y0 >= y1 ||
      x0 >= x1)
    throw IoError(s.path, "a block outside the stack");
  if (s.writers == BoxWriters::OtherProcesses)
    return writeBoxIntoPreparedFile(prepared(), z0, z1, y0, y1, x0, x1, data);
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
  const Placement place{s.dataStart, s.y, s.x, encodingOf(s.samples)};
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
    const int64_t bytes = place.encoding.bytes;
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
    writeBoxMapped(s.mapped, place, box, BoxValues::contiguous(box, data));
    if (ownsItsPages() || completesBand()) startWriteBack();
    return;
  }
  std::lock_guard whole(s.lock);
  writeBoxRows(s.data.fd, place, box, data, s.path);
  if (completesBand()) startWriteBack();
}

void StackBlockWriter::commit() {
  State& s = *state_;
  if (s.zarr) return s.zarr->commit();
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
    s.out->commit();
    return;
  }
  FitsStatus status(s.path);
  if (!s.file) throw IoError(s.path, "the file is already finished");
  s.file->close(status);
  status.check("cannot finish the file");
  s.out->commit();
}

}  // namespace stacklens::io
