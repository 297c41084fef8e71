// TIFF writer (libtiff): one page per z, float32 / uint16 / int32, ImageJ metadata for the spacing.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "io/tiff_layout.h"
#include "io/tiff_support.h"
#include "io/write_stop.h"
#include "io/writers.h"

namespace stacklens::io {
namespace {

std::string number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

// ImageJ and Fiji take the z spacing and unit only from this text; tifffile reads it too.
std::string imagejDescription(int64_t z, SampleKind kind, bool uint16, const float* data,
                              int64_t count, const WriteOptions& options) {
  std::string d = "ImageJ=1.11a\nimages=" + std::to_string(z) + "\n";
  if (z > 1) d += "slices=" + std::to_string(z) + "\n";
  if (options.spacingKnown) {
    std::string unit = options.units[2].empty() ? options.units[0] : options.units[2];
    if (isMicron(unit)) unit = "micron";
    unit.erase(
        std::remove_if(unit.begin(), unit.end(), [](char c) { return c == '\n' || c == '\r'; }),
        unit.end());
    if (!unit.empty()) d += "unit=" + unit + "\n";
    if (z > 1) d += "spacing=" + number(options.spacing[0]) + "\n";
  }
  d += "loop=false\n";
  if (kind == SampleKind::Float32 && !uint16) {
    // ImageJ shows float stacks with this display range.
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (int64_t i = 0; i < count; ++i)
      if (std::isfinite(data[i])) lo = std::min(lo, data[i]), hi = std::max(hi, data[i]);
    if (lo <= hi) d += "min=" + number(lo) + "\nmax=" + number(hi) + "\n";
  }
  return d;
}

}  // namespace

TiffPageWriter::TiffPageWriter(const std::string& path, const std::string& target, SampleKind kind,
                               int64_t z, int64_t y, int64_t x, const WriteOptions& options,
                               const std::string& description)
    : target_(target),
      kind_(kind),
      z_(z),
      y_(y),
      x_(x),
      options_(options),
      description_(description) {
  uint16_ = kind == SampleKind::Float32 && options.tiffUInt16;
  bytes_ = uint16_ ? 2 : 4;
  if (x > std::numeric_limits<uint32_t>::max() || y > std::numeric_limits<uint32_t>::max() ||
      z > 65535 * 1024)
    throw IoError(target, "the shape is too large for TIFF");
  const bool big =
      options.bigTiff || static_cast<double>(z) * y * x * bytes_ > double(kClassicTiffPixelBytes);
  handle_.reset(openTiff(path, big ? "w8" : "w", messages_));
  if (!handle_.get()) throw IoError(target, tiffReason("cannot create the file", messages_));
}

void TiffPageWriter::writePage(const void* slice) {
  TIFF* t = handle_.get();
  const int64_t k = written_;
  if (!t || k >= z_) throw IoError(target_, "more pages than the stack has");
  throwIfWritesStopped(target_);
  const auto fail = [&](const std::string& what) {
    throw IoError(target_, tiffReason(what, messages_));
  };
  TIFFSetField(t, TIFFTAG_SUBFILETYPE, z_ > 1 ? FILETYPE_PAGE : 0);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<uint32_t>(x_));
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<uint32_t>(y_));
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bytes_ * 8);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
  TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
               uint16_ ? SAMPLEFORMAT_UINT
                       : (kind_ == SampleKind::Int32 ? SAMPLEFORMAT_INT : SAMPLEFORMAT_IEEEFP));
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
  // Strips of up to 64 MiB, each written in one call: a page goes out in a few large writes
  // instead of one per row (libtiff's default strips are 8 KiB).
  const int64_t rowBytes = x_ * bytes_;
  const int64_t rowsPerStrip = tiffRowsPerStrip(rowBytes, y_);
  TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, static_cast<uint32_t>(rowsPerStrip));
  if (z_ > 1)
    TIFFSetField(t, TIFFTAG_PAGENUMBER, static_cast<uint16_t>(std::min<int64_t>(k, 65535)),
                 static_cast<uint16_t>(std::min<int64_t>(z_, 65535)));
  if (k == 0) TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, description_.c_str());
  if (options_.spacingKnown && options_.spacing[1] > 0 && options_.spacing[2] > 0) {
    TIFFSetField(t, TIFFTAG_XRESOLUTION, 1.0 / options_.spacing[2]);
    TIFFSetField(t, TIFFTAG_YRESOLUTION, 1.0 / options_.spacing[1]);
    TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
  }
  TIFFSetField(t, TIFFTAG_SOFTWARE, "StackLens");
  for (int64_t r0 = 0, strip = 0; r0 < y_; r0 += rowsPerStrip, ++strip) {
    const int64_t rows = std::min(rowsPerStrip, y_ - r0), values = rows * x_;
    const void* out;
    if (uint16_) {
      if (strip_.size() < static_cast<size_t>(values)) strip_.resize(static_cast<size_t>(values));
      const float* in = static_cast<const float*>(slice) + r0 * x_;
      for (int64_t i = 0; i < values; ++i) strip_[static_cast<size_t>(i)] = toUInt16(in[i]);
      out = strip_.data();
    } else {
      out = static_cast<const unsigned char*>(slice) + r0 * rowBytes;  // float32 or int32
    }
    // Uncompressed in the machine's byte order: the raw strip is the data, written straight
    // from our buffer (the encoded path would first copy it into libtiff's).
    if (TIFFWriteRawStrip(t, static_cast<uint32_t>(strip), const_cast<void*>(out),
                          static_cast<tmsize_t>(rows * rowBytes)) < 0)
      fail("cannot write the data");
  }
  if (!TIFFWriteDirectory(t)) fail("cannot write page " + std::to_string(k));
  ++written_;
  // Start writing the new pages back to disk at once (libtiff appends them), so that the flush
  // before the file is renamed into place has little left to do, as for FITS stacks.
  const int fd = TIFFFileno(t);
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end > writtenBack_) {
    if (!writeBack_) writeBack_ = std::make_unique<WriteBack>(fd);
    writeBack_->start(writtenBack_, end - writtenBack_);
    writtenBack_ = end;
  }
}

void TiffPageWriter::finish() {
  if (written_ != z_) throw IoError(target_, "the stack is not complete");
  writeBack_.reset();
  TIFFClose(handle_.release());
  if (!messages_.errors.empty())
    throw IoError(target_, tiffReason("cannot finish the file", messages_));
}

std::string tiffDescription(int64_t z, const WriteOptions& options) {
  // No display range: it would need every value before the first page is written.
  return imagejDescription(z, SampleKind::Float32, true, nullptr, 0, options);
}

void writeTiffFile(const std::string& path, const std::string& target, const void* data,
                   SampleKind kind, int64_t z, int64_t y, int64_t x, const WriteOptions& options) {
  const bool uint16 = kind == SampleKind::Float32 && options.tiffUInt16;
  const std::string description =
      imagejDescription(z, kind, uint16, static_cast<const float*>(data), z * y * x, options);
  TiffPageWriter pages(path, target, kind, z, y, x, options, description);
  const size_t sliceBytes = static_cast<size_t>(y * x) * 4;
  for (int64_t k = 0; k < z; ++k)
    pages.writePage(static_cast<const unsigned char*>(data) + static_cast<size_t>(k) * sliceBytes);
  pages.finish();
}

}  // namespace stacklens::io
