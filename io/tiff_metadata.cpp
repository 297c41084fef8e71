// ImageJ and OME-TIFF descriptions read for the stack's order and spacing.
#include "io/tiff_metadata.h"

#include <tiffio.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

namespace stacklens::io {
namespace {

constexpr size_t kMaxCardText = 300;

// Counts from metadata are clamped so that products of three of them cannot overflow; anything
// above the clamp is far beyond any page count anyway.
constexpr long long kMaxCount = 1 << 20;

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
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

// A count of at least 1 (1 when absent or unreadable), at most kMaxCount.
long long clampedCount(const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  return end == text.c_str() || v < 1 ? 1 : std::min(v, kMaxCount);
}

long long parseCount(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 1 : clampedCount(it->second);
}

bool isTagEnd(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '>' || c == '/';
}

// The value of attribute name in the first element called element of an XML text (enough for
// OME's Pixels element; not a general XML parser).
std::string xmlAttribute(const std::string& xml, const std::string& element,
                         const std::string& name) {
  size_t start = 0;
  while ((start = xml.find("<" + element, start)) != std::string::npos) {
    const size_t after = start + 1 + element.size();
    if (after < xml.size() && isTagEnd(xml[after])) break;
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

// ImageJ's spacing: "spacing"/"unit" plus the resolution tags with ResolutionUnit none. A
// spacing without a unit (ImageJ then says "pixel") is still the writer's spacing.
void readImagejSpacing(const std::map<std::string, std::string>& meta,
                       const TiffResolution& resolution, StackInfo& info) {
  auto unit = meta.find("unit");
  if (!resolution.known || resolution.unit != RESUNIT_NONE ||
      !(unit != meta.end() || meta.count("spacing") || resolution.x != 1 || resolution.y != 1))
    return;
  info.spacingKnown = true;
  info.spacing = {1.0, 1.0 / resolution.y, 1.0 / resolution.x};
  double spacing = 0;
  auto zs = meta.find("spacing");
  if (zs != meta.end() && parsePositive(zs->second, spacing)) info.spacing[0] = spacing;
  const std::string u = unit == meta.end() ? "" : normaliseUnit(unit->second);
  info.units = {u, u, u};
}

// The strides of C, Z and T in a valid DimensionOrder (e.g. "XYCZT": C fastest).
TiffDimensions omeOrder(const std::string& order, const long long sizes[3]) {
  TiffDimensions dims;
  long long stride = 1;
  for (size_t k = 2; k < 5; ++k) {
    const int dim = order[k] == 'C' ? 0 : order[k] == 'Z' ? 1 : 2;
    dims.sizes[dim] = sizes[dim];
    dims.strides[dim] = stride;
    stride *= sizes[dim];
  }
  return dims;
}

// OME's PhysicalSizeX/Y/Z, in µm unless a unit is given.
void readOmeSpacing(const std::string& description, StackInfo& info) {
  const auto pixels = [&](const char* name) { return xmlAttribute(description, "Pixels", name); };
  double sx = 0, sy = 0, sz = 0;
  const bool hasX = parsePositive(pixels("PhysicalSizeX"), sx);
  const bool hasY = parsePositive(pixels("PhysicalSizeY"), sy);
  if (hasX != hasY) {  // writers often give one size for square pixels
    (hasX ? sy : sx) = hasX ? sx : sy;
    info.header.push_back(
        {"note",
         std::string("OME gives no PhysicalSize") + (hasX ? "Y" : "X") + "; square pixels assumed",
         ""});
  }
  if (!hasX && !hasY) return;
  info.spacingKnown = true;
  info.spacing = {1.0, sy, sx};
  if (parsePositive(pixels("PhysicalSizeZ"), sz)) info.spacing[0] = sz;
  const char* unitNames[3] = {"PhysicalSizeZUnit", "PhysicalSizeYUnit", "PhysicalSizeXUnit"};
  for (size_t i = 0; i < 3; ++i) {
    const std::string u = pixels(unitNames[i]);
    info.units[i] = normaliseUnit(u.empty() ? "micron" : u);  // OME's default unit is µm
  }
}

}  // namespace

std::string clipCardText(const std::string& s) {
  return s.size() <= kMaxCardText ? s : s.substr(0, kMaxCardText) + "…";
}

TiffDimensions readImagejMetadata(const std::string& description, long long pageCount,
                                  const TiffResolution& resolution, StackInfo& info) {
  TiffDimensions dims;
  dims.sizes[1] = pageCount;
  const auto meta = parseImagej(description);
  for (const auto& [key, value] : meta)
    if (key != "ImageJ") info.header.push_back({"imagej:" + key, clipCardText(value), ""});
  const long long c = parseCount(meta, "channels"), z = parseCount(meta, "slices"),
                  t = parseCount(meta, "frames");
  if (c * z * t > 1 && c * z * t <= pageCount) {
    // ImageJ stores hyperstacks channel-fastest: C, then Z, then T.
    dims.sizes[0] = c, dims.sizes[1] = z, dims.sizes[2] = t;
    dims.strides[0] = 1, dims.strides[1] = c, dims.strides[2] = c * z;
  } else if (c * z * t > pageCount) {
    throw IoError(info.path, "the ImageJ metadata describes " + std::to_string(c * z * t) +
                                 " images but the file has " + std::to_string(pageCount) +
                                 " pages (single-page ImageJ files over 4 GB are not supported)");
  }
  readImagejSpacing(meta, resolution, info);
  return dims;
}

TiffDimensions readOmeMetadata(const std::string& description, long long pageCount,
                               StackInfo& info) {
  TiffDimensions dims;
  dims.sizes[1] = pageCount;
  const std::string order = xmlAttribute(description, "Pixels", "DimensionOrder");
  long long sizes[3] = {1, 1, 1};
  const char* names[3] = {"SizeC", "SizeZ", "SizeT"};
  for (int i = 0; i < 3; ++i) {
    sizes[i] = clampedCount(xmlAttribute(description, "Pixels", names[i]));
    info.header.push_back({std::string("ome:") + names[i], std::to_string(sizes[i]), ""});
  }
  const bool validOrder =
      order.size() == 5 && order.rfind("XY", 0) == 0 && order.find('C') != std::string::npos &&
      order.find('Z') != std::string::npos && order.find('T') != std::string::npos;
  if (validOrder && sizes[0] * sizes[1] * sizes[2] <= pageCount) {
    dims = omeOrder(order, sizes);
    info.header.push_back({"ome:DimensionOrder", order, ""});
  }
  readOmeSpacing(description, info);
  return dims;
}

void readResolutionSpacing(const TiffResolution& resolution, StackInfo& info) {
  if (!resolution.known || resolution.unit != RESUNIT_CENTIMETER) return;
  info.spacingKnown = true;
  info.spacing = {1.0, 1e4 / resolution.y, 1e4 / resolution.x};
  info.units = {"micron", "micron", "micron"};
}

}  // namespace stacklens::io
