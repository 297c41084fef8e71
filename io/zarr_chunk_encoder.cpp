// blosc compression of one chunk, on the calling thread (chunks are encoded by several threads
// at once: the blosc context functions share no global state).
#include "io/zarr_chunk_encoder.h"

#include <blosc.h>

#include "io/io_error.h"

namespace stacklens::io {

ZarrBytes encodeBloscChunk(const void* data, size_t bytes, int typesize, const std::string& where) {
  if (bytes > size_t(BLOSC_MAX_BUFFERSIZE))
    throw IoError(where, "a chunk of " + std::to_string(bytes >> 20) +
                             " MiB is larger than blosc compresses at once (2 GiB)");
  ZarrBytes out(bytes + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(ZarrBloscSettings::clevel, ZarrBloscSettings::shuffle,
                                   static_cast<size_t>(typesize), bytes, data, out.data(),
                                   out.size(), ZarrBloscSettings::cname, 0, 1);
  if (n <= 0) throw IoError(where, "blosc compression failed (" + std::to_string(n) + ")");
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace stacklens::io
