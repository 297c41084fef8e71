// Whether a PLIO_1-compressed tile can be decoded inside its words (issue 17, item 2). cfitsio
// 4.2.0's pl_l2pi takes the line list's length and first instruction from the list's own header
// and reads as far as they say, and an instruction that sets a value reads the word after it,
// all without looking at the tile's length (found by fits_fuzzer: a segmentation fault). This
// walks the list as pl_l2pi does, decoding nothing, with every word read checked. (Internal to
// io.)
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacklens::io {

// words: the tile as cfitsio hands it to the decoder (its elements read as 16-bit integers);
// pixels: the values the tile holds.
bool plioTileFits(const int16_t* words, size_t count, int64_t pixels);

}  // namespace stacklens::io
