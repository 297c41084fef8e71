// libFuzzer target: FITS input (plain, tile-compressed, gzip) through openStack and readSlice.
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return stacklens::io::fuzz::fuzzOneInput(data, size, ".fits");
}
