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
  std::vector<uint64_t> subIfds;  // offsets of its SubIFDs (an OME-TIFF pyramid's levels)
};

// The current page's IFD.
TiffPage readPage(TIFF* t);

// Width, height, sample size, format, samples and planar configuration are the same.
bool sameLayout(const TiffReader::Layout& a, const TiffReader::Layout& b);

// Every full-resolution page, in file order (at most 2^20 pages are walked); the
// reduced-resolution ones (thumbnails, pyramid levels) go to `reduced`. A broken page chain
// (libtiff's error in messages) and a file of thumbnails only are errors.
std::vector<TiffPage> listFullResolutionPages(TIFF* t, const TiffMessages& messages,
                                              const std::string& path,
                                              std::vector<TiffPage>& reduced);

// Cuts pages to the first run with page 0's layout; the pages left out are named in the
// returned warning ("" when none are).
std::string keepFirstSeries(std::vector<TiffPage>& pages);

// The reduced-resolution levels of a stack whose slices are the given pages, after level 0.
struct TiffLevels {
  std::vector<TiffPage> pages;                 // each level's page of the first slice
  std::vector<std::vector<uint64_t>> offsets;  // each level's IFD offset of every slice
};

// Stored as the slices' SubIFDs (OME-TIFF pyramids as Bio-Formats and tifffile write them): level
// k is each page's (k − 1)-th SubIFD. Else, for a single slice, the reduced-resolution pages
// after it in the page chain (pyramids as libvips and tifffile write them without SubIFDs). A
// level counts when every slice has it and its page has page 0's samples but fewer pixels than
// the level before; the list ends at the first level that does not.
TiffLevels listPyramidLevels(TIFF* t, const std::vector<const TiffPage*>& slices,
                             const std::vector<TiffPage>& reduced);

// Throws IoError when page 0 has no pixels.
void checkHasPixels(const TiffReader::Layout& layout, const std::string& path);

// A header cannot claim more pixels than the file could hold: throws IoError unless the first
// page's data fits in the file (uncompressed) or in the allocation cap (compressed).
void checkPageFits(const TiffPage& first, uint64_t fileSize, const std::string& path);

}  // namespace stacklens::io
