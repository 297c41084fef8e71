// openStack: recognises FITS and TIFF by their first bytes and opens the matching reader.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <zlib.h>

#include "io/file_checks.h"
#include "io/fits_reader.h"
#include "io/stack.h"
#include "io/tiff_reader.h"

namespace stacklens::io {

const char* dtypeName(DType t) {
  switch (t) {
    case DType::UInt8:
      return "uint8";
    case DType::Int8:
      return "int8";
    case DType::UInt16:
      return "uint16";
    case DType::Int16:
      return "int16";
    case DType::UInt32:
      return "uint32";
    case DType::Int32:
      return "int32";
    case DType::UInt64:
      return "uint64";
    case DType::Int64:
      return "int64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
  }
  return "unknown";
}

namespace {

// Bytes the first gzip member of path decompresses to, counting at most limit.
uint64_t inflatedSize(const std::string& path, uint64_t limit) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (!in) throw IoError(path, "cannot open the gzip stream");
  std::vector<char> scratch(1 << 16);
  uint64_t total = 0;
  while (total < limit) {
    const int got = gzread(in, scratch.data(), static_cast<unsigned>(scratch.size()));
    if (got < 0) {
      int code = 0;
      const std::string why = gzerror(in, &code);
      gzclose(in);
      throw IoError(path, "damaged gzip file: " + why);
    }
    if (got == 0) break;
    total += static_cast<uint64_t>(got);
  }
  gzclose(in);
  return total;
}

// cfitsio allocates the size a gzip file's trailer claims (ISIZE, the last 4 bytes) before it
// decompresses, so a small damaged file could make it allocate gigabytes. Deflate cannot
// compress by more than about 1032:1, which bounds what an honest trailer can say.
void checkGzipSize(const std::string& path, uint64_t size) {
  unsigned char trailer[4] = {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, std::strerror(errno));
  const ssize_t got = size >= 18 ? ::pread(fd, trailer, 4, static_cast<off_t>(size - 4)) : 0;
  ::close(fd);
  if (got != 4) throw IoError(path, "the gzip file is too short or cannot be read");
  const uint64_t claimed = uint64_t{trailer[0]} | uint64_t{trailer[1]} << 8 |
                           uint64_t{trailer[2]} << 16 | uint64_t{trailer[3]} << 24;
  // A trailer of 0..2879 is no FITS file (the smallest is one 2880-byte block); cfitsio takes 0
  // to mean "unknown" and guesses a large buffer.
  if (claimed < 2880)
    throw IoError(path,
                  "damaged gzip file (or over 4 GB uncompressed, which is not supported): "
                  "its trailer claims " +
                      std::to_string(claimed) + " uncompressed bytes");
  if (claimed > size * 1032 + 1024)
    throw IoError(path, "damaged gzip file: its trailer claims " + std::to_string(claimed) +
                            " uncompressed bytes, impossible for " + std::to_string(size) +
                            " compressed bytes");
  // cfitsio also trusts the trailer while it decompresses: when the stream yields more than
  // claimed it grows its buffer by gigabytes. Inflating once into a scratch buffer (output
  // discarded) checks that the stream really holds the claimed size.
  const uint64_t actual = inflatedSize(path, claimed + 1);
  if (actual != claimed)
    throw IoError(path, "damaged gzip file: it decompresses to " +
                            (actual > claimed ? "more than " + std::to_string(claimed)
                                              : std::to_string(actual)) +
                            " bytes but its trailer says " + std::to_string(claimed));
}

}  // namespace

void StackReader::readRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  const StackInfo& i = info();
  if (y0 < 0 || y1 > i.y || y0 >= y1)
    throw IoError(i.path, "rows " + std::to_string(y0) + ".." + std::to_string(y1) +
                              " are outside the slice's " + std::to_string(i.y));
  std::vector<float> slice(static_cast<size_t>(i.y * i.x));
  readSlice(z, slice.data());
  std::copy(slice.begin() + y0 * i.x, slice.begin() + y1 * i.x, out);
}

std::unique_ptr<StackReader> openStack(const std::string& path, const OpenOptions& options) {
  const uint64_t size = checkReadableFile(path);
  unsigned char magic[9] = {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, std::strerror(errno));
  const ssize_t got = ::read(fd, magic, sizeof magic);
  ::close(fd);
  if (got < 0) throw IoError(path, std::strerror(errno));
  const auto starts = [&](const char* m, size_t n) {
    return static_cast<size_t>(got) >= n && std::memcmp(magic, m, n) == 0;
  };
  if (starts("SIMPLE  =", 9)) return std::make_unique<FitsReader>(path, options);
  // gzip-compressed FITS (.fits.gz): cfitsio decompresses it; content that is not FITS fails there.
  if (starts("\x1f\x8b", 2)) {
    checkGzipSize(path, size);
    return std::make_unique<FitsReader>(path, options);
  }
  if (starts("II*\0", 4) || starts("MM\0*", 4) || starts("II+\0", 4) || starts("MM\0+", 4))
    return std::make_unique<TiffReader>(path, options, size);
  if (size < 4) throw IoError(path, "the file is too short to be a FITS or TIFF file");
  throw IoError(path,
                "not a FITS or TIFF file (its first bytes are neither \"SIMPLE  =\", gzip "
                "nor a TIFF byte-order mark)");
}

}  // namespace stacklens::io
