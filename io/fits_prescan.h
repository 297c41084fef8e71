// Our own pass over a FITS file's headers before cfitsio parses any of them (issue 17): cfitsio
// 4.2.0 crashes (SIGFPE, buffer overflows) on damaged tile-compressed image headers while it
// counts or moves through HDUs. Each HDU's header blocks are read here, its data size worked
// out, and a tile-compressed image's parameters checked; an HDU that fails is rejected with the
// reason. (Internal to io.)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stacklens::io {

struct PrescannedHdu {
  int64_t headerStart = 0;  // byte offset of the first header block
  int64_t headerBytes = 0;  // whole 2880-byte blocks up to and including END
  int64_t dataBytes = 0;    // the data unit, padded to whole blocks
  std::string rejection;    // "" when cfitsio may parse it
  // The pass could not tell where this HDU's data ends (a header without END, or one whose
  // structure it could not read): what follows in the file was not checked.
  bool endsScan = false;
};

// readAt(offset, bytes) returns up to `bytes` bytes of the file from offset (fewer at its end).
// Scans every HDU up to the end of the file, or to the first whose header or data cannot be
// located (that one is rejected and the scan stops).
std::vector<PrescannedHdu> prescanFits(const std::function<std::string(int64_t, size_t)>& readAt,
                                       int64_t fileSize);

// A header of `headerBytes` that cfitsio reads harmlessly in place of a rejected one: an 8-bit
// image extension whose data unit has dataBytes (so every later HDU keeps its offset).
std::string neutralHeader(int64_t headerBytes, int64_t dataBytes);

}  // namespace stacklens::io
