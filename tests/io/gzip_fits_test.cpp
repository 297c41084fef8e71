// A .fits.gz is inflated into an unnamed temporary file and read like a plain FITS file: beyond
// the allocation cap, with row and strided reads, leaving nothing behind, and with clear errors.
#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <string>
#include <vector>

#include "io/fits_reader.h"
#include "io/read_stop.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "io/strided_read.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

constexpr int64_t kSlices = 4, kRows = 300, kColumns = 410;

std::vector<float> ramp() {
  std::vector<float> data(size_t(kSlices * kRows * kColumns));
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i % 1009) * 0.25f - 3.f;
  return data;
}

// data written as FITS and gzipped by zlib in one member.
std::string writeFitsGz(const test::TempDir& dir, const std::vector<float>& data) {
  writeStack(dir.file("plain.fits"), data.data(), kSlices, kRows, kColumns, {});
  const std::string bytes = test::readBytes(dir.file("plain.fits"));
  const std::string gz = dir.file("stack.fits.gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
  EXPECT_EQ(gzclose(f), Z_OK);
  return gz;
}

TEST(GzipFits, AFileBeyondTheAllocationCapReadsLikeAPlainOne) {
  test::TempDir dir;
  const std::vector<float> data = ramp();  // about 2 MB inflated, twice the cap below
  const std::string gz = writeFitsGz(dir, data);
  const test::ScopedVariable cap("STACKLENS_ALLOCATION_CAP_MB", "1");
  const auto reader = openStack(gz);
  EXPECT_EQ(reader->info().path, gz);
  const auto* fits = dynamic_cast<const FitsReader*>(reader.get());
  ASSERT_NE(fits, nullptr);
  EXPECT_TRUE(fits->readsPlain());
  EXPECT_TRUE(test::sameValues(data, test::readAll(*reader)));

  // Rows 17..95 of slice 2, and every 7th sample of every 7th row of a box in slice 3, against
  // the same picked out of data here.
  std::vector<float> rows(size_t((95 - 17) * kColumns)), expectedRows;
  reader->readRows(2, 17, 95, rows.data());
  for (int64_t y = 17; y < 95; ++y)
    for (int64_t x = 0; x < kColumns; ++x)
      expectedRows.push_back(data[size_t((2 * kRows + y) * kColumns + x)]);
  EXPECT_TRUE(test::sameValues(expectedRows, rows));
  const int64_t y0 = 5, y1 = 290, x0 = 11, x1 = 400, step = 7;
  std::vector<float> strided(size_t(((y1 - y0 + step - 1) / step) * ((x1 - x0 + step - 1) / step)));
  std::vector<float> expectedStrided;
  readStrided(*reader, 3, y0, y1, x0, x1, step, strided.data());
  for (int64_t y = y0; y < y1; y += step)
    for (int64_t x = x0; x < x1; x += step)
      expectedStrided.push_back(data[size_t((3 * kRows + y) * kColumns + x)]);
  EXPECT_TRUE(test::sameValues(expectedStrided, strided));
}

TEST(GzipFits, LeavesNoFileInTheTemporaryFolder) {
  test::TempDir dir, temporaries;
  const std::vector<float> data = ramp();
  const std::string gz = writeFitsGz(dir, data);
  const test::ScopedVariable tmp("TMPDIR", temporaries.path().string());
  {
    const auto reader = openStack(gz);
    EXPECT_TRUE(temporaries.entries().empty()) << "while open";
    EXPECT_TRUE(test::sameValues(data, test::readAll(*reader)));
  }
  EXPECT_TRUE(temporaries.entries().empty()) << "after closing";
}

TEST(GzipFits, AnUnusableTemporaryFolderIsNamed) {
  test::TempDir dir;
  const std::string gz = writeFitsGz(dir, ramp());
  const std::string missing = dir.file("no-such-folder");
  const test::ScopedVariable tmp("TMPDIR", missing);
  try {
    openStack(gz);
    FAIL() << "opened with TMPDIR=" << missing;
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(test::contains(what, gz)) << what;
    EXPECT_TRUE(test::contains(what, missing)) << what;
    EXPECT_TRUE(test::contains(what, "TMPDIR")) << what;
  }
}

TEST(GzipFits, StoppedReadsEndTheInflation) {
  test::TempDir dir;
  const std::string gz = writeFitsGz(dir, ramp());
  const std::atomic<bool> stop{true};
  const ReadStopScope scope(&stop);
  EXPECT_THROW(openStack(gz), ReadsStopped);
}

}  // namespace
}  // namespace stacklens::io
