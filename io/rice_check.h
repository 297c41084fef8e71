// Whether a RICE-compressed tile can be decoded inside its bytes (issue 17, item 2). cfitsio
// 4.2.0's fits_rdecomp_* count a run of zero bits without checking the end of the buffer, so a
// damaged tile makes them read far past it (found by fits_fuzzer: segmentation faults). This
// walks the same bit stream, decoding nothing, with the bound checked at every byte. (Internal
// to io.)
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacklens::io {

// bytes: the tile as stored; pixels: the values it holds; bytesPerPixel 1, 2 or 4 (BYTEPIX);
// blockSize: pixels per block (BLOCKSIZE, 32 by default).
bool riceTileFits(const unsigned char* bytes, size_t length, int64_t pixels, int bytesPerPixel,
                  int blockSize);

}  // namespace stacklens::io
