// A Zarr array's metadata (v2 .zarray or v3 zarr.json), parsed and checked before any chunk is
// read: shape, chunk grid, data type, fill value, chunk keys and how a stored chunk decodes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/stack.h"
#include "io/zarr_store.h"

namespace stacklens::io {

// The element types the Zarr specs list, complex excepted (refused at open).
enum class ZarrScalar { Bool, Int, UInt, Float };

struct ZarrDataType {
  ZarrScalar kind = ZarrScalar::Float;
  int bytes = 4;            // 1, 2, 4 or 8
  bool bigEndian = false;   // as stored (v2 '>' or v3 bytes codec "big")
  std::string name;         // as the metadata spells it, for messages and the header
  DType stackType() const;  // the nearest StackInfo type (bool → uint8, float16 → float32)
};

// A bytes-to-bytes step of a chunk's encoding (v2 compressor, v3 bytes codecs).
enum class ZarrCompression { Blosc, Zstd, Gzip, Zlib, Crc32c };

// How one stored chunk's bytes become its values.
struct ZarrChunkCoding {
  std::vector<int64_t> shape;  // the stored chunk's shape (the inner chunk when sharded)
  // Stored axis j is chunk axis order[j] (identity: C order; reversed: v2 "F"; v3 transpose).
  std::vector<int> order;
  std::vector<ZarrCompression> compressions;  // in encoding order; decoded last to first
  int64_t decodedBytes = 0;                   // product of shape × element size
};

// The v3 sharding_indexed codec: each stored object (shard) holds a grid of inner chunks and an
// index of (offset, length) pairs at its start or end.
struct ZarrSharding {
  std::vector<int64_t> chunksPerShard;  // inner chunks along each axis of one shard
  int64_t innerCount = 0;               // their product
  bool indexAtEnd = true;
  bool indexChecksum = false;  // a crc32c codec in index_codecs
  int64_t indexBytes = 0;      // 16 × innerCount (+ 4 with the checksum)
};

struct ZarrArrayMeta {
  std::string folder;           // the array's folder
  std::string metadataFile;     // .zarray or zarr.json, for messages
  int zarrFormat = 2;           // 2 or 3
  std::vector<int64_t> shape;   // slowest axis first, as NumPy
  std::vector<int64_t> chunks;  // the chunk grid (the shard shape when sharded)
  ZarrDataType dtype;
  double fillValue = 0.0;  // a missing chunk reads as this
  // Chunk keys: v2 "0.1.2" or "0/1/2"; v3 default encoding "c/0/1/2" (or with '.'), v3 "v2".
  std::string keySeparator = ".";
  bool keyPrefixC = false;
  ZarrChunkCoding coding;
  std::optional<ZarrSharding> sharding;
  std::vector<std::string> dimensionNames;  // v3 "dimension_names" ("" for unnamed), if given
  std::vector<HeaderCard> describe;         // what the metadata says, for the header viewer
};

// Reads and checks the array metadata in folder (a path or URL, read through store; v3 zarr.json
// with node_type "array", else v2 .zarray). Throws IoError naming the metadata file and the reason:
// unsupported data types or codecs, and shapes or chunk grids that cannot be real (negative or zero
// sizes, overflowing products, chunks whose decoded size exceeds the allocation cap).
ZarrArrayMeta readZarrArrayMeta(const ZarrStore& store, const std::string& folder);

}  // namespace stacklens::io
