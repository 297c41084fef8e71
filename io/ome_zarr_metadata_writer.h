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
  // Zarr v3 only: level 0's shards (sharding_indexed, the chunks inside them), each a multiple
  // of chunks or at least the shape; 0: not sharded.
  std::array<int64_t, 3> shards{};
  bool int32 = false;  // int32 labels instead of float32 values
  std::string name;    // the image's name (the output's file name)

  int zarrFormat() const { return omeVersion == "0.4" ? 2 : 3; }
  std::array<int64_t, 3> levelChunks(size_t level) const;
  bool sharded() const { return shards[0] > 0; }
  // A level's shards: level 0's, clipped to the level's whole chunks (a multiple of them still).
  std::array<int64_t, 3> levelShards(size_t level) const;
  // What one stored object (file) of a level holds: its shard when sharded, else its chunk.
  std::array<int64_t, 3> levelObjects(size_t level) const {
    return sharded() ? levelShards(level) : levelChunks(level);
  }
  // What zarrChunkKey (io/zarr_chunk_key.h) needs to name a level's chunks: v2 "z.y.x",
  // v3 "c/z/y/x".
  ZarrArrayMeta keyMeta() const;
};

// The array metadata of one level (.zarray for v2, zarr.json for v3): C order, little-endian,
// blosc (io/zarr_chunk_encoder.h), fill value NaN (0 for labels) so that a chunk never written
// reads as "no value" (io/zarr_dtype.h reads "NaN" back). A sharded v3 level has the shards as
// its chunk grid and one sharding_indexed codec holding the chunks' codecs, its index little-
// endian with a crc32c at the shard's end (io/zarr_shard_encoder.h).
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
