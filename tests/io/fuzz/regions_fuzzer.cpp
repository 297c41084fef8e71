// libFuzzer target: DS9 region text through parseDs9Regions, regionsInPixels and ds9RegionText.
#include "regions_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stacklens::io::fuzz::parseRegionsEverything(
      std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
