// TIFF stacks laid out up front (io/tiff_layout.h) and written box by box (StackBlockWriter):
// boxes in shuffled order from several threads, classic and BigTIFF, float32 and uint16, read
// back by libtiff itself (every tag, every strip, no warning), by io::openStack and, where
// Python has it, by tifffile.
#include "io/tiff_layout.h"

#include <gtest/gtest.h>
#include <tiffio.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io/block_writer.h"
#include "io/stack.h"
#include "io/tiff_support.h"
#include "io/writers.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

struct Shape {
  int64_t z, y, x;
};

// The stack's value at (k, j, i): quarters (halves among them, to round), negative and positive,
// NaN now and then, values past 65535 (clamped in uint16).
float valueAt(const Shape& s, int64_t k, int64_t j, int64_t i) {
  const int64_t n = (k * s.y + j) * s.x + i;
  if (n % 997 == 5) return std::numeric_limits<float>::quiet_NaN();
  return float(n % 70001) * 1.25f - 1000.25f;
}

// The uint16 sample TIFF should hold for v, worked out apart from the writer: round half away
// from zero, clamp to 0..65535, NaN as 0.
uint16_t expectedUInt16(float v) {
  if (std::isnan(v) || v <= 0) return 0;
  const double r = std::floor(double(v) + 0.5);
  return r >= 65535 ? 65535 : uint16_t(r);
}

std::vector<float> expectedStack(const Shape& s, bool uint16) {
  std::vector<float> out;
  out.reserve(size_t(s.z * s.y * s.x));
  for (int64_t k = 0; k < s.z; ++k)
    for (int64_t j = 0; j < s.y; ++j)
      for (int64_t i = 0; i < s.x; ++i) {
        const float v = valueAt(s, k, j, i);
        out.push_back(uint16 ? float(expectedUInt16(v)) : v);
      }
  return out;
}

using test::Box;

// Boxes on the grid of the given cuts (which need not divide the stack), shuffled.
std::vector<Box> shuffledBoxes(const std::vector<int64_t>& zs, const std::vector<int64_t>& ys,
                               const std::vector<int64_t>& xs, unsigned seed) {
  std::vector<Box> boxes;
  for (size_t a = 0; a + 1 < zs.size(); ++a)
    for (size_t b = 0; b + 1 < ys.size(); ++b)
      for (size_t c = 0; c + 1 < xs.size(); ++c)
        boxes.push_back({zs[a], zs[a + 1], ys[b], ys[b + 1], xs[c], xs[c + 1]});
  std::shuffle(boxes.begin(), boxes.end(), std::mt19937(seed));
  return boxes;
}

// Writes the stack through StackBlockWriter, the boxes taken in turn by four threads.
void writeStackInBoxes(const std::string& path, const Shape& s, const std::vector<Box>& boxes,
                       const WriteOptions& options) {
  StackBlockWriter writer(path, s.z, s.y, s.x, options);
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (size_t n = next++; n < boxes.size(); n = next++) {
        const Box& b = boxes[n];
        std::vector<float> part;
        for (int64_t k = b.z0; k < b.z1; ++k)
          for (int64_t j = b.y0; j < b.y1; ++j)
            for (int64_t i = b.x0; i < b.x1; ++i) part.push_back(valueAt(s, k, j, i));
        writer.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, part.data());
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(std::filesystem::exists(path));  // not there before commit
  writer.commit();
}

WriteOptions spacedOptions(bool uint16, bool big) {
  WriteOptions o;
  o.spacingKnown = true;
  o.spacing = {2.0, 0.5, 0.3};
  o.units = {"micron", "micron", "micron"};
  o.tiffUInt16 = uint16;
  o.bigTiff = big;
  return o;
}

// The first directory's entries as stored: (tag, type, count).
struct RawEntry {
  uint16_t tag, type;
  uint64_t count;
};

template <class T>
T littleEndianAt(const std::string& bytes, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(uint8_t(bytes.at(at + i))) << (8 * i);
  return T(v);
}

std::vector<RawEntry> firstDirectory(const std::string& bytes, bool big) {
  const auto at =
      size_t(big ? littleEndianAt<uint64_t>(bytes, 8) : littleEndianAt<uint32_t>(bytes, 4));
  const uint64_t n =
      big ? littleEndianAt<uint64_t>(bytes, at) : littleEndianAt<uint16_t>(bytes, at);
  std::vector<RawEntry> out;
  for (uint64_t e = 0; e < n; ++e) {
    const size_t p = at + (big ? 8 : 2) + size_t(e) * (big ? 20 : 12);
    out.push_back(
        {littleEndianAt<uint16_t>(bytes, p), littleEndianAt<uint16_t>(bytes, p + 2),
         big ? littleEndianAt<uint64_t>(bytes, p + 4) : littleEndianAt<uint32_t>(bytes, p + 4)});
  }
  return out;
}

// Reads the file with libtiff alone: every page's tags and strips against what was asked for,
// and no warning or error from libtiff on the way.
void checkWithLibtiff(const std::string& path, const Shape& s, const WriteOptions& options,
                      const std::vector<float>& want) {
  TiffMessages messages;
  TiffHandle handle(openTiff(path, "rc", messages));  // strips as stored, not chopped
  TIFF* t = handle.get();
  ASSERT_NE(t, nullptr) << messages.errors;
  EXPECT_EQ(TIFFIsBigEndian(t), 0);
  EXPECT_EQ(TIFFIsBigTIFF(t) != 0, options.bigTiff);
  const uint16_t bits = options.tiffUInt16 ? 16 : 32;
  int64_t pages = 0;
  do {
    SCOPED_TRACE("page " + std::to_string(pages));
    uint32_t width = 0, length = 0, rowsPerStrip = 0, subfile = 9;
    uint16_t bitsPerSample = 0, samples = 0, format = 0, photometric = 9, planar = 0,
             compression = 0, page = 0, pageCount = 0, unit = 0;
    float xres = 0, yres = 0;
    char* software = nullptr;
    char* description = nullptr;
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &width));
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_IMAGELENGTH, &length));
    EXPECT_EQ(int64_t(width), s.x);
    EXPECT_EQ(int64_t(length), s.y);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_SUBFILETYPE, &subfile));
    EXPECT_EQ(subfile, s.z > 1 ? uint32_t(FILETYPE_PAGE) : 0u);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_BITSPERSAMPLE, &bitsPerSample));
    EXPECT_EQ(bitsPerSample, bits);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_SAMPLESPERPIXEL, &samples));
    EXPECT_EQ(samples, 1);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_SAMPLEFORMAT, &format));
    EXPECT_EQ(format, options.tiffUInt16 ? SAMPLEFORMAT_UINT : SAMPLEFORMAT_IEEEFP);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric));
    EXPECT_EQ(photometric, PHOTOMETRIC_MINISBLACK);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_PLANARCONFIG, &planar));
    EXPECT_EQ(planar, PLANARCONFIG_CONTIG);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_COMPRESSION, &compression));
    EXPECT_EQ(compression, COMPRESSION_NONE);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_ROWSPERSTRIP, &rowsPerStrip));
    const int64_t rowBytes = s.x * bits / 8;
    EXPECT_EQ(rowsPerStrip, uint32_t(std::min<int64_t>(s.y, (int64_t(64) << 20) / rowBytes)));
    if (s.z > 1) {
      ASSERT_TRUE(TIFFGetField(t, TIFFTAG_PAGENUMBER, &page, &pageCount));
      EXPECT_EQ(int64_t(page), pages);
      EXPECT_EQ(int64_t(pageCount), s.z);
    } else {
      EXPECT_FALSE(TIFFGetField(t, TIFFTAG_PAGENUMBER, &page, &pageCount));
    }
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_XRESOLUTION, &xres));
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_YRESOLUTION, &yres));
    EXPECT_NEAR(xres, 1 / 0.3, 1e-5);
    EXPECT_FLOAT_EQ(yres, 2.0f);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_RESOLUTIONUNIT, &unit));
    EXPECT_EQ(unit, RESUNIT_NONE);
    ASSERT_TRUE(TIFFGetField(t, TIFFTAG_SOFTWARE, &software));
    EXPECT_STREQ(software, "StackLens");
    const bool hasDescription = TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &description);
    EXPECT_EQ(hasDescription, pages == 0);
    if (pages == 0 && hasDescription) {
      EXPECT_EQ(std::string(description), tiffDescription(s.z, options));
    }
    // Every strip, as libtiff decodes it, against the expected values.
    const uint32_t strips = TIFFNumberOfStrips(t);
    EXPECT_EQ(strips, uint32_t((s.y + rowsPerStrip - 1) / rowsPerStrip));
    std::vector<char> strip(size_t(TIFFStripSize(t)));
    for (uint32_t n = 0; n < strips; ++n) {
      const tmsize_t got = TIFFReadEncodedStrip(t, n, strip.data(), tmsize_t(strip.size()));
      const int64_t rows = std::min<int64_t>(rowsPerStrip, s.y - int64_t(n) * rowsPerStrip);
      ASSERT_EQ(got, tmsize_t(rows * rowBytes)) << "strip " << n;
      const size_t first = size_t((pages * s.y + int64_t(n) * rowsPerStrip) * s.x);
      for (int64_t v = 0; v < rows * s.x; ++v) {
        float value;
        if (options.tiffUInt16) {
          uint16_t u;
          std::memcpy(&u, strip.data() + v * 2, 2);
          value = float(u);
        } else {
          std::memcpy(&value, strip.data() + v * 4, 4);
        }
        const float w = want[first + size_t(v)];
        if (!(std::isnan(w) && std::isnan(value)) && w != value) {
          ADD_FAILURE() << "strip " << n << ", value " << v << ": " << value << " vs " << w;
          return;
        }
      }
    }
    ++pages;
  } while (TIFFReadDirectory(t));
  EXPECT_EQ(pages, s.z);
  EXPECT_EQ(messages.warnings, "");
  EXPECT_EQ(messages.errors, "");
}

// The bytes themselves: the header, the first directory's tags ascending with the types chosen,
// and the pixels starting on a 4096-byte boundary right where page 0's first strip says.
void checkRawLayout(const std::string& path, const WriteOptions& options) {
  const std::string bytes = test::readBytes(path);
  const bool big = options.bigTiff;
  ASSERT_GE(bytes.size(), 16u);
  EXPECT_EQ(bytes.substr(0, 4), big ? std::string("II+\0", 4) : std::string("II*\0", 4));
  if (big) {
    EXPECT_EQ(bytes.substr(4, 4), std::string("\x08\0\0\0", 4));
  }
  const std::vector<RawEntry> entries = firstDirectory(bytes, big);
  ASSERT_FALSE(entries.empty());
  for (size_t e = 1; e < entries.size(); ++e)
    EXPECT_LT(entries[e - 1].tag, entries[e].tag) << "entry " << e;
  const std::map<uint16_t, uint16_t> types = {
      {TIFFTAG_STRIPOFFSETS, big ? TIFF_LONG8 : TIFF_LONG},
      {TIFFTAG_STRIPBYTECOUNTS, big ? TIFF_LONG8 : TIFF_LONG},
      {TIFFTAG_XRESOLUTION, TIFF_RATIONAL},
      {TIFFTAG_YRESOLUTION, TIFF_RATIONAL},
      {TIFFTAG_IMAGEDESCRIPTION, TIFF_ASCII},
      {TIFFTAG_SOFTWARE, TIFF_ASCII},
      {TIFFTAG_BITSPERSAMPLE, TIFF_SHORT},
      {TIFFTAG_SAMPLEFORMAT, TIFF_SHORT},
      {TIFFTAG_PAGENUMBER, TIFF_SHORT},
      {TIFFTAG_IMAGEWIDTH, TIFF_LONG}};
  size_t typed = 0;
  for (const RawEntry& e : entries) {
    const auto type = types.find(e.tag);
    if (type == types.end()) continue;
    EXPECT_EQ(e.type, type->second) << "tag " << e.tag;
    ++typed;
  }
  EXPECT_EQ(typed, types.size());  // every one of them there (a stack of pages, spacing known)
  TiffMessages messages;
  TiffHandle handle(openTiff(path, "rc", messages));  // strips as stored, not chopped
  ASSERT_NE(handle.get(), nullptr);
  uint64_t* offsets = nullptr;
  ASSERT_TRUE(TIFFGetField(handle.get(), TIFFTAG_STRIPOFFSETS, &offsets));
  EXPECT_EQ(offsets[0] % 4096, 0u);
  EXPECT_GT(offsets[0], 0u);
}

// Python with tifffile (and NumPy), or "" where none of the interpreters tried has it.
std::string pythonWithTifffile() {
  for (const char* python : {"python3", "/usr/bin/python3"}) {
    const std::string probe = std::string(python) + " -c 'import numpy, tifffile' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return python;
  }
  return "";
}

// tifffile reads the stack on its own: the series' shape and dtype, BigTIFF or not, the ImageJ
// spacing and every value (worked out again in NumPy from the same formula as valueAt).
const char* kTifffileCheck = R"(
import sys, numpy as np, tifffile
path, z, y, x, uint16, big = sys.argv[1], *map(int, sys.argv[2:7])
with tifffile.TiffFile(path) as f:
    assert f.is_bigtiff == bool(big), f.is_bigtiff
    assert f.is_imagej, 'no ImageJ metadata'
    meta = f.imagej_metadata
    assert abs(float(meta['spacing']) - 2.0) < 1e-9, meta
    assert meta['unit'] == 'micron', meta
    assert len(f.pages) == z, len(f.pages)
    data = f.asarray()
    page0 = f.pages[0]
    assert page0.tags['Software'].value == 'StackLens'
    xres = page0.tags['XResolution'].value
    assert abs(xres[0] / xres[1] - 1 / 0.3) < 1e-6, xres
data = data.reshape(z, y, x)
n = np.arange(z * y * x, dtype=np.int64)
v = ((n % 70001).astype(np.float32) * np.float32(1.25) - np.float32(1000.25)).astype(np.float32)
v[n % 997 == 5] = np.nan
if uint16:
    assert data.dtype == np.uint16, data.dtype
    w = np.where(np.isnan(v) | (v <= 0), 0, np.minimum(np.floor(v.astype(np.float64) + 0.5), 65535))
    assert np.array_equal(data.ravel(), w.astype(np.uint16)), 'uint16 values differ'
else:
    assert data.dtype == np.float32, data.dtype
    assert np.array_equal(data.ravel(), v, equal_nan=True), 'float32 values differ'
print('tifffile agrees')
)";

void checkWithTifffile(const std::string& python, const std::string& path, const Shape& s,
                       const WriteOptions& options, const test::TempDir& dir) {
  const std::string script = dir.file("check_tifffile.py");
  test::writeBytes(script, kTifffileCheck);
  const std::string command = python + " " + script + " '" + path + "' " + std::to_string(s.z) +
                              " " + std::to_string(s.y) + " " + std::to_string(s.x) + " " +
                              (options.tiffUInt16 ? "1" : "0") + " " +
                              (options.bigTiff ? "1" : "0") + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  EXPECT_EQ(::pclose(pipe), 0) << output;
  EXPECT_NE(output.find("tifffile agrees"), std::string::npos) << output;
}

struct Variant {
  bool uint16, big, mapped;
};

class TiffLayoutRoundTrip : public ::testing::TestWithParam<Variant> {};

// Boxes that share bands of rows and pages, in shuffled order from four threads: every reader
// sees the stack, its spacing and the ImageJ description.
TEST_P(TiffLayoutRoundTrip, ShuffledBoxesFromThreadsReadBackEverywhere) {
  const Variant v = GetParam();
  setenv("STACKLENS_WRITE_WITHOUT_MAPPING", v.mapped ? "0" : "1", 1);
  test::TempDir dir;
  const Shape s{6, 50, 1030};
  const WriteOptions options = spacedOptions(v.uint16, v.big);
  const std::string path = dir.file("boxes.tif");
  writeStackInBoxes(path, s, shuffledBoxes({0, 4, 6}, {0, 17, 50}, {0, 333, 700, 1030}, 11),
                    options);
  unsetenv("STACKLENS_WRITE_WITHOUT_MAPPING");
  const std::vector<float> want = expectedStack(s, v.uint16);
  checkRawLayout(path, options);
  checkWithLibtiff(path, s, options, want);
  auto reader = openStack(path);
  const StackInfo& info = reader->info();
  EXPECT_EQ(info.format, "tiff");
  EXPECT_EQ(info.dtype, v.uint16 ? DType::UInt16 : DType::Float32);
  EXPECT_TRUE(test::sameValues(want, test::readAll(*reader)));
  ASSERT_TRUE(info.spacingKnown);
  EXPECT_NEAR(info.spacing[0], 2.0, 1e-9);
  EXPECT_NEAR(info.spacing[1], 0.5, 1e-6);
  EXPECT_NEAR(info.spacing[2], 0.3, 1e-6);
  EXPECT_EQ(dir.entries().size(), 1u);  // no temporary file left
}

INSTANTIATE_TEST_SUITE_P(Variants, TiffLayoutRoundTrip,
                         ::testing::Values(Variant{false, false, true}, Variant{false, true, true},
                                           Variant{true, false, true}, Variant{true, true, true},
                                           Variant{false, false, false},
                                           Variant{true, true, false}),
                         [](const ::testing::TestParamInfo<Variant>& p) {
                           return std::string(p.param.uint16 ? "UInt16" : "Float32") +
                                  (p.param.big ? "BigTiff" : "Classic") +
                                  (p.param.mapped ? "Mapped" : "Pwrite");
                         });

// tifffile, a reader written apart from libtiff, reads the same stacks: classic and BigTIFF,
// float32 and uint16, with the ImageJ spacing. Skipped where no Python has tifffile and NumPy.
TEST(TiffLayout, TifffileReadsTheStacks) {
  const std::string python = pythonWithTifffile();
  if (python.empty()) GTEST_SKIP() << "no Python with tifffile and NumPy here";
  const Shape s{6, 50, 1030};
  for (bool uint16 : {false, true})
    for (bool big : {false, true}) {
      SCOPED_TRACE(std::string(uint16 ? "uint16 " : "float32 ") + (big ? "BigTIFF" : "classic"));
      test::TempDir dir;
      const WriteOptions options = spacedOptions(uint16, big);
      const std::string path = dir.file("boxes.tif");
      writeStackInBoxes(path, s, shuffledBoxes({0, 4, 6}, {0, 17, 50}, {0, 333, 700, 1030}, 7),
                        options);
      checkWithTifffile(python, path, s, options, dir);
    }
}

// Pages larger than a strip (64 MiB): the strip offsets and byte counts no longer fit the entry
// and go after the directory, as LONG (classic) or LONG8 (BigTIFF) arrays; boxes of half pages
// go out on several threads each.
TEST(TiffLayout, PagesOfSeveralStripsReadBack) {
  const Shape s{2, 4100, 4096};
  for (bool big : {false, true}) {
    SCOPED_TRACE(big ? "BigTIFF" : "classic");
    test::TempDir dir;
    const WriteOptions options = spacedOptions(false, big);
    const std::string path = dir.file("strips.tif");
    writeStackInBoxes(path, s, shuffledBoxes({0, 2}, {0, 4100}, {0, 2048, 4096}, 3), options);
    checkRawLayout(path, options);
    checkWithLibtiff(path, s, options, expectedStack(s, false));
  }
}

// The BigTIFF rule is TiffPageWriter's: pixels past 4e9 bytes; nothing written to see it.
TEST(TiffLayout, BigTiffOnlyPastFourBillionBytes) {
  const TiffStackLayout classic = layOutTiffStack("t.tif", 1000, 1000, 1000, {}, "d");
  EXPECT_FALSE(classic.bigTiff);
  EXPECT_EQ(classic.pixelBytes, int64_t(4'000'000'000));
  EXPECT_LE(classic.fileBytes(), int64_t(std::numeric_limits<uint32_t>::max()));
  EXPECT_EQ(classic.pixelStart % 4096, 0);
  EXPECT_EQ(int64_t(classic.head.size()), classic.pixelStart);
  const TiffStackLayout big = layOutTiffStack("t.tif", 1000, 1000, 1001, {}, "d");
  EXPECT_TRUE(big.bigTiff);
  EXPECT_EQ(big.pixelStart % 4096, 0);
  WriteOptions half;
  half.tiffUInt16 = true;  // the same pixels in half the bytes: classic again
  EXPECT_FALSE(layOutTiffStack("t.tif", 1000, 1000, 1001, half, "d").bigTiff);
  EXPECT_THROW(layOutTiffStack("t.tif", 1, 1, int64_t(1) << 33, {}, "d"), IoError);
}

// A single page has neither PageNumber nor a multi-page subfile type, and reads back.
TEST(TiffLayout, SinglePageStack) {
  test::TempDir dir;
  const Shape s{1, 9, 7};
  const std::string path = dir.file("one.tif");
  const WriteOptions options = spacedOptions(false, false);
  writeStackInBoxes(path, s, shuffledBoxes({0, 1}, {0, 4, 9}, {0, 3, 7}, 5), options);
  checkWithLibtiff(path, s, options, expectedStack(s, false));
  EXPECT_TRUE(test::sameValues(expectedStack(s, false), test::readAll(*openStack(path))));
}

// An uncommitted writer leaves neither the file nor its temporary file.
TEST(TiffLayout, UncommittedLeavesNothing) {
  test::TempDir dir;
  {
    StackBlockWriter writer(dir.file("gone.tif"), 3, 8, 8, spacedOptions(false, false));
    const std::vector<float> slice(64, 1.f);
    writer.writeBox(0, 1, 0, 8, 0, 8, slice.data());
  }
  EXPECT_EQ(dir.entries().size(), 0u);
}

}  // namespace
}  // namespace stacklens::io
