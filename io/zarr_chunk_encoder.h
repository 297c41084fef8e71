// Encoding a Zarr chunk for writing: blosc (libblosc) with zstd inside and byte shuffle, the
// compressor zarr-python writes by default apart from the inner codec, readable by every Zarr
// reader that has blosc. The decoding side is io/zarr_codecs.h.
#pragma once

#include <cstddef>
#include <string>

#include "io/zarr_codecs.h"

namespace stacklens::io {

// What the metadata says about the encoding (the v2 "compressor" and the v3 blosc codec).
struct ZarrBloscSettings {
  static constexpr const char* cname = "zstd";
  static constexpr int clevel = 5;   // zstd's middle: most of its ratio on float data, still fast
  static constexpr int shuffle = 1;  // byte shuffle (BLOSC_SHUFFLE; v3 names it "shuffle")
};

// bytes of data (elements of typesize bytes, already in stored byte order) compressed as one
// blosc frame. Throws IoError(where, reason) when blosc fails.
ZarrBytes encodeBloscChunk(const void* data, size_t bytes, int typesize, const std::string& where);

}  // namespace stacklens::io
