// TiffReader: finds the pages of a TIFF stack, their order (ImageJ/OME metadata) and spacing,
// and reads one page per slice as float32.
#include "io/tiff_reader.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "io/file_checks.h"
#include "io/tiff_color.h"
#include "io/tiff_metadata.h"
#include "io/tiff_pages.h"
#include "io/tiff_samples.h"
#include "io/tiff_support.h"

namespace stacklens::io {

// One libtiff handle and the messages it reports (declared first: they outlive the handle).
struct TiffReader::Handle {
  TiffMessages messages;
  TiffHandle tif;
};

namespace {

TiffResolution readResolution(TIFF* t) {
  TiffResolution r;
  r.known = TIFFGetField(t, TIFFTAG_XRESOLUTION, &r.x) &&
            TIFFGetField(t, TIFFTAG_YRESOLUTION, &r.y) && r.x > 0 && r.y > 0 &&
            std::isfinite(r.x) && std::isfinite(r.y);
  TIFFGetFieldDefaulted(t, TIFFTAG_RESOLUTIONUNIT, &r.unit);
  return r;
}

std::string imageDescription(TIFF* t) {
  char* text = nullptr;
  return TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &text) && text ? text : "";
}

// The current (first) page's tags as header cards, for display.
void addTagCards(TIFF* t, const TiffPage& first, size_t pageCount, const std::string& description,
                 const TiffResolution& resolution, std::vector<HeaderCard>& header) {
  uint16_t photometric = PHOTOMETRIC_MINISBLACK;
  if (TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric) && photometric == PHOTOMETRIC_MINISWHITE)
    header.push_back(
        {"note", "PhotometricInterpretation is MinIsWhite: values are as stored (0 = white)", ""});
  auto tag = [&](const std::string& key, const std::string& value) {
    header.push_back({"tiff:" + key, clipCardText(value), ""});
  };
  const TiffReader::Layout& l = first.layout;
  tag("ImageWidth", std::to_string(l.width));
  tag("ImageLength", std::to_string(l.height));
  tag("BitsPerSample", std::to_string(l.bits));
  tag("SampleFormat", std::to_string(l.format));
  tag("SamplesPerPixel", std::to_string(l.samples));
  tag("Compression", std::to_string(first.compression));
  tag("Pages", std::to_string(pageCount));
  if (l.tiled) tag("Tiled", "yes");
  if (TIFFIsBigEndian(t)) tag("ByteOrder", "big-endian");
  if (!description.empty()) tag("ImageDescription", description);
  char* software = nullptr;
  if (TIFFGetField(t, TIFFTAG_SOFTWARE, &software) && software) tag("Software", software);
  if (resolution.known) {
    tag("XResolution", std::to_string(resolution.x));
    tag("YResolution", std::to_string(resolution.y));
    tag("ResolutionUnit", resolution.unit == RESUNIT_NONE   ? "none"
                          : resolution.unit == RESUNIT_INCH ? "inch"
                                                            : "centimeter");
  }
}

// Where the shown sample lies in a page's rows.
struct SamplePlacement {
  size_t step = 1;           // samples per pixel in a row: all of them (chunky) or 1 (planar)
  size_t sampleInPixel = 0;  // chunky: the shown sample's index in a pixel
  uint16_t samplePlane = 0;  // planar: the shown sample's strips or tiles
  size_t bits = 0;
  size_t rowBytes(size_t pixels) const { return (pixels * step * bits + 7) / 8; }
};

// Planar data store each sample in strips/tiles of its own; chunky data interleave them.
SamplePlacement placeSample(const TiffReader::Layout& l, uint16_t sample) {
  const bool chunky = l.planar == PLANARCONFIG_CONTIG;
  return {chunky ? size_t{l.samples} : 1, chunky ? size_t{sample} : 0,
          static_cast<uint16_t>(chunky ? 0 : sample), l.bits};
}

// Throws "cannot read slice z: why: libtiff's error" for a failed read of one slice.
struct SliceFailure {
  const std::string& path;
  std::string what;
  const TiffMessages& messages;
  [[noreturn]] void operator()(const std::string& why) const {
    throwTiffError(path, what + ": " + why, messages);
  }
};

// Rows [rowFrom, rowTo) of the page into out (its first row is rowFrom): only the tiles or strips
// that hold them are decoded.
void readTiles(TIFF* t, const TiffReader::Layout& l, DType type, const SamplePlacement& place,
               const SliceFailure& fail, size_t rowFrom, size_t rowTo, float* out) {
  uint32_t tw = 0, th = 0;
  TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
  const tmsize_t size = TIFFTileSize(t);
  if (tw == 0 || th == 0 || size <= 0 || static_cast<size_t>(size) < th * place.rowBytes(tw))
    fail("bad tile size");
  // A tile may be larger than its page (found by tiff_fuzzer: 68 GB claimed by 827 bytes).
  if (static_cast<uint64_t>(size) > allocationCap())
    fail("a tile of " + std::to_string(size) + " bytes is more than StackLens decodes");
  std::vector<unsigned char> buffer(static_cast<size_t>(size));
  const size_t width = l.width, height = l.height;
  for (size_t y0 = rowFrom / th * th; y0 < rowTo; y0 += th)
    for (uint32_t x0 = 0; x0 < width; x0 += tw) {
      if (TIFFReadEncodedTile(
              t, TIFFComputeTile(t, x0, static_cast<uint32_t>(y0), 0, place.samplePlane),
              buffer.data(), size) < 0)
        fail("bad tile data");
      const size_t rows = std::min<size_t>(th, height - y0),
                   cols = std::min<size_t>(tw, width - x0);
      for (size_t r = std::max(y0, rowFrom) - y0; r < rows && y0 + r < rowTo; ++r)
        convertTiffRow(l, type, buffer.data() + r * place.rowBytes(tw), place.step,
                       place.sampleInPixel, cols, out + (y0 + r - rowFrom) * width + x0);
    }
}

void readStrips(TIFF* t, const TiffReader::Layout& l, DType type, const SamplePlacement& place,
                const SliceFailure& fail, size_t rowFrom, size_t rowTo, float* out) {
  uint32_t rowsPerStrip = 0;
  TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rowsPerStrip);
  rowsPerStrip = std::clamp<uint32_t>(rowsPerStrip, 1, l.height);
  const tmsize_t size = TIFFStripSize(t);
  const size_t width = l.width, height = l.height, rowBytes = place.rowBytes(width);
  if (size <= 0 || static_cast<size_t>(size) < rowBytes) fail("bad strip size");
  if (static_cast<uint64_t>(size) > allocationCap())
    fail("a strip of " + std::to_string(size) + " bytes is more than StackLens decodes");
  std::vector<unsigned char> buffer(static_cast<size_t>(size));
  const uint32_t strips = static_cast<uint32_t>((rowTo + rowsPerStrip - 1) / rowsPerStrip);
  for (uint32_t s = static_cast<uint32_t>(rowFrom / rowsPerStrip); s < strips; ++s) {
    const size_t first = size_t{s} * rowsPerStrip;
    const size_t rows = std::min<size_t>(rowsPerStrip, height - first);
    const tmsize_t got = TIFFReadEncodedStrip(
        t, TIFFComputeStrip(t, static_cast<uint32_t>(first), place.samplePlane), buffer.data(),
        static_cast<tmsize_t>(rows * rowBytes));
    if (got < static_cast<tmsize_t>(rows * rowBytes))
      fail("bad or truncated strip " + std::to_string(s));
    for (size_t r = std::max(first, rowFrom) - first; r < rows && first + r < rowTo; ++r)
      convertTiffRow(l, type, buffer.data() + r * rowBytes, place.step, place.sampleInPixel, width,
                     out + (first + r - rowFrom) * width);
  }
}

}  // namespace

TiffReader::TiffReader(const std::string& path, const OpenOptions& options, uint64_t fileSize) {
  info_.path = path;
  info_.format = "tiff";
  std::unique_ptr<Handle> handle = openHandle("not a readable TIFF file");
  TIFF* t = handle->tif.get();
  std::vector<TiffPage> reduced;
  std::vector<TiffPage> pages = listFullResolutionPages(t, handle->messages, path, reduced);
  layout_ = pages[0].layout;
  checkHasPixels(layout_, path);
  info_.dtype = tiffSampleType(layout_, path);
  if (std::string warning = keepFirstSeries(pages); !warning.empty())
    info_.header.push_back({"warning", std::move(warning), ""});
  checkPageFits(pages[0], fileSize, path);
  if (layout_.samples > 1)
    info_.header.push_back({"note",
                            "each pixel has " + std::to_string(layout_.samples) +
                                " samples (e.g. RGB); each sample is a plane, sample fastest",
                            ""});
  TIFFSetSubDirectory(t, pages[0].offset);
  if (prepareColorPath(t) != TiffColorPath::Stored)
    info_.header.push_back({"note",
                            "stored as YCbCr or old-style JPEG: read as libtiff decodes it (red, "
                            "green, blue, or grey for a grey page)",
                            ""});
  const TiffResolution resolution = readResolution(t);
  const std::string description = imageDescription(t);
  addTagCards(t, pages[0], pages.size(), description, resolution, info_.header);
  const TiffDimensions dims =
      readStackOrder(description, static_cast<long long>(pages.size()), resolution);
  const std::vector<const TiffPage*> slices = choosePlane(dims, options.plane, pages);
  chooseLevel(listPyramidLevels(t, slices, reduced), options.hdu, slices);
  handle->messages = {};
  release(std::move(handle));
}

std::unique_ptr<TiffReader::Handle> TiffReader::openHandle(const std::string& failure) const {
  auto handle = std::make_unique<Handle>();
  handle->tif.reset(openTiff(info_.path, "rm", handle->messages));
  if (!handle->tif) throwTiffError(info_.path, failure, handle->messages);
  return handle;
}

// The pages' order: from ImageJ or OME metadata, else every page a slice. Spacing comes with it.
TiffDimensions TiffReader::readStackOrder(const std::string& description, long long pageCount,
                                          const TiffResolution& resolution) {
  const bool imagej = description.rfind("ImageJ=", 0) == 0;
  const bool ome = !imagej && description.find("<OME") != std::string::npos;
  if (imagej) return readImagejMetadata(description, pageCount, resolution, info_);
  if (ome) return readOmeMetadata(description, pageCount, info_);
  readResolutionSpacing(resolution, info_);
  TiffDimensions dims;
  dims.sizes[1] = pageCount;
  return dims;
}

// The scrubbed axis is z; without a z axis, time; without either, channels. The other axes make
// up the planes (OpenOptions::plane), channel fastest, after the samples of a pixel.
std::vector<const TiffPage*> TiffReader::choosePlane(const TiffDimensions& dims, int plane,
                                                     const std::vector<TiffPage>& pages) {
  const int zDim = dims.sizes[1] > 1 ? 1 : dims.sizes[2] > 1 ? 2 : 0;
  std::vector<int> planeDims;
  for (int d : {0, 1, 2})
    if (d != zDim && dims.sizes[d] > 1) planeDims.push_back(d);
  info_.z = dims.sizes[zDim];
  info_.planes = layout_.samples;
  for (int d : planeDims) info_.planes *= dims.sizes[d];
  if (plane < 0 || plane >= info_.planes)
    throw IoError(info_.path, "plane " + std::to_string(plane) + " is outside 0.." +
                                  std::to_string(info_.planes - 1));
  info_.plane = plane;
  sample_ = static_cast<uint16_t>(plane % layout_.samples);
  long long base = 0, rest = plane / layout_.samples;
  for (int d : planeDims) {
    base += (rest % dims.sizes[d]) * dims.strides[d];
    rest /= dims.sizes[d];
  }
  std::vector<const TiffPage*> slices(static_cast<size_t>(info_.z));
  for (long long k = 0; k < info_.z; ++k)
    slices[static_cast<size_t>(k)] = &pages[static_cast<size_t>(base + k * dims.strides[zDim])];
  return slices;
}

// The pyramid's levels are listed as HDUs, as for OME-Zarr; hdu k > 0 reads every slice from its
// level-k page, with the spacing of that level's pixels.
void TiffReader::chooseLevel(const TiffLevels& levels, int hdu,
                             const std::vector<const TiffPage*>& slices) {
  const int64_t fullX = layout_.width, fullY = layout_.height;
  info_.hdus.push_back({0, "", "image", {fullX, fullY, info_.z}});
  for (size_t k = 0; k < levels.pages.size(); ++k) {
    const TiffReader::Layout& l = levels.pages[k].layout;
    info_.hdus.push_back({int(k + 1),
                          "level " + std::to_string(k + 1),
                          "image (pyramid level " + std::to_string(k + 1) + ")",
                          {int64_t(l.width), int64_t(l.height), info_.z}});
  }
  const int level = std::max(hdu, 0);
  if (level > int(levels.pages.size()))
    throw IoError(info_.path, "HDU " + std::to_string(hdu) + " is outside 0.." +
                                  std::to_string(levels.pages.size()) + " (the pyramid's levels)");
  sliceOffsets_.clear();
  for (const TiffPage* page : slices) sliceOffsets_.push_back(page->offset);
  if (level > 0) {
    sliceOffsets_ = levels.offsets[size_t(level - 1)];
    layout_ = levels.pages[size_t(level - 1)].layout;
    info_.hdu = level;
    info_.spacing[1] *= double(fullY) / double(layout_.height);
    info_.spacing[2] *= double(fullX) / double(layout_.width);
  }
  info_.y = layout_.height;
  info_.x = layout_.width;
}

TiffReader::~TiffReader() = default;

std::unique_ptr<TiffReader::Handle> TiffReader::acquire() const {
  {
    std::lock_guard<std::mutex> lock(poolMutex_);
    if (!idle_.empty()) {
      auto h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  return openHandle("cannot reopen the file");
}

void TiffReader::release(std::unique_ptr<Handle> handle) const {
  std::lock_guard<std::mutex> lock(poolMutex_);
  idle_.push_back(std::move(handle));
}

void TiffReader::readSlice(int64_t z, float* out) const {
  if (z < 0 || z >= info_.z)
    throw IoError(info_.path,
                  "slice " + std::to_string(z) + " is outside 0.." + std::to_string(info_.z - 1));
  readPageRows(z, 0, info_.y, out);
}

void TiffReader::readRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  if (z < 0 || z >= info_.z || y0 < 0 || y1 > info_.y || y0 >= y1)
    throw IoError(info_.path, "rows " + std::to_string(y0) + ".." + std::to_string(y1) +
                                  " of slice " + std::to_string(z) + " are outside the stack");
  readPageRows(z, y0, y1, out);
}

void TiffReader::readPageRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  // A handle that fails may be in any state: it is closed (by the throw) rather than returned to
  // the pool.
  std::unique_ptr<Handle> handle = acquire();
  TIFF* t = handle->tif.get();
  handle->messages = {};
  const SliceFailure fail{info_.path, "cannot read slice " + std::to_string(z), handle->messages};
  if (!TIFFSetSubDirectory(t, sliceOffsets_[static_cast<size_t>(z)])) fail("cannot find its page");
  const TiffPage page = readPage(t);
  if (!sameLayout(page.layout, layout_) || page.layout.tiled != layout_.tiled)
    fail("its page changed");
  const size_t from = size_t(y0), to = size_t(y1);
  // YCbCr and old-style JPEG pages are read as libtiff's own tools read them (io/tiff_color.h),
  // whole pages only.
  if (prepareColorPath(t) == TiffColorPath::Rgba) {
    std::vector<float> whole;
    const bool all = y0 == 0 && y1 == info_.y;
    if (!all) whole.resize(size_t(info_.x * info_.y));
    if (const std::string why =
            readRgbaSample(t, layout_.width, layout_.height, sample_, all ? out : whole.data());
        !why.empty())
      fail(why);
    if (!all) std::copy(whole.begin() + y0 * info_.x, whole.begin() + y1 * info_.x, out);
  } else if (layout_.tiled) {
    readTiles(t, layout_, info_.dtype, placeSample(layout_, sample_), fail, from, to, out);
  } else {
    readStrips(t, layout_, info_.dtype, placeSample(layout_, sample_), fail, from, to, out);
  }
  if (!handle->messages.errors.empty()) fail("libtiff reported an error");
  release(std::move(handle));
}

}  // namespace stacklens::io
