// Encoding one Zarr v3 shard (the sharding_indexed codec, index at the end): the shard's inner
// chunks, each blosc compressed (io/zarr_chunk_encoder.h), then the index of (offset, nbytes)
// pairs as little-endian uint64 in C order of the inner chunk grid, then the index's crc32c.
// The decoding side is io/zarr_chunk_source.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "io/zarr_codecs.h"

namespace stacklens::io {

// An index entry of an inner chunk that is not stored (it reads as the fill value).
constexpr uint64_t kZarrMissingInnerChunk = ~uint64_t(0);

// The samples that count as the array's fill value: NaN (any payload, as zarr-python's
// equal_nan) for float32 arrays whose fill is NaN, else the fill's exact bits.
struct ZarrFillSample {
  uint32_t bits = 0;
  bool anyNaN = false;
  bool matches(uint32_t v) const {
    return anyNaN ? (v & 0x7F800000u) == 0x7F800000u && (v & 0x007FFFFFu) != 0 : v == bits;
  }
};

// values: one whole shard of shard[0] × shard[1] × shard[2] 4-byte samples in C order (those
// beyond the array's edge hold the fill value), inner dividing shard along each axis. Inner
// chunks all of fill are not stored (both index fields 2^64−1); when none is stored the result is
// empty and the shard is not written at all. Throws IoError(where, reason).
ZarrBytes encodeZarrShard(const uint32_t* values, const std::array<int64_t, 3>& shard,
                          const std::array<int64_t, 3>& inner, ZarrFillSample fill,
                          const std::string& where);

}  // namespace stacklens::io
