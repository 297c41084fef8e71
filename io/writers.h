// The per-format writers behind writeStack/writeLabelStack (internal to stacklens_io).
#pragma once

#include <fitsio.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/stack_writer.h"
#include "io/tiff_support.h"
#include "io/write_back.h"

namespace stacklens::io {

// What the writers store: float32 values or int32 labels.
enum class SampleKind { Float32, Int32 };

// A new FITS file at path with the image header (shape, the input's cards, spacing, HISTORY)
// and no data written yet; errors name target (the file the user asked for).
fitsfile* createFitsImage(const std::string& path, const std::string& target, SampleKind kind,
                          int64_t z, int64_t y, int64_t x, const WriteOptions& options);
void writeFitsFile(const std::string& path, const std::string& target, const void* data,
                   SampleKind kind, int64_t z, int64_t y, int64_t x, const WriteOptions& options);
void writeTiffFile(const std::string& path, const std::string& target, const void* data,
                   SampleKind kind, int64_t z, int64_t y, int64_t x, const WriteOptions& options);

// Writes a TIFF stack page by page, in order (each page one slice of z × y × x; float32, or
// uint16 with options.tiffUInt16, or int32). description goes on the first page.
class TiffPageWriter {
 public:
  TiffPageWriter(const std::string& path, const std::string& target, SampleKind kind, int64_t z,
                 int64_t y, int64_t x, const WriteOptions& options, const std::string& description);
  void writePage(const void* slice);
  void finish();  // throws unless every page was written

 private:
  std::string target_;
  SampleKind kind_;
  int64_t z_, y_, x_, written_ = 0;
  WriteOptions options_;
  std::string description_;
  bool uint16_ = false;
  int bytes_ = 4;
  TiffMessages messages_;
  TiffHandle handle_;
  std::vector<uint16_t> strip_;           // a strip converted to uint16
  int64_t writtenBack_ = 0;               // bytes of the file whose write-back has been asked for
  std::unique_ptr<WriteBack> writeBack_;  // of handle_'s file; stopped before it closes
};

// A float32 value as a TIFF uint16 sample (WriteOptions::tiffUInt16): rounded, clamped to
// 0..65535, NaN as 0.
inline uint16_t toUInt16(float v) {
  if (!(v > 0.0f)) return 0;  // negative and NaN
  if (v >= 65535.0f) return 65535;
  return static_cast<uint16_t>(std::lround(v));
}

// The ImageJ description of a float32 stack written before its values are known.
std::string tiffDescription(int64_t z, const WriteOptions& options);

// Cards describing the layout of the input's data (FITS structure, compression, HISTORY), which
// each writer sets itself.
bool isStructural(const std::string& key);

// "micron", "µm" and "um" name the same unit; each format has its own spelling.
bool isMicron(const std::string& unit);

}  // namespace stacklens::io
