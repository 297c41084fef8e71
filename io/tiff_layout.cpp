// layOutTiffStack: the header and every page's directory, with the pixels' offsets fixed.
//
// Follows TIFF 6.0 and the BigTIFF design: a value that fits the entry's value field (4 bytes in
// classic TIFF, 8 in BigTIFF) is stored there, left-justified; any other value goes after its
// directory, at an 8-byte boundary (classic asks for 2, BigTIFF for 8); entries ascend by tag.
#include "io/tiff_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "io/io_error.h"

namespace stacklens::io {
namespace {

// TIFF field types (TIFF 6.0 section 2; LONG8 from BigTIFF).
enum FieldType : uint16_t { kAscii = 2, kShort = 3, kLong = 4, kRational = 5, kLong8 = 16 };

// The tags a page carries (TIFF 6.0 numbers).
enum Tag : uint16_t {
  kNewSubfileType = 254,
  kImageWidth = 256,
  kImageLength = 257,
  kBitsPerSample = 258,
  kCompression = 259,
  kPhotometric = 262,
  kImageDescription = 270,
  kStripOffsets = 273,
  kSamplesPerPixel = 277,
  kRowsPerStrip = 278,
  kStripByteCounts = 279,
  kXResolution = 282,
  kYResolution = 283,
  kPlanarConfig = 284,
  kResolutionUnit = 296,
  kPageNumber = 297,
  kSoftware = 305,
  kSampleFormat = 339,
};

template <class T>
void putLittleEndian(std::string& out, T value) {
  const auto v = static_cast<uint64_t>(value);
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

int64_t alignUp(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// One directory entry: its values already in the file's byte order.
struct Field {
  uint16_t tag;
  uint16_t type;
  uint64_t count;
  std::string bytes;
};

Field shorts(uint16_t tag, std::initializer_list<uint16_t> values) {
  Field f{tag, kShort, values.size(), {}};
  for (uint16_t v : values) putLittleEndian(f.bytes, v);
  return f;
}

Field oneLong(uint16_t tag, uint32_t value) {
  Field f{tag, kLong, 1, {}};
  putLittleEndian(f.bytes, value);
  return f;
}

// Strip offsets and byte counts: LONG in classic TIFF, LONG8 in BigTIFF.
Field offsets(uint16_t tag, const std::vector<uint64_t>& values, bool big) {
  Field f{tag, big ? kLong8 : kLong, values.size(), {}};
  for (uint64_t v : values)
    big ? putLittleEndian(f.bytes, v) : putLittleEndian(f.bytes, uint32_t(v));
  return f;
}

Field ascii(uint16_t tag, const std::string& text) {
  Field f{tag, kAscii, text.size() + 1, text};
  f.bytes.push_back('\0');
  return f;
}

// The closest fraction with a 32-bit numerator and denominator (the last continued-fraction
// convergent that fits), so that 1 / spacing reads back as exactly as a RATIONAL can hold it.
std::pair<uint32_t, uint32_t> toRational(double v) {
  constexpr uint64_t most = std::numeric_limits<uint32_t>::max();
  if (!(v > 0) || !std::isfinite(v)) return {0, 1};
  if (v >= double(most)) return {uint32_t(most), 1};
  uint64_t h0 = 0, h1 = 1, k0 = 1, k1 = 0;  // convergents n-2 and n-1
  double rest = v;
  for (int i = 0; i < 64; ++i) {
    const double whole = std::floor(rest);
    if (whole > double(most)) break;
    const auto a = static_cast<uint64_t>(whole);
    if ((h1 && a > most / h1) || (k1 && a > most / k1)) break;
    const uint64_t h2 = a * h1 + h0, k2 = a * k1 + k0;
    if (h2 > most || k2 > most) break;
    h0 = std::exchange(h1, h2);
    k0 = std::exchange(k1, k2);
    const double fraction = rest - whole;
    if (fraction <= 0) break;
    rest = 1 / fraction;
  }
  if (h1 == 0) return {1, uint32_t(most)};  // below 1 / 2^32
  return {uint32_t(h1), uint32_t(k1)};
}

Field rational(uint16_t tag, double value) {
  const auto [numerator, denominator] = toRational(value);
  Field f{tag, kRational, 1, {}};
  putLittleEndian(f.bytes, numerator);
  putLittleEndian(f.bytes, denominator);
  return f;
}

struct Shape {
  int64_t z, y, x, sampleBytes, rowsPerStrip;
  bool uint16;
};

// Page k's entries, ascending by tag, its strips starting at pixelStart + k × page bytes.
std::vector<Field> pageFields(const Shape& s, int64_t k, bool big, int64_t pixelStart,
                              const WriteOptions& options, const std::string& description) {
  const int64_t rowBytes = s.x * s.sampleBytes, pageStart = pixelStart + k * s.y * rowBytes;
  std::vector<uint64_t> starts, counts;
  for (int64_t r0 = 0; r0 < s.y; r0 += s.rowsPerStrip) {
    starts.push_back(uint64_t(pageStart + r0 * rowBytes));
    counts.push_back(uint64_t(std::min(s.rowsPerStrip, s.y - r0) * rowBytes));
  }
  const bool resolution = options.spacingKnown && options.spacing[1] > 0 && options.spacing[2] > 0;
  std::vector<Field> f;
  f.push_back(oneLong(kNewSubfileType, s.z > 1 ? 2 : 0));  // 2: one page of a multi-page image
  f.push_back(oneLong(kImageWidth, uint32_t(s.x)));
  f.push_back(oneLong(kImageLength, uint32_t(s.y)));
  f.push_back(shorts(kBitsPerSample, {uint16_t(s.sampleBytes * 8)}));
  f.push_back(shorts(kCompression, {1}));  // none
  f.push_back(shorts(kPhotometric, {1}));  // min-is-black
  if (k == 0 && !description.empty()) f.push_back(ascii(kImageDescription, description));
  f.push_back(offsets(kStripOffsets, starts, big));
  f.push_back(shorts(kSamplesPerPixel, {1}));
  f.push_back(oneLong(kRowsPerStrip, uint32_t(s.rowsPerStrip)));
  f.push_back(offsets(kStripByteCounts, counts, big));
  if (resolution) {
    f.push_back(rational(kXResolution, 1.0 / options.spacing[2]));
    f.push_back(rational(kYResolution, 1.0 / options.spacing[1]));
  }
  f.push_back(shorts(kPlanarConfig, {1}));                    // contiguous
  if (resolution) f.push_back(shorts(kResolutionUnit, {1}));  // none
  if (s.z > 1)
    f.push_back(shorts(kPageNumber, {uint16_t(std::min<int64_t>(k, 65535)),
                                     uint16_t(std::min<int64_t>(s.z, 65535))}));
  f.push_back(ascii(kSoftware, "StackLens"));
  f.push_back(shorts(kSampleFormat, {uint16_t(s.uint16 ? 1 : 3)}));  // unsigned, IEEE float
  return f;
}

// Appends one directory at out's end (8-byte aligned) followed by its out-of-line values; its
// next-directory offset points just past them unless it is the last.
void appendDirectory(std::string& out, const std::vector<Field>& fields, bool big, bool last) {
  const size_t inlineBytes = big ? 8 : 4;
  const int64_t directoryBytes =
      (big ? 8 : 2) + int64_t(fields.size()) * (big ? 20 : 12) + (big ? 8 : 4);
  const int64_t valuesAt = alignUp(int64_t(out.size()) + directoryBytes, 8);
  std::string values;
  big ? putLittleEndian(out, uint64_t(fields.size()))
      : putLittleEndian(out, uint16_t(fields.size()));
  for (const Field& f : fields) {
    putLittleEndian(out, f.tag);
    putLittleEndian(out, f.type);
    big ? putLittleEndian(out, f.count) : putLittleEndian(out, uint32_t(f.count));
    if (f.bytes.size() <= inlineBytes) {
      out += f.bytes;
      out.append(inlineBytes - f.bytes.size(), '\0');
      continue;
    }
    const int64_t at = valuesAt + int64_t(values.size());
    big ? putLittleEndian(out, uint64_t(at)) : putLittleEndian(out, uint32_t(at));
    values += f.bytes;
    values.resize(size_t(alignUp(int64_t(values.size()), 8)), '\0');
  }
  const int64_t next = last ? 0 : valuesAt + int64_t(values.size());
  big ? putLittleEndian(out, uint64_t(next)) : putLittleEndian(out, uint32_t(next));
  out.resize(size_t(valuesAt), '\0');
  out += values;
}

// The header and all directories for pixels starting at pixelStart.
std::string directories(const Shape& s, bool big, int64_t pixelStart, const WriteOptions& options,
                        const std::string& description) {
  std::string out = "II";
  if (big) {
    putLittleEndian(out, uint16_t(43));
    putLittleEndian(out, uint16_t(8));  // bytes per offset
    putLittleEndian(out, uint16_t(0));
    putLittleEndian(out, uint64_t(16));  // the first directory, right after the header
  } else {
    putLittleEndian(out, uint16_t(42));
    putLittleEndian(out, uint32_t(8));
  }
  for (int64_t k = 0; k < s.z; ++k)
    appendDirectory(out, pageFields(s, k, big, pixelStart, options, description), big,
                    k + 1 == s.z);
  return out;
}

}  // namespace

int64_t tiffRowsPerStrip(int64_t rowBytes, int64_t rows) {
  return std::clamp<int64_t>((int64_t(64) << 20) / rowBytes, 1, rows);
}

TiffStackLayout layOutTiffStack(const std::string& target, int64_t z, int64_t y, int64_t x,
                                const WriteOptions& options, const std::string& description) {
  constexpr int64_t most32 = std::numeric_limits<uint32_t>::max();
  if (z < 1 || y < 1 || x < 1) throw IoError(target, "cannot write an empty or negative shape");
  if (x > most32 || y > most32 || z > 65535 * 1024)
    throw IoError(target, "the shape is too large for TIFF");
  TiffStackLayout layout;
  layout.sampleBytes = options.tiffUInt16 ? 2 : 4;
  if (y * x > std::numeric_limits<int64_t>::max() / layout.sampleBytes / z)
    throw IoError(target, "the shape is too large for TIFF");
  layout.pixelBytes = z * y * x * layout.sampleBytes;
  const Shape shape{
      z, y, x, layout.sampleBytes, tiffRowsPerStrip(x * layout.sampleBytes, y), options.tiffUInt16};
  // The directories' size does not depend on where the pixels start: measure, then write.
  auto pixelStartFor = [&](bool big) {
    return alignUp(int64_t(directories(shape, big, 0, options, description).size()), 4096);
  };
  layout.bigTiff = options.bigTiff || layout.pixelBytes > kClassicTiffPixelBytes;
  layout.pixelStart = pixelStartFor(layout.bigTiff);
  if (!layout.bigTiff && layout.fileBytes() > most32) {
    layout.bigTiff = true;
    layout.pixelStart = pixelStartFor(true);
  }
  layout.head = directories(shape, layout.bigTiff, layout.pixelStart, options, description);
  layout.head.resize(size_t(layout.pixelStart), '\0');
  return layout;
}

}  // namespace stacklens::io
