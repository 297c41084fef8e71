// TIFF sample layouts beyond one 8–64-bit sample per pixel: packed 1/2/4-bit values, 16-bit
// floats, several samples per pixel (chunky and planar) shown as planes, OME sizes given for one
// axis only. The files are assembled byte by byte here, so the expected values are independent
// of libtiff and of our reader.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {
namespace {

namespace fs = std::filesystem;

// One little-endian, uncompressed, single-page TIFF.
struct TiffSpec {
  uint32_t width = 0, height = 0;
  uint16_t bits = 8, samples = 1, planar = 1, sampleFormat = 1, photometric = 1;
  std::vector<std::vector<uint8_t>> strips;  // one strip per sample plane (planar) or one
  std::string description;                   // ImageDescription, when not empty
};

std::string buildTiff(const TiffSpec& s) {
  struct Entry {
    uint16_t tag, type;
    uint32_t count;
    std::vector<uint8_t> value;  // little-endian bytes
  };
  auto shorts = [](std::vector<uint16_t> v) {
    std::vector<uint8_t> b(v.size() * 2);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  auto longs = [](std::vector<uint32_t> v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  const uint32_t nEntries = 11 + (s.description.empty() ? 0 : 1);
  const uint32_t ifdBytes = 2 + nEntries * 12 + 4;
  // Layout: header (8), IFD, out-of-line values, pixel data.
  std::vector<Entry> entries;
  std::vector<uint32_t> stripBytes;
  for (const auto& strip : s.strips) stripBytes.push_back(static_cast<uint32_t>(strip.size()));
  entries.push_back({256, 4, 1, longs({s.width})});
  entries.push_back({257, 4, 1, longs({s.height})});
  entries.push_back({258, 3, s.samples, shorts(std::vector<uint16_t>(s.samples, s.bits))});
  entries.push_back({259, 3, 1, shorts({1})});
  entries.push_back({262, 3, 1, shorts({s.photometric})});
  if (!s.description.empty()) {
    std::vector<uint8_t> text(s.description.begin(), s.description.end());
    text.push_back(0);
    entries.push_back({270, 2, static_cast<uint32_t>(text.size()), text});
  }
  entries.push_back({273, 4, static_cast<uint32_t>(s.strips.size()), {}});  // offsets: below
  entries.push_back({277, 3, 1, shorts({s.samples})});
  entries.push_back({278, 4, 1, longs({s.height})});
  entries.push_back({279, 4, static_cast<uint32_t>(stripBytes.size()), longs(stripBytes)});
  entries.push_back({284, 3, 1, shorts({s.planar})});
  entries.push_back({339, 3, s.samples, shorts(std::vector<uint16_t>(s.samples, s.sampleFormat))});
  // Out-of-line values follow the IFD; pixel data follow them.
  uint32_t extra = 8 + ifdBytes;
  uint32_t outOfLine = 0;
  for (const auto& e : entries) {
    const uint32_t size = e.tag == 273 ? 4 * e.count : static_cast<uint32_t>(e.value.size());
    if (size > 4) outOfLine += (size + 1) & ~1u;
  }
  uint32_t dataOffset = extra + outOfLine;
  std::vector<uint32_t> offsets;
  for (const auto& strip : s.strips) {
    offsets.push_back(dataOffset);
    dataOffset += static_cast<uint32_t>(strip.size());
  }
  for (auto& e : entries)
    if (e.tag == 273) e.value = longs(offsets);

  std::string out("II*\0", 4);
  auto put = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  const uint32_t ifdOffset = 8;
  put(&ifdOffset, 4);
  const uint16_t count = static_cast<uint16_t>(entries.size());
  EXPECT_EQ(count, nEntries);
  put(&count, 2);
  std::string tail;
  for (const auto& e : entries) {
    put(&e.tag, 2);
    put(&e.type, 2);
    put(&e.count, 4);
    if (e.value.size() <= 4) {
      std::vector<uint8_t> inline4(4, 0);
      std::memcpy(inline4.data(), e.value.data(), e.value.size());
      put(inline4.data(), 4);
    } else {
      const uint32_t at = extra + static_cast<uint32_t>(tail.size());
      put(&at, 4);
      tail.append(reinterpret_cast<const char*>(e.value.data()), e.value.size());
      if (tail.size() % 2) tail.push_back('\0');
    }
  }
  const uint32_t next = 0;
  put(&next, 4);
  out += tail;
  for (const auto& strip : s.strips) put(strip.data(), strip.size());
  return out;
}

class TiffSamples : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stacklens_tiff_samples_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const TiffSpec& spec) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << buildTiff(spec);
    return path;
  }
  static std::vector<float> read(const std::string& path, int plane = 0) {
    auto reader = openStack(path, {-1, plane});
    std::vector<float> v(static_cast<size_t>(reader->info().y * reader->info().x));
    reader->readSlice(0, v.data());
    return v;
  }
  fs::path dir_;
};

// Packs values of `bits` bits, most significant first, each row starting on a byte.
std::vector<uint8_t> pack(const std::vector<unsigned>& values, uint32_t width, int bits) {
  const size_t rowBytes = (width * bits + 7) / 8, rows = values.size() / width;
  std::vector<uint8_t> out(rows * rowBytes, 0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t x = 0; x < width; ++x) {
      const size_t bit = x * bits;
      out[r * rowBytes + bit / 8] |=
          static_cast<uint8_t>(values[r * width + x] << (8 - bits - bit % 8));
    }
  return out;
}

TEST_F(TiffSamples, PackedOneTwoAndFourBitValuesUnpackToTheirStoredValues) {
  for (int bits : {1, 2, 4}) {
    const uint32_t width = 7, height = 3;  // 7 · bits is not a whole number of bytes per row
    std::vector<unsigned> values(width * height);
    for (size_t i = 0; i < values.size(); ++i) values[i] = (i * 5 + 3) % (1u << bits);
    TiffSpec spec;
    spec.width = width;
    spec.height = height;
    spec.bits = static_cast<uint16_t>(bits);
    spec.strips = {pack(values, width, bits)};
    const std::string path = write("packed" + std::to_string(bits) + ".tif", spec);
    auto reader = openStack(path);
    EXPECT_EQ(reader->info().dtype, DType::UInt8);
    const std::vector<float> got = read(path);
    for (size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(got[i], static_cast<float>(values[i])) << bits << "-bit, pixel " << i;
  }
}

TEST_F(TiffSamples, HalfFloatsWidenExactly) {
  const std::vector<uint16_t> halves = {0x3C00, 0xC000, 0x0001, 0x03FF, 0x7BFF,
                                        0x7C00, 0xFC00, 0x8000, 0x3555, 0x7E00};
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  const std::vector<float> expected = {1.f,
                                       -2.f,
                                       std::ldexp(1.f, -24),
                                       1023 * std::ldexp(1.f, -24),
                                       65504.f,
                                       inf,
                                       -inf,
                                       -0.f,
                                       0.333251953125f,
                                       nan};
  TiffSpec spec;
  spec.width = 5;
  spec.height = 2;
  spec.bits = 16;
  spec.sampleFormat = 3;
  std::vector<uint8_t> bytes(halves.size() * 2);
  std::memcpy(bytes.data(), halves.data(), bytes.size());
  spec.strips = {bytes};
  const std::vector<float> got = read(write("half.tif", spec));
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(got[i], expected[i]) << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(expected[i])) << i;
    }
  }
}

// An RGB value per pixel: sample k of pixel i is 10·i + k.
TEST_F(TiffSamples, EachSampleOfChunkyOrPlanarPixelsIsAPlane) {
  const uint32_t width = 4, height = 3, n = width * height;
  for (uint16_t planar : {1, 2}) {
    TiffSpec spec;
    spec.width = width;
    spec.height = height;
    spec.bits = 16;
    spec.samples = 3;
    spec.planar = planar;
    spec.photometric = 2;  // RGB
    auto value = [](uint32_t i, uint32_t k) { return static_cast<uint16_t>(10 * i + k); };
    if (planar == 1) {
      std::vector<uint16_t> v;
      for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = 0; k < 3; ++k) v.push_back(value(i, k));
      std::vector<uint8_t> bytes(v.size() * 2);
      std::memcpy(bytes.data(), v.data(), bytes.size());
      spec.strips = {bytes};
    } else {
      for (uint32_t k = 0; k < 3; ++k) {
        std::vector<uint16_t> v;
        for (uint32_t i = 0; i < n; ++i) v.push_back(value(i, k));
        std::vector<uint8_t> bytes(v.size() * 2);
        std::memcpy(bytes.data(), v.data(), bytes.size());
        spec.strips.push_back(bytes);
      }
    }
    const std::string path = write("rgb" + std::to_string(planar) + ".tif", spec);
    EXPECT_EQ(openStack(path)->info().planes, 3);
    for (int k = 0; k < 3; ++k) {
      const std::vector<float> got = read(path, k);
      for (uint32_t i = 0; i < n; ++i)
        ASSERT_EQ(got[i], value(i, k))
            << "planar " << planar << ", sample " << k << ", pixel " << i;
    }
    EXPECT_THROW(openStack(path, {-1, 3}), IoError);
  }
}

TEST_F(TiffSamples, OmeSizeOfOneAxisMeansSquarePixels) {
  TiffSpec spec;
  spec.width = 2;
  spec.height = 2;
  spec.strips = {{1, 2, 3, 4}};
  spec.description =
      "<?xml version=\"1.0\"?><OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\">"
      "<Image ID=\"Image:0\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYCZT\" Type=\"uint8\" "
      "SizeX=\"2\" SizeY=\"2\" SizeC=\"1\" SizeZ=\"1\" SizeT=\"1\" PhysicalSizeX=\"0.25\">"
      "</Pixels></Image></OME>";
  const StackInfo info = openStack(write("ome_x.ome.tif", spec))->info();
  ASSERT_TRUE(info.spacingKnown);
  EXPECT_DOUBLE_EQ(info.spacing[1], 0.25);
  EXPECT_DOUBLE_EQ(info.spacing[2], 0.25);
  EXPECT_EQ(info.units[2], "micron");
}

TEST_F(TiffSamples, ComplexSamplesAreRefusedByName) {
  TiffSpec spec;
  spec.width = 2;
  spec.height = 1;
  spec.bits = 64;
  spec.sampleFormat = 6;  // complex float
  spec.strips = {std::vector<uint8_t>(16, 0)};
  const std::string path = write("complex.tif", spec);
  try {
    openStack(path);
    FAIL() << "opened a complex TIFF";
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_NE(e.reason().find("unsupported sample type"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stacklens::io
