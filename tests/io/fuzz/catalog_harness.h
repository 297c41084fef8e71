// What the catalog fuzzer (and the corpus replay test) does with one input: read it as a catalog
// from a file, as the viewer's catalog dialog does, and use every column as the dialog would.
// Any outcome but a table or an IoError (a crash, a sanitizer report, a hang, another exception
// type) is a bug.
#pragma once

#include <cstdint>
#include <string>

#include "fuzz_target.h"
#include "io/catalog.h"

namespace stacklens::io::fuzz {

// Returns true when the input read as a catalog.
inline bool readCatalogEverything(const std::string& path) {
  static const bool capped = (::setenv("STACKLENS_ALLOCATION_CAP_MB", "512", 0), true);
  (void)capped;
  try {
    const CatalogTable table = readCatalog(path);
    for (size_t c = 0; c < table.columns.size(); ++c) {
      numericColumn(table, static_cast<int>(c));
      numericColumn(table, static_cast<int>(c), true);
    }
    guessPositionColumns(table);
    return true;
  } catch (const IoError&) {
    return false;
  }
}

// extension names the temporary file: readCatalog goes by content, except that a gzip stream
// is read as FITS only under a FITS name.
inline int fuzzCatalogInput(const uint8_t* data, size_t size, const char* extension) {
  const std::string path = tempPathFor(extension);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  readCatalogEverything(path);
  std::remove(path.c_str());
  return 0;
}

}  // namespace stacklens::io::fuzz
