// Writing stacks: FITS (float32, or int32 labels) and TIFF (float32 or uint16), atomically.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

// How a Zarr output (a folder ending in .zarr, e.g. OUT.ome.zarr) is laid out:
// io/zarr_stack_writer.h.
struct ZarrWriteOptions {
  std::string omeVersion = "0.5";          // "0.5" (Zarr v3) or "0.4" (Zarr v2)
  std::array<int64_t, 3> chunks{0, 0, 0};  // (z, y, x); 0 along an axis: the default
  // 0.5 only: Zarr v3 shards (z, y, x), each a multiple of the chunk (or the shape or more);
  // 0, 0, 0: not sharded, the default (io/zarr_stack_writer.h says why).
  std::array<int64_t, 3> shards{0, 0, 0};
  int levels = 1;  // multiscale levels, each half the last in y and x
  // Partial chunks held in memory while boxes arrive, beyond which they wait in files of the
  // temporary folder instead; 0: the default (io/zarr_array_writer.h).
  int64_t pendingBytes = 0;
};

struct WriteOptions {
  std::vector<HeaderCard> header;    // cards from the input to carry over (WCS, keywords)
  std::vector<std::string> history;  // HISTORY lines recording the processing
  std::array<double, 3> spacing{1.0, 1.0, 1.0};  // (z, y, x)
  std::array<std::string, 3> units;
  bool spacingKnown = false;
  std::string sourcePath;   // the input file: writing over it is refused
  bool tiffUInt16 = false;  // TIFF only: clamp and round to uint16 instead of float32
  bool bigTiff = false;     // TIFF only: BigTIFF even where classic TIFF would hold the stack
  ZarrWriteOptions zarr;    // Zarr only
};

// Options that carry a stack's header, spacing and units into an output made from it, the WCS
// rewritten for the output's axes (the file's x, y, z; z starting at firstSlice: io/wcs_subset.h),
// and refuse to write over it.
WriteOptions carriedFrom(const StackInfo& info, int64_t firstSlice = 0);
// The same for one image made from slices along z (a projection or moment map): the WCS keeps
// the z axis as a degenerate axis at the 0-based slice position zPixel (e.g. the range's middle),
// so the image's pixels keep their sky coordinates and the header its spectral reference.
WriteOptions carriedCollapsed(const StackInfo& info, double zPixel);

// The format an output path asks for by its extension (case-insensitive): .fits/.fit/.fts,
// .tif/.tiff, .zarr (a folder; a trailing '/' is allowed), anything else Unknown.
enum class OutputFormat { Fits, Tiff, Zarr, Unknown };
OutputFormat outputFormat(const std::string& path);

// The format follows the extension: .fits/.fit/.fts → FITS, .tif/.tiff → TIFF, .zarr → an
// OME-Zarr image (io/zarr_stack_writer.h). The file (or folder) is written in a temporary folder
// beside it and renamed into place. Throws IoError.
void writeStack(const std::string& path, const float* data, int64_t z, int64_t y, int64_t x,
                const WriteOptions& options);
void writeLabelStack(const std::string& path, const int32_t* data, int64_t z, int64_t y, int64_t x,
                     const WriteOptions& options);

}  // namespace stacklens::io
