// FITS files that once crashed cfitsio 4.2.0 while it moved through their HDUs (the inputs the
// FITS fuzzer found, kept in data/corpus_regressions/) read as catalogs: each gives a table or an
// IoError naming the file, as the stack reader does, never a crash.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/catalog.h"

using namespace stacklens::io;

TEST(CatalogDamagedFits, KeptFitsRegressionsReadOrFailWithIoError) {
  const std::filesystem::path folder = std::string(STACKLENS_TEST_DATA) + "/corpus_regressions";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("fits_fuzzer_") && !name.starts_with("hostile_fits")) continue;
    SCOPED_TRACE(name);
    const std::string path = entry.path().string();
    try {
      readCatalog(path);
    } catch (const IoError& e) {
      EXPECT_EQ(e.path(), path);
    }
    ++files;
  }
  EXPECT_GT(files, 20);
}
