// riceTileFits: the decoder's walk over the bit stream (cfitsio's ricecomp.c, the format of
// Pence, White & Seaman 2010), every byte read checked against the tile's length.
#include "io/rice_check.h"

#include <algorithm>

namespace stacklens::io {
namespace {

int bitLength(unsigned v) {  // 1 … 8 for a byte 1 … 255
  int n = 0;
  for (; v; v >>= 1) ++n;
  return n;
}

}  // namespace

bool riceTileFits(const unsigned char* bytes, size_t length, int64_t pixels, int bytesPerPixel,
                  int blockSize) {
  int fsBits = 0, fsMax = 0;
  switch (bytesPerPixel) {
    case 1:
      fsBits = 3, fsMax = 6;
      break;
    case 2:
      fsBits = 4, fsMax = 14;
      break;
    case 4:
      fsBits = 5, fsMax = 25;
      break;
    default:
      return false;
  }
  if (blockSize < 1 || pixels < 0) return false;
  const int bBits = 1 << fsBits;
  size_t at = static_cast<size_t>(bytesPerPixel);  // after the first value, stored whole
  auto next = [&](unsigned& out) {
    if (at >= length) return false;
    out = bytes[at++];
    return true;
  };
  unsigned b = 0, x = 0;
  if (!next(b)) return pixels == 0;
  int nbits = 8;
  for (int64_t i = 0; i < pixels;) {
    nbits -= fsBits;
    while (nbits < 0) {
      if (!next(x)) return false;
      b = (b << 8) | x;
      nbits += 8;
    }
    const int fs = static_cast<int>(b >> nbits) - 1;
    b &= (1u << nbits) - 1;
    const int64_t end = std::min<int64_t>(i + blockSize, pixels);
    if (fs < 0) {  // a block of zero differences
      i = end;
    } else if (fs == fsMax) {  // raw values, bBits each
      for (; i < end; ++i) {
        int k = bBits - nbits;
        for (k -= 8; k >= 0; k -= 8)
          if (!next(b)) return false;
        if (nbits > 0) {
          if (!next(x)) return false;
          b = x & ((1u << nbits) - 1);
        } else {
          b = 0;
        }
      }
    } else if (fs > fsMax) {
      return false;  // no encoder writes it
    } else {
      for (; i < end; ++i) {
        while (b == 0) {  // the run of zeros cfitsio counts unchecked
          if (!next(b)) return false;
          nbits += 8;
        }
        const int nzero = nbits - bitLength(b);
        nbits -= nzero + 1;
        b ^= 1u << nbits;
        nbits -= fs;
        while (nbits < 0) {
          if (!next(x)) return false;
          b = (b << 8) | x;
          nbits += 8;
        }
        b &= (1u << nbits) - 1;
      }
    }
  }
  return true;
}

}  // namespace stacklens::io
