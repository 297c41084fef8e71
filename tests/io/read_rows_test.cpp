// StackReader::readRows and readBox: rows (and a column range of them) of a slice as readSlice
// gives them, from uncompressed FITS (only the rows' bytes, scaled integers included), TIFF (the
// default: the slice, then its rows), and boxes outside the slice refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "io/stack.h"
#include "io/stack_writer.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

void expectRowsMatchTheSlice(const StackReader& reader, int64_t z, int64_t y0, int64_t y1) {
  const StackInfo& info = reader.info();
  std::vector<float> slice(static_cast<size_t>(info.y * info.x));
  reader.readSlice(z, slice.data());
  std::vector<float> rows(static_cast<size_t>((y1 - y0) * info.x));
  reader.readRows(z, y0, y1, rows.data());
  EXPECT_TRUE(test::sameValues(
      std::vector<float>(slice.begin() + y0 * info.x, slice.begin() + y1 * info.x), rows))
      << info.path << " slice " << z << " rows " << y0 << ".." << y1;
}

void expectBoxMatchesTheSlice(const StackReader& reader, int64_t z, int64_t y0, int64_t y1,
                              int64_t x0, int64_t x1) {
  const StackInfo& info = reader.info();
  std::vector<float> slice(static_cast<size_t>(info.y * info.x));
  reader.readSlice(z, slice.data());
  std::vector<float> want;
  for (int64_t y = y0; y < y1; ++y)
    want.insert(want.end(), slice.begin() + y * info.x + x0, slice.begin() + y * info.x + x1);
  std::vector<float> box(want.size());
  reader.readBox(z, y0, y1, x0, x1, box.data());
  EXPECT_TRUE(test::sameValues(want, box)) << info.path << " slice " << z << " rows " << y0 << ".."
                                           << y1 << " columns " << x0 << ".." << x1;
}

TEST(ReadRows, FitsAndTiffBoxesAreTheSlicesColumns) {
  test::TempDir dir;
  std::vector<float> data(3 * 11 * 7);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i) * 0.25f - 4.f;
  for (const char* name : {"b.fits", "b.tif"}) {
    writeStack(dir.file(name), data.data(), 3, 11, 7, {});
    auto reader = openStack(dir.file(name));
    expectBoxMatchesTheSlice(*reader, 1, 2, 9, 3, 6);
    expectBoxMatchesTheSlice(*reader, 2, 0, 11, 0, 7);   // the whole slice
    expectBoxMatchesTheSlice(*reader, 0, 10, 11, 6, 7);  // the last sample
    expectBoxMatchesTheSlice(*reader, 0, 4, 8, 0, 1);    // the first column
    std::vector<float> out(7 * 12);
    EXPECT_THROW(reader->readBox(0, 0, 2, 3, 8, out.data()), IoError);
    EXPECT_THROW(reader->readBox(0, 0, 2, 3, 3, out.data()), IoError);
    EXPECT_THROW(reader->readBox(3, 0, 2, 0, 2, out.data()), IoError);
  }
}

TEST(ReadRows, FitsAndTiffRowsAreTheSlicesRows) {
  test::TempDir dir;
  std::vector<float> data(3 * 11 * 7);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i) * 0.25f - 4.f;
  for (const char* name : {"r.fits", "r.tif"}) {
    writeStack(dir.file(name), data.data(), 3, 11, 7, {});
    auto reader = openStack(dir.file(name));
    expectRowsMatchTheSlice(*reader, 1, 2, 9);
    expectRowsMatchTheSlice(*reader, 2, 0, 11);
    expectRowsMatchTheSlice(*reader, 0, 10, 11);
    std::vector<float> out(7 * 12);
    EXPECT_THROW(reader->readRows(0, 5, 12, out.data()), IoError);
    EXPECT_THROW(reader->readRows(0, 4, 4, out.data()), IoError);
  }
}

TEST(ReadRows, ScaledIntegerFitsRows) {
  const std::string horseHead = std::string(STACKLENS_SHARED_DATA) + "/HorseHead.fits";
  if (!std::filesystem::exists(horseHead)) GTEST_SKIP() << horseHead << " not present";
  auto reader = openStack(horseHead);  // BITPIX 16
  expectRowsMatchTheSlice(*reader, 0, 100, 357);
  expectBoxMatchesTheSlice(*reader, 0, 100, 357, 17, 290);
}

}  // namespace
}  // namespace stacklens::io
