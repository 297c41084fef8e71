// libFuzzer target: TIFF input (pages, tiles, codecs, ImageJ/OME text) through openStack and
// readSlice.
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return stacklens::io::fuzz::fuzzOneInput(data, size, ".tif");
}
