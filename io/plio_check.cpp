// plioTileFits: IRAF's line-list format (Tody; the FITS tile-compression convention, section on
// PLIO_1), walked in the order cfitsio's pl_l2pi reads it.
#include "io/plio_check.h"

namespace stacklens::io {

bool plioTileFits(const int16_t* words, size_t count, int64_t pixels) {
  // Positions below are 1-based, as in the decoder: position p is words[p - 1].
  const auto n = static_cast<int64_t>(count);
  auto at = [&](int64_t p) { return int64_t(words[p - 1]); };
  if (n < 3) return false;  // the header's third word is read first
  int64_t length = 0, first = 0;
  if (at(3) > 0) {  // the old three-word header
    length = at(3);
    first = 4;
  } else {  // the current header: length in words 4 and 5, its own size in word 2
    if (n < 5) return false;
    length = at(5) * 32768 + at(4);
    first = at(2) + 1;
  }
  if (length <= 0 || pixels <= 0) return true;  // the decoder reads nothing more
  int64_t x = 1;                                // the next pixel the list describes
  bool skipNext = false;
  for (int64_t p = first; p <= length; ++p) {
    if (skipNext) {  // the value word of a set-value instruction, already checked
      skipNext = false;
      continue;
    }
    if (p < 1 || p > n) return false;
    // C's truncating division, as in the decoder: small negative words have opcode 0.
    const int64_t opcode = at(p) / 4096, data = at(p) & 4095;
    switch (opcode) {
      case 0:  // zeros
      case 4:  // a run of the value
      case 5:  // zeros, then the value
        x += data;
        break;
      case 1:  // set the value from this word and the next
        if (p + 1 > n) return false;
        skipNext = true;
        break;
      case 6:  // one pixel after changing the value
      case 7:
        x += 1;
        break;
      default:  // 2, 3 change the value; anything else is skipped
        break;
    }
    if (x > pixels) break;  // every pixel described: the decoder stops here
  }
  return true;
}

}  // namespace stacklens::io
