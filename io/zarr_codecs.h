// Decoding a stored Zarr chunk's bytes: blosc (libblosc), zstd (libzstd), gzip and zlib (zlib),
// and the v3 crc32c checksum, each bounded by the size the chunk must decode to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/zarr_metadata.h"

namespace stacklens::io {

using ZarrBytes = std::vector<unsigned char>;

// Undoes the chunk's compressions (last applied first) on the n stored bytes, checks that the
// result holds exactly coding.decodedBytes and writes it to out, which holds that many. Throws
// IoError(where, reason) for damaged data, naming the codec.
void decodeZarrChunk(const unsigned char* stored, size_t n, const ZarrChunkCoding& coding,
                     const std::string& where, unsigned char* out);

// CRC-32C (Castagnoli), as the Zarr v3 crc32c codec appends it. Written here because Debian 12
// has no packaged C library for it that is worth a dependency for 20 lines.
uint32_t crc32c(const unsigned char* data, size_t n);

// Checks and strips a trailing little-endian crc32c. Throws IoError(where, reason).
void stripCrc32c(ZarrBytes& bytes, const std::string& where);

}  // namespace stacklens::io
