// PLIO_1 tile-compressed images (IRAF line lists, used for masks): valid files, written here by
// cfitsio, open and read back exactly; a tile whose line list claims more words than it has, or
// starts before its first word, is refused before cfitsio's decoder reads past it (issue 17).
#include <fitsio.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/io_error.h"
#include "io/plio_check.h"
#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

constexpr long kX = 40, kY = 24, kZ = 3;

// A mask-like int16 stack: runs of labels with gaps, different in every slice.
std::vector<short> maskPixels() {
  std::vector<short> v(size_t(kX * kY * kZ));
  for (long z = 0; z < kZ; ++z)
    for (long y = 0; y < kY; ++y)
      for (long x = 0; x < kX; ++x)
        v[size_t((z * kY + y) * kX + x)] =
            short(((x + 3 * y + 7 * z) / 5) % 4 == 0 ? 0 : 1 + (x / 9 + y / 4 + z) % 300);
  return v;
}

void writePlio(const std::string& path, const std::vector<short>& pixels) {
  int st = 0;
  fitsfile* f = nullptr;
  fits_create_file(&f, path.c_str(), &st);
  fits_set_compression_type(f, PLIO_1, &st);
  long tile[3] = {kX, 6, 1};
  fits_set_tile_dim(f, 3, tile, &st);
  long axes[3] = {kX, kY, kZ};
  fits_create_img(f, SHORT_IMG, 3, axes, &st);
  fits_write_img(f, TSHORT, 1, LONGLONG(pixels.size()), const_cast<short*>(pixels.data()), &st);
  fits_close_file(f, &st);
  ASSERT_EQ(st, 0) << "cfitsio could not write the PLIO file";
}

// Where tile `row`'s words lie in the file, and how wide each stored element is.
struct TileBytes {
  long long offset = 0, words = 0;
  int width = 0;
};
TileBytes tileBytes(const std::string& path, long row) {
  int st = 0;
  fitsfile* f = nullptr;
  fits_open_file(&f, path.c_str(), READONLY, &st);
  int type = 0;
  fits_movabs_hdu(f, 2, &type, &st);
  LONGLONG headStart = 0, dataStart = 0, dataEnd = 0;
  fits_get_hduaddrll(f, &headStart, &dataStart, &dataEnd, &st);
  LONGLONG width = 0, rows = 0, theap = 0, length = 0, offset = 0;
  fits_read_key(f, TLONGLONG, "NAXIS1", &width, nullptr, &st);
  fits_read_key(f, TLONGLONG, "NAXIS2", &rows, nullptr, &st);
  int noHeap = 0;  // THEAP is optional: the heap then follows the table
  if (fits_read_key(f, TLONGLONG, "THEAP", &theap, nullptr, &noHeap) != 0) theap = width * rows;
  char tform[FLEN_VALUE] = {};
  fits_read_key_str(f, "TFORM1", tform, nullptr, &st);
  fits_read_descriptll(f, 1, row, &length, &offset, &st);
  fits_close_file(f, &st);
  EXPECT_EQ(st, 0);
  const std::string t = tform;
  return {dataStart + theap + offset, length, t.find("PI") != std::string::npos ? 2 : 1};
}

// Stores the value v as tile word `index` (0-based) of the file's bytes.
void setWord(std::string& bytes, const TileBytes& t, long index, int v) {
  const size_t at = size_t(t.offset + index * t.width);
  if (t.width == 2) {
    bytes[at] = char((v >> 8) & 0xff);
    bytes[at + 1] = char(v & 0xff);
  } else {
    bytes[at] = char(v & 0xff);
  }
}

TEST(PlioTiles, ValidFilesReadBackExactly) {
  test::TempDir dir;
  const std::vector<short> pixels = maskPixels();
  writePlio(dir.file("mask.fits.fz"), pixels);
  auto reader = openStack(dir.file("mask.fits.fz"));
  ASSERT_EQ(reader->info().z, kZ);
  std::vector<float> want(pixels.begin(), pixels.end());
  EXPECT_TRUE(test::sameValues(want, test::readAll(*reader)));
}

TEST(PlioTiles, ALineListBeyondItsWordsIsRefused) {
  test::TempDir dir;
  writePlio(dir.file("mask.fits.fz"), maskPixels());
  const std::string good = test::readBytes(dir.file("mask.fits.fz"));
  const TileBytes t = tileBytes(dir.file("mask.fits.fz"), 2);
  ASSERT_GE(t.words, 7) << "a line list has a header of 7 words";
  struct Damage {
    const char* what;
    long word;
    int value;
    bool noPixels;  // the instructions only change the value, so the decoder reads to the end
  };
  // cfitsio writes the current header (word 3 is -100): length in words 4 and 5, its own size
  // in word 2.
  for (const Damage d : {Damage{"length far beyond the tile", 3, 30000, true},
                         Damage{"first instruction before the tile", 1, -60, false}}) {
    SCOPED_TRACE(d.what);
    std::string bytes = good;
    setWord(bytes, t, d.word, d.value);
    if (d.noPixels)
      for (long w = 7; w < t.words; ++w) setWord(bytes, t, w, 2 * 4096 + 1);
    test::writeBytes(dir.file("bad.fits.fz"), bytes);
    try {
      auto reader = openStack(dir.file("bad.fits.fz"));
      test::readAll(*reader);
      ADD_FAILURE() << "read";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find("PLIO tile 2"), std::string::npos) << e.what();
    }
  }
}

TEST(PlioTiles, TheWalkChecksEveryWordTheDecoderReads) {
  // Old three-word header: length 6, instructions from word 4. A run of 3 of value 1 (opcode 4)
  // after setting the value (opcode 1 and its value word).
  const int16_t list[] = {0, 0, 6, 1 * 4096 + 5, 0, 4 * 4096 + 3};
  EXPECT_TRUE(plioTileFits(list, 6, 3));
  EXPECT_FALSE(plioTileFits(list, 5, 3));              // the run's word is missing
  const int16_t setAtEnd[] = {0, 0, 4, 1 * 4096 + 5};  // its value word is missing
  EXPECT_FALSE(plioTileFits(setAtEnd, 4, 3));
  EXPECT_FALSE(plioTileFits(list, 2, 3));  // no header
  // A list whose pixels are all described before its end: the decoder stops there.
  const int16_t early[] = {0, 0, 9, 4 * 4096 + 3};
  EXPECT_TRUE(plioTileFits(early, 4, 3));
}

}  // namespace
}  // namespace stacklens::io
