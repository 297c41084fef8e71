// writeStack/writeLabelStack: check the arguments, pick the writer by extension, write atomically.
#include "io/stack_writer.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "io/file_checks.h"
#include "io/wcs_subset.h"
#include "io/writers.h"
#include "io/zarr_stack_writer.h"

namespace stacklens::io {
namespace {

std::string lowerExtension(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();  // a folder named with a '/'
  auto slash = path.find_last_of('/');
  auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

void write(const std::string& path, const void* data, SampleKind kind, int64_t z, int64_t y,
           int64_t x, const WriteOptions& options) {
  if (z < 1 || y < 1 || x < 1)
    throw IoError(path, "cannot write an empty or negative shape (" + std::to_string(z) + ", " +
                            std::to_string(y) + ", " + std::to_string(x) + ")");
  if (y > std::numeric_limits<int32_t>::max() / x ||
      z > std::numeric_limits<int64_t>::max() / (y * x))
    throw IoError(path, "the shape is too large to write");
  if (!data) throw IoError(path, "no data to write");
  const OutputFormat format = outputFormat(path);
  const bool fits = format == OutputFormat::Fits;
  if (format == OutputFormat::Unknown)
    throw IoError(path, "unknown output format '" + lowerExtension(path) +
                            "' (use .fits, .fit, .fts, .tif, .tiff or .zarr)");
  if (format == OutputFormat::Zarr)
    return writeZarrStack(path, data, kind == SampleKind::Int32, z, y, x, options);
  AtomicOutput out(path, options.sourcePath);
  if (fits)
    writeFitsFile(out.tempPath(), path, data, kind, z, y, x, options);
  else
    writeTiffFile(out.tempPath(), path, data, kind, z, y, x, options);
  out.commit();
}

}  // namespace

WriteOptions carriedFrom(const StackInfo& info, int64_t firstSlice) {
  WriteOptions o;
  o.header = info.format == "fits" && info.fileAxes[0] >= 0
                 ? headerForSubset(info.header, {info.fileAxes, info.fixedPixel, firstSlice})
                 : info.header;
  o.spacing = info.spacing;
  o.units = info.units;
  o.spacingKnown = info.spacingKnown;
  o.sourcePath = info.path;
  return o;
}

WriteOptions carriedCollapsed(const StackInfo& info, double zPixel) {
  WriteOptions o = carriedFrom(info);
  if (info.format == "fits" && info.fileAxes[0] >= 0) {
    AxisSubset subset{{info.fileAxes[0], info.fileAxes[1], -1}, info.fixedPixel, 0};
    const int z = info.fileAxes[2];
    if (z >= 0) {
      if (subset.fixedPixel.size() <= size_t(z)) subset.fixedPixel.resize(size_t(z) + 1, 0.0);
      subset.fixedPixel[size_t(z)] = zPixel;
    }
    o.header = headerForSubset(info.header, subset);
  }
  return o;
}

OutputFormat outputFormat(const std::string& path) {
  const std::string ext = lowerExtension(path);
  if (ext == ".fits" || ext == ".fit" || ext == ".fts") return OutputFormat::Fits;
  if (ext == ".tif" || ext == ".tiff") return OutputFormat::Tiff;
  if (ext == ".zarr") return OutputFormat::Zarr;
  return OutputFormat::Unknown;
}

bool isMicron(const std::string& unit) {
  return unit == "micron" || unit == "um" || unit == "\xc2\xb5m" || unit == "\xce\xbcm" ||
         unit == "microns";
}

void writeStack(const std::string& path, const float* data, int64_t z, int64_t y, int64_t x,
                const WriteOptions& options) {
  write(path, data, SampleKind::Float32, z, y, x, options);
}

void writeLabelStack(const std::string& path, const int32_t* data, int64_t z, int64_t y, int64_t x,
                     const WriteOptions& options) {
  write(path, data, SampleKind::Int32, z, y, x, options);
}

}  // namespace stacklens::io
