// Page (IFD) discovery for TiffReader: walking the chain, dropping thumbnails, the first series.
#include "io/tiff_pages.h"

#include <algorithm>
#include <iterator>

#include "io/file_checks.h"
#include "io/tiff_metadata.h"

namespace stacklens::io {
namespace {

constexpr size_t kMaxPages = 1u << 20;
constexpr uint16_t kMaxLevels = 32;  // a pyramid of 2^32 pixels a side has fewer

}  // namespace

TiffPage readPage(TIFF* t) {
  TiffPage p;
  p.offset = TIFFCurrentDirOffset(t);
  TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &p.layout.width);
  TIFFGetField(t, TIFFTAG_IMAGELENGTH, &p.layout.height);
  TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &p.layout.bits);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &p.layout.format);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &p.layout.samples);
  TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &p.layout.planar);
  TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &p.compression);
  TIFFGetField(t, TIFFTAG_SUBFILETYPE, &p.subfileType);
  p.layout.tiled = TIFFIsTiled(t) != 0;
  uint16_t count = 0;
  uint64_t* offsets = nullptr;  // libtiff's, valid while the directory is current
  if (TIFFGetField(t, TIFFTAG_SUBIFD, &count, &offsets) && offsets)
    p.subIfds.assign(offsets, offsets + std::min(count, kMaxLevels));
  return p;
}

bool sameLayout(const TiffReader::Layout& a, const TiffReader::Layout& b) {
  return a.width == b.width && a.height == b.height && a.bits == b.bits && a.format == b.format &&
         a.samples == b.samples && a.planar == b.planar;
}

std::vector<TiffPage> listFullResolutionPages(TIFF* t, const TiffMessages& messages,
                                              const std::string& path,
                                              std::vector<TiffPage>& reduced) {
  // Every IFD once, remembering its offset so that a slice read can jump straight to it.
  std::vector<TiffPage> pages;
  do {
    pages.push_back(readPage(t));
    if (pages.size() >= kMaxPages) break;
  } while (TIFFReadDirectory(t));
  // A broken page chain means a truncated or damaged file: say so rather than show part of it.
  if (!messages.errors.empty())
    throw IoError(path, "the file is truncated or damaged after page " +
                            std::to_string(pages.size() - 1) + ": " +
                            clipCardText(messages.errors));
  // Reduced-resolution copies (thumbnails, pyramid levels) are not slices.
  const auto isReduced = [](const TiffPage& p) {
    return (p.subfileType & FILETYPE_REDUCEDIMAGE) != 0;
  };
  reduced.clear();
  std::copy_if(pages.begin(), pages.end(), std::back_inserter(reduced), isReduced);
  pages.erase(std::remove_if(pages.begin(), pages.end(), isReduced), pages.end());
  if (pages.empty()) throw IoError(path, "the TIFF file has no full-resolution image");
  return pages;
}

TiffLevels listPyramidLevels(TIFF* t, const std::vector<const TiffPage*>& slices,
                             const std::vector<TiffPage>& reduced) {
  TiffLevels levels;
  if (slices.empty()) return levels;
  const TiffReader::Layout& full = slices[0]->layout;
  // Whether page can be the next level: page 0's samples, and smaller than the level before.
  const auto next = [&](const TiffPage& page) {
    const TiffReader::Layout& before = levels.pages.empty() ? full : levels.pages.back().layout;
    const TiffReader::Layout& l = page.layout;
    return l.bits == full.bits && l.format == full.format && l.samples == full.samples &&
           l.planar == full.planar && l.width > 0 && l.height > 0 && l.width <= before.width &&
           l.height <= before.height && (l.width < before.width || l.height < before.height);
  };
  size_t count = slices[0]->subIfds.size();
  for (const TiffPage* page : slices) count = std::min(count, page->subIfds.size());
  for (size_t k = 0; k < count; ++k) {
    if (!TIFFSetSubDirectory(t, slices[0]->subIfds[k])) break;
    const TiffPage level = readPage(t);
    if (!next(level)) break;
    levels.pages.push_back(level);
    levels.offsets.emplace_back();
    for (const TiffPage* page : slices) levels.offsets.back().push_back(page->subIfds[k]);
  }
  if (!levels.pages.empty() || slices.size() != 1) return levels;
  for (const TiffPage& page : reduced) {
    if (page.offset <= slices[0]->offset) continue;  // a thumbnail before the image
    if (!next(page)) break;
    levels.pages.push_back(page);
    levels.offsets.push_back({page.offset});
  }
  return levels;
}

std::string keepFirstSeries(std::vector<TiffPage>& pages) {
  const TiffReader::Layout& first = pages[0].layout;
  size_t series = 1;
  while (series < pages.size() && sameLayout(pages[series].layout, first)) ++series;
  std::string warning;
  if (series < pages.size()) {
    const TiffReader::Layout& odd = pages[series].layout;
    warning = "pages " + std::to_string(series) + " to " + std::to_string(pages.size() - 1) +
              " differ from page 0 (" + std::to_string(odd.width) + " x " +
              std::to_string(odd.height) + ", " + std::to_string(odd.bits) + "-bit instead of " +
              std::to_string(first.width) + " x " + std::to_string(first.height) + ", " +
              std::to_string(first.bits) + "-bit); only the first " + std::to_string(series) +
              " pages are shown";
  }
  pages.resize(series);
  return warning;
}

void checkHasPixels(const TiffReader::Layout& layout, const std::string& path) {
  if (layout.width == 0 || layout.height == 0)
    throw IoError(path, "the first page has no pixels (" + std::to_string(layout.width) + " x " +
                            std::to_string(layout.height) + ")");
}

void checkPageFits(const TiffPage& first, uint64_t fileSize, const std::string& path) {
  // Uncompressed data must be in the file; compressed pages (ZSTD and LZMA reach ratios of many
  // thousands on flat data) must fit the allocation cap, since a page is decoded whole.
  const TiffReader::Layout& l = first.layout;
  const double bytes = l.bits / 8.0;
  const double pageBytes = static_cast<double>(l.width) * l.height * bytes *
                           (l.planar == PLANARCONFIG_CONTIG ? l.samples : 1);
  const bool plain = first.compression == COMPRESSION_NONE;
  const double limit = plain ? static_cast<double>(fileSize) : static_cast<double>(allocationCap());
  if (pageBytes > limit || static_cast<double>(l.width) * l.height > 1.7e10)
    throw IoError(path,
                  "the page size " + std::to_string(l.width) + " x " + std::to_string(l.height) +
                      (plain ? " is impossible for a file of " + std::to_string(fileSize) + " bytes"
                             : " needs more than " + std::to_string(allocationCap() >> 20) +
                                   " MiB per page, the most StackLens decodes"));
}

}  // namespace stacklens::io
