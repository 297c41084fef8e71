// An uncompressed TIFF stack laid out before any pixel is known: directories first, pixels after.
//
// Why: with every page's directory at the start of the file and the pixels of all pages after
// them at offsets fixed in advance, a stack can be written box by box, in any order and from
// several threads (io::StackBlockWriter), exactly like a FITS data unit.
#pragma once

#include <cstdint>
#include <string>

#include "io/stack_writer.h"

namespace stacklens::io {

// Classic TIFF offsets are 32-bit: stacks with more pixel bytes than this are written as BigTIFF
// (the margin leaves room for the directories). Classic is kept below it because ImageJ's own
// opener reads only classic TIFF.
inline constexpr int64_t kClassicTiffPixelBytes = 4'000'000'000;

// Rows per strip of a page: strips of up to 64 MiB, so that a reader that takes a strip at a
// time (libtiff's TIFFReadEncodedStrip, tifffile) never needs more than that at once, while a
// page still goes out in a few large writes.
int64_t tiffRowsPerStrip(int64_t rowBytes, int64_t rows);

struct TiffStackLayout {
  std::string head;        // the file's bytes before pixelStart: header, directories, values
  int64_t pixelStart = 0;  // page 0, row 0, column 0; a multiple of 4096
  int64_t sampleBytes = 4;
  int64_t pixelBytes = 0;  // of all pages, contiguous in page, row, column order
  bool bigTiff = false;
  int64_t fileBytes() const { return pixelStart + pixelBytes; }
};

// The layout of a little-endian stack of z pages of y × x float32 samples (uint16 with
// options.tiffUInt16), one directory per page with the tags TiffPageWriter writes: the
// description (ImageJ's text) on page 0, the x/y spacing as resolution when known. BigTIFF when
// the pixels pass kClassicTiffPixelBytes or the classic offsets would not reach them, or when
// options.bigTiff asks for it. Throws IoError naming target for a shape TIFF cannot hold.
TiffStackLayout layOutTiffStack(const std::string& target, int64_t z, int64_t y, int64_t x,
                                const WriteOptions& options, const std::string& description);

}  // namespace stacklens::io
