// libFuzzer target: catalogs (CSV/TSV, IPAC, VOTable TABLEDATA/BINARY/BINARY2, FITS tables)
// through readCatalog and the position-column guess.
#include "catalog_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return stacklens::io::fuzz::fuzzCatalogInput(data, size, ".fits");
}
