// The stack model: what a FITS, TIFF or Zarr stack holds, read one slice at a time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/io_error.h"

namespace stacklens::io {

enum class DType { UInt8, Int8, UInt16, Int16, UInt32, Int32, UInt64, Int64, Float32, Float64 };
const char* dtypeName(DType t);  // "uint8", "int16", "float32", ...

// One header card (FITS) or tag (TIFF) for display and for carrying into written files.
struct HeaderCard {
  std::string key;
  std::string value;
  std::string comment;
};

// One HDU of a FITS file (for the HDU chooser); TIFF files have one entry; Zarr images list
// their multiscale levels (finest first).
struct HduInfo {
  int index = 0;  // 0 = primary
  std::string name;
  std::string type;           // "image", "compressed image", "table", ...
  std::vector<int64_t> axes;  // NAXISn as in the header (x first)
};

struct StackInfo {
  std::string path;
  std::string format;            // "fits", "tiff" or "zarr"
  int64_t z = 1, y = 0, x = 0;   // shape after dropping degenerate axes
  int64_t planes = 1;            // length of a 4th axis (e.g. Stokes); one plane is shown at a time
  int plane = 0;                 // the plane chosen
  DType dtype = DType::Float32;  // as stored in the file
  int hdu = 0;
  std::vector<HduInfo> hdus;
  std::array<double, 3> spacing{1.0, 1.0, 1.0};  // (z, y, x)
  std::array<std::string, 3> units;              // "" when unknown
  bool spacingKnown = false;
  double bscale = 1.0, bzero = 0.0;
  std::optional<int64_t> blank;
  std::vector<HeaderCard> header;  // FITS cards or TIFF tags/ImageJ metadata
  // FITS: the file axes (0-based) shown as x, y, z (-1: none) and a 0-based pixel for every file
  // axis (the chosen plane, 0 for dropped length-1 axes): what a saved image's WCS is rewritten
  // from (io/wcs_subset.h).
  std::array<int, 3> fileAxes{-1, -1, -1};
  std::vector<double> fixedPixel;
  // (z, y, x): the box the storage reads as one piece (Zarr's chunk, its inner chunk when
  // sharded), so that parallel readers can split the stack along its seams (Dask's chunks); 0
  // along an axis where any length reads as well (FITS, TIFF).
  std::array<int64_t, 3> readUnit{0, 0, 0};
};

class Wcs;  // io/wcs.h

struct OpenOptions {
  int hdu = -1;   // -1: the first HDU with image data (Zarr: the level; -1 is level 0)
  int plane = 0;  // index along a 4th axis
};

// A stack opened for reading. readSlice() is safe to call from several threads at once and
// reads only the requested slice from the file.
class StackReader {
 public:
  virtual ~StackReader() = default;
  virtual const StackInfo& info() const = 0;
  // Writes y·x float32 values (scaling applied, BLANK → NaN) to out. Throws IoError.
  virtual void readSlice(int64_t z, float* out) const = 0;
  // Rows [y0, y1) of slice z ((y1 − y0)·x values), as readSlice would give them. The default
  // reads the slice and copies the rows; readers that can read less override it.
  virtual void readRows(int64_t z, int64_t y0, int64_t y1, float* out) const;
  // Columns [x0, x1) of rows [y0, y1) of slice z ((y1 − y0)·(x1 − x0) values). The default reads
  // the rows and copies the columns; readers that can convert less override it.
  virtual void readBox(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1, float* out) const;
  // The world coordinate system, or nullptr when the file has none.
  virtual const Wcs* wcs() const = 0;
};

// Opens a FITS (.fits/.fit/.fts, optionally .gz/.fz) or TIFF (.tif/.tiff) stack by content, or a
// Zarr array or OME-Zarr image folder (io/zarr_reader.h), local or under an http:// or https://
// URL (io/http_store.h). Throws IoError naming the file or URL and the reason.
std::unique_ptr<StackReader> openStack(const std::string& path, const OpenOptions& options = {});

}  // namespace stacklens::io
