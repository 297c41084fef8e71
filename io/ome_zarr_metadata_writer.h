// The metadata of the OME-Zarr images StackLens writes: a group holding one multiscale image of
// axes z, y, x (NGFF 0.4 in Zarr v2 .zgroup/.zattrs/.zarray, or NGFF 0.5 in Zarr v3 zarr.json
// with the image under attributes "ome"), one array per level named "0", "1", ...
//
// Written by hand with nlohmann-json: Debian has no C or C++ Zarr library, and the few fields an
// image of this one layout needs are simpler to write than a dependency is to carry.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "io/stack_writer.h"
#include "io/zarr_json.h"
#include "io/zarr_metadata.h"

namespace stacklens::io {

struct OmeZarrLayout {
  std::string omeVersion;                      // "0.4" or "0.5"
  std::vector<std::array<int64_t, 3>> shapes;  // per level, (z, y, x)
  std::array<int64_t, 3> chunks{};             // level 0's; each level's clipped to its shape
  bool int32 = false;                          // int32 labels instead of float32 values
  std::string name;                            // the image's name (the output's file name)

  int zarrFormat() const { return omeVersion == "0.4" ? 2 : 3; }
  std::array<int64_t, 3> levelChunks(size_t level) const;
  // What zarrChunkKey (io/zarr_chunk_key.h) needs to name a level's chunks: v2 "z.y.x",
  // v3 "c/z/y/x".
  ZarrArrayMeta keyMeta() const;
};

// The array metadata of one level (.zarray for v2, zarr.json for v3): C order, little-endian,
// blosc (io/zarr_chunk_encoder.h), fill value NaN (0 for labels) so that a chunk never written
// reads as "no value" (io/zarr_dtype.h reads "NaN" back).
Json zarrArrayMetadata(const OmeZarrLayout& layout, size_t level);
// The group's attributes: 0.4 the .zattrs object {"multiscales", "stacklens"}; 0.5 the zarr.json
// "attributes" {"ome": {"version", "multiscales"}, "stacklens"}. "stacklens" holds the HISTORY
// lines, the writing version and the input's header cards (which describe level 0).
Json omeImageAttributes(const OmeZarrLayout& layout, const WriteOptions& options);
// Writes the group's and every level's metadata into folder; errors name target.
void writeOmeZarrMetadata(const std::string& folder, const std::string& target,
                          const OmeZarrLayout& layout, const WriteOptions& options);

// A StackLens unit ("micron", "um", "nm", ...) as the OME (UDUNITS-2) space unit name, "" when it
// is none of them (the axis then has no unit; the original goes into the "stacklens" key).
std::string omeSpaceUnit(const std::string& unit);

}  // namespace stacklens::io
