// TiffReader: finds the pages of a TIFF stack, their order (ImageJ/OME metadata) and spacing,
// and reads one page per slice as float32.
#include "io/tiff_reader.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>

#include "io/file_checks.h"
#include "io/tiff_support.h"

namespace stacklens::io {

struct TiffReader::Handle {
  TiffMessages messages;
  TIFF* tif = nullptr;
  ~Handle() {
    if (tif) TIFFClose(tif);
  }
};

namespace {

constexpr size_t kMaxPages = 1u << 20;
constexpr size_t kMaxCardText = 300;

struct Page {
  uint64_t offset = 0;
  TiffReader::Layout layout;
  uint16_t compression = 1;
  uint32_t subfileType = 0;
};

bool sameLayout(const TiffReader::Layout& a, const TiffReader::Layout& b) {
  return a.width == b.width && a.height == b.height && a.bits == b.bits && a.format == b.format &&
         a.samples == b.samples && a.planar == b.planar;
}

Page readPage(TIFF* t) {
  Page p;
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
  return p;
}

DType dtypeOf(const TiffReader::Layout& l, const std::string& path) {
  const bool isInt = l.format == SAMPLEFORMAT_INT;
  const bool isUInt = l.format == SAMPLEFORMAT_UINT || l.format == SAMPLEFORMAT_VOID;
  const bool isFloat = l.format == SAMPLEFORMAT_IEEEFP;
  // 1-, 2- and 4-bit samples (masks, bilevel scans) are unpacked to their stored values.
  if (isUInt && (l.bits == 1 || l.bits == 2 || l.bits == 4) && l.samples == 1) return DType::UInt8;
  if ((isInt || isUInt) && l.bits == 8) return isInt ? DType::Int8 : DType::UInt8;
  if ((isInt || isUInt) && l.bits == 16) return isInt ? DType::Int16 : DType::UInt16;
  if ((isInt || isUInt) && l.bits == 32) return isInt ? DType::Int32 : DType::UInt32;
  if ((isInt || isUInt) && l.bits == 64) return isInt ? DType::Int64 : DType::UInt64;
  if (isFloat && (l.bits == 16 || l.bits == 32)) return DType::Float32;  // half widened exactly
  if (isFloat && l.bits == 64) return DType::Float64;
  throw IoError(path, "unsupported sample type: " + std::to_string(l.bits) + "-bit " +
                          (isFloat  ? "float"
                           : isInt  ? "signed"
                           : isUInt ? "unsigned"
                                    : "complex") +
                          (l.samples > 1 ? " with " + std::to_string(l.samples) + " samples" : "") +
                          " (supported: 1/2/4-bit unsigned, 8/16/32/64-bit integers, "
                          "16/32/64-bit float)");
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string clip(const std::string& s) {
  return s.size() <= kMaxCardText ? s : s.substr(0, kMaxCardText) + "…";
}

// "key=value" lines of an ImageJ description.
std::map<std::string, std::string> parseImagej(const std::string& description) {
  std::map<std::string, std::string> out;
  std::istringstream in(description);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    out[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return out;
}

bool parsePositive(const std::string& text, double& out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v) || v <= 0) return false;
  out = v;
  return true;
}

// Counts from metadata are clamped so that products of three of them cannot overflow; anything
// above the clamp is far beyond any page count anyway.
constexpr long long kMaxCount = 1 << 20;

long long parseCount(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) return 1;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  return end == it->second.c_str() || v < 1 ? 1 : std::min(v, kMaxCount);
}

// The value of attribute name in the first element called element of an XML text (enough for
// OME's Pixels element; not a general XML parser).
std::string xmlAttribute(const std::string& xml, const std::string& element,
                         const std::string& name) {
  size_t start = 0;
  while ((start = xml.find("<" + element, start)) != std::string::npos) {
    const size_t after = start + 1 + element.size();
    if (after < xml.size() && (xml[after] == ' ' || xml[after] == '\n' || xml[after] == '\t' ||
                               xml[after] == '\r' || xml[after] == '>' || xml[after] == '/'))
      break;
    start = after;
  }
  if (start == std::string::npos) return "";
  const size_t end = xml.find('>', start);
  const std::string tag =
      xml.substr(start, end == std::string::npos ? std::string::npos : end - start);
  size_t pos = 0;
  while ((pos = tag.find(name, pos)) != std::string::npos) {
    const bool boundary = pos > 0 && std::isspace(static_cast<unsigned char>(tag[pos - 1]));
    size_t q = pos + name.size();
    while (q < tag.size() && std::isspace(static_cast<unsigned char>(tag[q]))) ++q;
    if (boundary && q < tag.size() && tag[q] == '=') {
      ++q;
      while (q < tag.size() && std::isspace(static_cast<unsigned char>(tag[q]))) ++q;
      if (q < tag.size() && (tag[q] == '"' || tag[q] == '\'')) {
        const size_t close = tag.find(tag[q], q + 1);
        if (close != std::string::npos) return tag.substr(q + 1, close - q - 1);
      }
      return "";
    }
    pos += name.size();
  }
  return "";
}

std::string normaliseUnit(std::string unit) {
  if (unit == "\\u00B5m" || unit == "\xc2\xb5m" || unit == "\xce\xbcm" || unit == "um" ||
      unit == "microns")
    return "micron";
  return unit;
}

// How hyperstack pages are ordered: sizes and page strides of the channel, z and time axes.
struct Dimensions {
  long long sizes[3] = {1, 1, 1};    // C, Z, T
  long long strides[3] = {1, 1, 1};  // pages between neighbours along C, Z, T
};

}  // namespace

TiffReader::TiffReader(const std::string& path, const OpenOptions& options, uint64_t fileSize) {
  info_.path = path;
  info_.format = "tiff";
  auto handle = std::make_unique<Handle>();
  handle->tif = openTiff(path, "rm", handle->messages);
  if (!handle->tif) throw IoError(path, tiffReason("not a readable TIFF file", handle->messages));
  TIFF* t = handle->tif;

  // Every IFD once, remembering its offset so that a slice read can jump straight to it.
  std::vector<Page> pages;
  do {
    pages.push_back(readPage(t));
    if (pages.size() >= kMaxPages) break;
  } while (TIFFReadDirectory(t));
  // A broken page chain means a truncated or damaged file: say so rather than show part of it.
  if (!handle->messages.errors.empty())
    throw IoError(path, "the file is truncated or damaged after page " +
                            std::to_string(pages.size() - 1) + ": " +
                            clip(handle->messages.errors));
  // Reduced-resolution copies (thumbnails, pyramid levels) are not slices.
  pages.erase(
      std::remove_if(pages.begin(), pages.end(),
                     [](const Page& p) { return (p.subfileType & FILETYPE_REDUCEDIMAGE) != 0; }),
      pages.end());
  if (pages.empty()) throw IoError(path, "the TIFF file has no full-resolution image");
  layout_ = pages[0].layout;
  if (layout_.width == 0 || layout_.height == 0)
    throw IoError(path, "the first page has no pixels (" + std::to_string(layout_.width) + " x " +
                            std::to_string(layout_.height) + ")");
  info_.dtype = dtypeOf(layout_, path);
  size_t series = 1;
  while (series < pages.size() && sameLayout(pages[series].layout, layout_)) ++series;
  if (series < pages.size()) {
    const Page& odd = pages[series];
    info_.header.push_back(
        {"warning",
         "pages " + std::to_string(series) + " to " + std::to_string(pages.size() - 1) +
             " differ from page 0 (" + std::to_string(odd.layout.width) + " x " +
             std::to_string(odd.layout.height) + ", " + std::to_string(odd.layout.bits) +
             "-bit instead of " + std::to_string(layout_.width) + " x " +
             std::to_string(layout_.height) + ", " + std::to_string(layout_.bits) +
             "-bit); only the first " + std::to_string(series) + " pages are shown",
         ""});
  }
  pages.resize(series);

  // A header cannot claim more pixels than the file could hold: uncompressed data must be in the
  // file; compressed pages (ZSTD and LZMA reach ratios of many thousands on flat data) must fit
  // the allocation cap, since a page is decoded whole.
  const double bytes = layout_.bits / 8.0;
  const double pageBytes = static_cast<double>(layout_.width) * layout_.height * bytes *
                           (layout_.planar == PLANARCONFIG_CONTIG ? layout_.samples : 1);
  const bool plain = pages[0].compression == COMPRESSION_NONE;
  const double limit = plain ? static_cast<double>(fileSize) : static_cast<double>(allocationCap());
  if (pageBytes > limit || static_cast<double>(layout_.width) * layout_.height > 1.7e10)
    throw IoError(path,
                  "the page size " + std::to_string(layout_.width) + " x " +
                      std::to_string(layout_.height) +
                      (plain ? " is impossible for a file of " + std::to_string(fileSize) + " bytes"
                             : " needs more than " + std::to_string(allocationCap() >> 20) +
                                   " MiB per page, the most StackLens decodes"));
  if (layout_.samples > 1)
    info_.header.push_back({"note",
                            "each pixel has " + std::to_string(layout_.samples) +
                                " samples (e.g. RGB); each sample is a plane, sample fastest",
                            ""});

  // Tags for display.
  TIFFSetSubDirectory(t, pages[0].offset);
  uint16_t photometric = PHOTOMETRIC_MINISBLACK;
  if (TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric) && photometric == PHOTOMETRIC_MINISWHITE)
    info_.header.push_back(
        {"note", "PhotometricInterpretation is MinIsWhite: values are as stored (0 = white)", ""});
  char* text = nullptr;
  std::string description;
  if (TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &text) && text) description = text;
  auto tag = [&](const std::string& key, const std::string& value) {
    info_.header.push_back({"tiff:" + key, clip(value), ""});
  };
  tag("ImageWidth", std::to_string(layout_.width));
  tag("ImageLength", std::to_string(layout_.height));
  tag("BitsPerSample", std::to_string(layout_.bits));
  tag("SampleFormat", std::to_string(layout_.format));
  tag("SamplesPerPixel", std::to_string(layout_.samples));
  tag("Compression", std::to_string(pages[0].compression));
  tag("Pages", std::to_string(pages.size()));
  if (layout_.tiled) tag("Tiled", "yes");
  if (TIFFIsBigEndian(t)) tag("ByteOrder", "big-endian");
  if (!description.empty()) tag("ImageDescription", description);
  if (TIFFGetField(t, TIFFTAG_SOFTWARE, &text) && text) tag("Software", text);
  float xres = 0, yres = 0;
  uint16_t resUnit = RESUNIT_INCH;
  const bool hasRes = TIFFGetField(t, TIFFTAG_XRESOLUTION, &xres) &&
                      TIFFGetField(t, TIFFTAG_YRESOLUTION, &yres) && xres > 0 && yres > 0 &&
                      std::isfinite(xres) && std::isfinite(yres);
  TIFFGetFieldDefaulted(t, TIFFTAG_RESOLUTIONUNIT, &resUnit);
  if (hasRes) {
    tag("XResolution", std::to_string(xres));
    tag("YResolution", std::to_string(yres));
    tag("ResolutionUnit", resUnit == RESUNIT_NONE   ? "none"
                          : resUnit == RESUNIT_INCH ? "inch"
                                                    : "centimeter");
  }

  Dimensions dims;
  dims.sizes[1] = static_cast<long long>(pages.size());
  const long long pageCount = static_cast<long long>(pages.size());
  const bool imagej = description.rfind("ImageJ=", 0) == 0;
  const bool ome = !imagej && description.find("<OME") != std::string::npos;
  if (imagej) {
    const auto meta = parseImagej(description);
    for (const auto& [key, value] : meta)
      if (key != "ImageJ") info_.header.push_back({"imagej:" + key, clip(value), ""});
    const long long c = parseCount(meta, "channels"), z = parseCount(meta, "slices"),
                    tcount = parseCount(meta, "frames");
    if (c * z * tcount > 1 && c * z * tcount <= pageCount) {
      // ImageJ stores hyperstacks channel-fastest: C, then Z, then T.
      dims.sizes[0] = c, dims.sizes[1] = z, dims.sizes[2] = tcount;
      dims.strides[0] = 1, dims.strides[1] = c, dims.strides[2] = c * z;
    } else if (c * z * tcount > pageCount) {
      throw IoError(path, "the ImageJ metadata describes " + std::to_string(c * z * tcount) +
                              " images but the file has " + std::to_string(pageCount) +
                              " pages (single-page ImageJ files over 4 GB are not supported)");
    }
    // A spacing without a unit (ImageJ then says "pixel") is still the writer's spacing.
    auto unit = meta.find("unit");
    if (hasRes && resUnit == RESUNIT_NONE &&
        (unit != meta.end() || meta.count("spacing") || xres != 1 || yres != 1)) {
      info_.spacingKnown = true;
      info_.spacing = {1.0, 1.0 / yres, 1.0 / xres};
      double spacing = 0;
      auto zs = meta.find("spacing");
      if (zs != meta.end() && parsePositive(zs->second, spacing)) info_.spacing[0] = spacing;
      const std::string u = unit == meta.end() ? "" : normaliseUnit(unit->second);
      info_.units = {u, u, u};
    }
  } else if (ome) {
    const std::string order = xmlAttribute(description, "Pixels", "DimensionOrder");
    long long sizes[3] = {1, 1, 1};
    const char* names[3] = {"SizeC", "SizeZ", "SizeT"};
    for (int i = 0; i < 3; ++i) {
      char* end = nullptr;
      const std::string v = xmlAttribute(description, "Pixels", names[i]);
      long long n = std::strtoll(v.c_str(), &end, 10);
      sizes[i] = end == v.c_str() || n < 1 ? 1 : std::min(n, kMaxCount);
      info_.header.push_back({std::string("ome:") + names[i], std::to_string(sizes[i]), ""});
    }
    const bool validOrder =
        order.size() == 5 && order.rfind("XY", 0) == 0 && order.find('C') != std::string::npos &&
        order.find('Z') != std::string::npos && order.find('T') != std::string::npos;
    if (validOrder && sizes[0] * sizes[1] * sizes[2] <= pageCount) {
      long long stride = 1;
      for (int k = 2; k < 5; ++k) {
        const int dim = order[static_cast<size_t>(k)] == 'C'   ? 0
                        : order[static_cast<size_t>(k)] == 'Z' ? 1
                                                               : 2;
        dims.sizes[dim] = sizes[dim];
        dims.strides[dim] = stride;
        stride *= sizes[dim];
      }
      info_.header.push_back({"ome:DimensionOrder", order, ""});
    }
    double sx = 0, sy = 0, sz = 0;
    const bool hasX = parsePositive(xmlAttribute(description, "Pixels", "PhysicalSizeX"), sx);
    const bool hasY = parsePositive(xmlAttribute(description, "Pixels", "PhysicalSizeY"), sy);
    if (hasX != hasY) {  // writers often give one size for square pixels
      (hasX ? sy : sx) = hasX ? sx : sy;
      info_.header.push_back({"note",
                              std::string("OME gives no PhysicalSize") + (hasX ? "Y" : "X") +
                                  "; square pixels assumed",
                              ""});
    }
    if (hasX || hasY) {
      info_.spacingKnown = true;
      info_.spacing = {1.0, sy, sx};
      if (parsePositive(xmlAttribute(description, "Pixels", "PhysicalSizeZ"), sz))
        info_.spacing[0] = sz;
      const char* unitNames[3] = {"PhysicalSizeZUnit", "PhysicalSizeYUnit", "PhysicalSizeXUnit"};
      for (size_t i = 0; i < 3; ++i) {
        std::string u = xmlAttribute(description, "Pixels", unitNames[i]);
        info_.units[i] = normaliseUnit(u.empty() ? "micron" : u);  // OME's default unit is µm
      }
    }
  } else if (hasRes && resUnit == RESUNIT_CENTIMETER) {
    // Only centimetre resolutions describe a physical pixel; inch values are mostly print DPI.
    info_.spacingKnown = true;
    info_.spacing = {1.0, 1e4 / yres, 1e4 / xres};
    info_.units = {"micron", "micron", "micron"};
  }

  // The scrubbed axis is z; without a z axis, time; without either, channels. The other axes
  // make up the planes (OpenOptions::plane), channel fastest.
  int zDim = dims.sizes[1] > 1 ? 1 : dims.sizes[2] > 1 ? 2 : 0;
  std::vector<int> planeDims;
  for (int d : {0, 1, 2})
    if (d != zDim && dims.sizes[d] > 1) planeDims.push_back(d);
  info_.z = dims.sizes[zDim];
  info_.planes = layout_.samples;
  for (int d : planeDims) info_.planes *= dims.sizes[d];
  if (options.plane < 0 || options.plane >= info_.planes)
    throw IoError(path, "plane " + std::to_string(options.plane) + " is outside 0.." +
                            std::to_string(info_.planes - 1));
  info_.plane = options.plane;
  sample_ = static_cast<uint16_t>(options.plane % layout_.samples);
  long long base = 0, rest = options.plane / layout_.samples;
  for (int d : planeDims) {
    base += (rest % dims.sizes[d]) * dims.strides[d];
    rest /= dims.sizes[d];
  }
  sliceOffsets_.resize(static_cast<size_t>(info_.z));
  for (long long k = 0; k < info_.z; ++k)
    sliceOffsets_[static_cast<size_t>(k)] =
        pages[static_cast<size_t>(base + k * dims.strides[zDim])].offset;
  info_.y = layout_.height;
  info_.x = layout_.width;
  info_.hdus.push_back({0, "", "image", {info_.x, info_.y, info_.z}});
  handle->messages = {};
  release(std::move(handle));
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
  auto h = std::make_unique<Handle>();
  h->tif = openTiff(info_.path, "rm", h->messages);
  if (!h->tif) throw IoError(info_.path, tiffReason("cannot reopen the file", h->messages));
  return h;
}

void TiffReader::release(std::unique_ptr<Handle> handle) const {
  std::lock_guard<std::mutex> lock(poolMutex_);
  idle_.push_back(std::move(handle));
}

namespace {

template <class T>
void convertRun(const unsigned char* in, size_t step, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, in + i * step * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(v);
  }
}

// IEEE 754 binary16 → float, exactly (subnormals, ±Inf and NaN included).
float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16, exponent = (h >> 10) & 0x1F,
                 mantissa = h & 0x3FFu;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    magnitude =
        mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

// One row of `count` pixels of the chosen sample, converted to float. `row` points at the row's
// first byte; chunky pixels hold `step` samples, the wanted one at index `sample`.
void convertRow(const TiffReader::Layout& l, DType type, const unsigned char* row, size_t step,
                size_t sample, size_t count, float* out) {
  if (l.bits < 8) {  // packed, most significant bits first, one sample per pixel
    const unsigned mask = (1u << l.bits) - 1;
    for (size_t i = 0; i < count; ++i) {
      const size_t bit = i * l.bits;
      out[i] = static_cast<float>((row[bit / 8] >> (8 - l.bits - bit % 8)) & mask);
    }
    return;
  }
  const unsigned char* in = row + sample * (l.bits / 8);
  if (l.format == SAMPLEFORMAT_IEEEFP && l.bits == 16) {
    for (size_t i = 0; i < count; ++i) {
      uint16_t h;
      std::memcpy(&h, in + i * step * 2, 2);
      out[i] = halfToFloat(h);
    }
    return;
  }
  switch (type) {
    case DType::UInt8:
      convertRun<uint8_t>(in, step, count, out);
      break;
    case DType::Int8:
      convertRun<int8_t>(in, step, count, out);
      break;
    case DType::UInt16:
      convertRun<uint16_t>(in, step, count, out);
      break;
    case DType::Int16:
      convertRun<int16_t>(in, step, count, out);
      break;
    case DType::UInt32:
      convertRun<uint32_t>(in, step, count, out);
      break;
    case DType::Int32:
      convertRun<int32_t>(in, step, count, out);
      break;
    case DType::UInt64:
      convertRun<uint64_t>(in, step, count, out);
      break;
    case DType::Int64:
      convertRun<int64_t>(in, step, count, out);
      break;
    case DType::Float32:
      convertRun<float>(in, step, count, out);
      break;
    case DType::Float64:
      convertRun<double>(in, step, count, out);
      break;
  }
}

}  // namespace

void TiffReader::readSlice(int64_t z, float* out) const {
  if (z < 0 || z >= info_.z)
    throw IoError(info_.path,
                  "slice " + std::to_string(z) + " is outside 0.." + std::to_string(info_.z - 1));
  auto handle = acquire();
  TIFF* t = handle->tif;
  handle->messages = {};
  const std::string what = "cannot read slice " + std::to_string(z);
  const auto fail = [&](const std::string& why) {
    std::string reason = tiffReason(what + ": " + why, handle->messages);
    // A handle that failed may be in any state; it is closed rather than returned to the pool.
    throw IoError(info_.path, reason);
  };
  if (!TIFFSetSubDirectory(t, sliceOffsets_[static_cast<size_t>(z)])) fail("cannot find its page");
  Page page = readPage(t);
  if (!sameLayout(page.layout, layout_) || page.layout.tiled != layout_.tiled)
    fail("its page changed");
  const bool chunky = layout_.planar == PLANARCONFIG_CONTIG;
  const size_t step = chunky ? layout_.samples : 1;
  // Planar data store each sample in strips/tiles of its own; chunky data interleave them.
  const size_t sampleInPixel = chunky ? sample_ : 0;
  const uint16_t samplePlane = chunky ? 0 : sample_;
  const auto rowBytesOf = [&](size_t pixels) { return (pixels * step * layout_.bits + 7) / 8; };
  const size_t width = layout_.width, height = layout_.height;
  if (layout_.tiled) {
    uint32_t tw = 0, th = 0;
    TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
    const tmsize_t size = TIFFTileSize(t);
    if (tw == 0 || th == 0 || size <= 0 || static_cast<size_t>(size) < th * rowBytesOf(tw))
      fail("bad tile size");
    // A tile may be larger than its page (found by tiff_fuzzer: 68 GB claimed by 827 bytes).
    if (static_cast<uint64_t>(size) > allocationCap())
      fail("a tile of " + std::to_string(size) + " bytes is more than StackLens decodes");
    std::vector<unsigned char> buffer(static_cast<size_t>(size));
    for (uint32_t y0 = 0; y0 < height; y0 += th)
      for (uint32_t x0 = 0; x0 < width; x0 += tw) {
        if (TIFFReadEncodedTile(t, TIFFComputeTile(t, x0, y0, 0, samplePlane), buffer.data(),
                                size) < 0)
          fail("bad tile data");
        const size_t rows = std::min<size_t>(th, height - y0),
                     cols = std::min<size_t>(tw, width - x0);
        for (size_t r = 0; r < rows; ++r)
          convertRow(layout_, info_.dtype, buffer.data() + r * rowBytesOf(tw), step, sampleInPixel,
                     cols, out + (y0 + r) * width + x0);
      }
  } else {
    uint32_t rowsPerStrip = 0;
    TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rowsPerStrip);
    rowsPerStrip = std::clamp<uint32_t>(rowsPerStrip, 1, layout_.height);
    const tmsize_t size = TIFFStripSize(t);
    const size_t rowBytes = rowBytesOf(width);
    if (size <= 0 || static_cast<size_t>(size) < rowBytes) fail("bad strip size");
    if (static_cast<uint64_t>(size) > allocationCap())
      fail("a strip of " + std::to_string(size) + " bytes is more than StackLens decodes");
    std::vector<unsigned char> buffer(static_cast<size_t>(size));
    const uint32_t strips = (layout_.height + rowsPerStrip - 1) / rowsPerStrip;
    for (uint32_t s = 0; s < strips; ++s) {
      const size_t first = size_t{s} * rowsPerStrip;
      const size_t rows = std::min<size_t>(rowsPerStrip, height - first);
      const tmsize_t got =
          TIFFReadEncodedStrip(t, TIFFComputeStrip(t, static_cast<uint32_t>(first), samplePlane),
                               buffer.data(), static_cast<tmsize_t>(rows * rowBytes));
      if (got < static_cast<tmsize_t>(rows * rowBytes))
        fail("bad or truncated strip " + std::to_string(s));
      for (size_t r = 0; r < rows; ++r)
        convertRow(layout_, info_.dtype, buffer.data() + r * rowBytes, step, sampleInPixel, width,
                   out + (first + r) * width);
    }
  }
  if (!handle->messages.errors.empty()) fail("libtiff reported an error");
  release(std::move(handle));
}

}  // namespace stacklens::io
