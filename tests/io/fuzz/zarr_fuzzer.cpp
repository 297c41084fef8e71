// libFuzzer target: Zarr v2/v3 metadata, OME-Zarr group attributes and chunk bytes (every codec,
// shards and their indexes) through openStack and readSlice.
#include "fuzz_target.h"
#include "zarr_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string root = stacklens::io::fuzz::writeZarrInput(data, size);
  stacklens::io::fuzz::openAndReadEverything(root);
  stacklens::io::fuzz::removeZarrInput(root);
  return 0;
}
