// The pages (IFDs) of a TIFF file: which of them form the stack, and whether their size can be
// decoded (internal to io).
#pragma once

#include <tiffio.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/tiff_reader.h"
#include "io/tiff_support.h"

namespace stacklens::io {

struct TiffPage {
  uint64_t offset = 0;  // of its IFD, for TIFFSetSubDirectory
  TiffReader::Layout layout;
  uint16_t compression = 1;
  uint32_t subfileType = 0;
};

// The current page's IFD.
TiffPage readPage(TIFF* t);

// Width, height, sample size, format, samples and planar configuration are the same.
bool sameLayout(const TiffReader::Layout& a, const TiffReader::Layout& b);

// Every full-resolution page, in file order (at most 2^20 pages are walked). A broken page chain
// (libtiff's error in messages) and a file of thumbnails only are errors.
std::vector<TiffPage> listFullResolutionPages(TIFF* t, const TiffMessages& messages,
                                              const std::string& path);

// Cuts pages to the first run with page 0's layout; the pages left out are named in the
// returned warning ("" when none are).
std::string keepFirstSeries(std::vector<TiffPage>& pages);

// Throws IoError when page 0 has no pixels.
void checkHasPixels(const TiffReader::Layout& layout, const std::string& path);

// A header cannot claim more pixels than the file could hold: throws IoError unless the first
// page's data fits in the file (uncompressed) or in the allocation cap (compressed).
void checkPageFits(const TiffPage& first, uint64_t fileSize, const std::string& path);

}  // namespace stacklens::io
