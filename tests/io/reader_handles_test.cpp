// The readers close every file they open: after a constructor throws, after a failed slice read
// and when a reader is destroyed, no descriptor is left open (counted in /proc/self/fd).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

const std::string kData = STACKLENS_TEST_DATA;

size_t openDescriptors() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}

// Opens path and reads every slice; returns the IoError's reason, or "" when all went well.
std::string openAndReadAll(const std::string& path, const OpenOptions& options = {}) {
  try {
    auto reader = openStack(path, options);
    const StackInfo& info = reader->info();
    if (info.y * info.x > (int64_t{1} << 26)) return "";  // never read absurd slices whole
    std::vector<float> slice(static_cast<size_t>(info.y * info.x));
    for (int64_t k = 0; k < info.z; ++k) reader->readSlice(k, slice.data());
  } catch (const IoError& e) {
    return e.reason();
  }
  return "";
}

std::vector<std::string> filesIn(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.is_regular_file() && entry.path().extension() != ".f32" &&
        entry.path().extension() != ".txt" && entry.path().extension() != ".md")
      out.push_back(entry.path().string());
  return out;
}

TEST(ReaderHandles, DamagedFilesLeaveNoDescriptorOpen) {
  const std::vector<std::string> files = filesIn(kData + "/corpus_regressions");
  ASSERT_GT(files.size(), 10u);
  const size_t before = openDescriptors();
  size_t failed = 0;
  for (const std::string& path : files) {
    // The fuzzers' harness: under their allocation cap, at most 64 slices of each.
    if (!fuzz::openAndReadEverything(path)) ++failed;
    EXPECT_EQ(openDescriptors(), before) << path;
  }
  EXPECT_GT(failed, files.size() / 2) << "the corpus should be mostly damaged files";
}

// A plane that does not exist is refused after every handle is open (FITS: cfitsio's and the
// pread() descriptor; TIFF: the first libtiff handle).
TEST(ReaderHandles, ConstructorThrowingLateClosesItsFiles) {
  const std::vector<std::string> files = filesIn(kData + "/fixtures");
  ASSERT_GT(files.size(), 20u);
  OpenOptions options;
  options.plane = 100000;
  const size_t before = openDescriptors();
  for (const std::string& path : files) {
    EXPECT_NE(openAndReadAll(path, options).find("plane 100000 is outside"), std::string::npos)
        << path;
    EXPECT_EQ(openDescriptors(), before) << path;
  }
}

TEST(ReaderHandles, ReadersCloseTheirFilesWhenDestroyed) {
  const size_t before = openDescriptors();
  for (const std::string& path : filesIn(kData + "/fixtures")) {
    EXPECT_EQ(openAndReadAll(path), "") << path;
    EXPECT_EQ(openDescriptors(), before) << path;
  }
}

// A little-endian TIFF with one uncompressed 8 x 8 16-bit page whose single strip claims 128
// bytes of which only 64 are in the file.
std::string tiffWithShortStrip() {
  std::string t = std::string("II*\0", 4);
  auto u16 = [&](uint16_t v) { t.append(reinterpret_cast<const char*>(&v), 2); };
  auto u32 = [&](uint32_t v) { t.append(reinterpret_cast<const char*>(&v), 4); };
  u32(8);
  const uint16_t entries = 8;
  const uint32_t dataOffset = 8 + 2 + entries * 12 + 4;
  u16(entries);
  auto entry = [&](uint16_t tag, uint16_t type, uint32_t value) {
    u16(tag);
    u16(type);
    u32(1);
    if (type == 3) {
      u16(static_cast<uint16_t>(value));
      u16(0);
    } else {
      u32(value);
    }
  };
  entry(256, 4, 8);           // ImageWidth
  entry(257, 4, 8);           // ImageLength
  entry(258, 3, 16);          // BitsPerSample
  entry(259, 3, 1);           // Compression: none
  entry(262, 3, 1);           // PhotometricInterpretation: min is black
  entry(273, 4, dataOffset);  // StripOffsets
  entry(278, 4, 8);           // RowsPerStrip
  entry(279, 4, 8 * 8 * 2);   // StripByteCounts
  u32(0);
  return t + std::string(64, '\x01');
}

// Each failed read closes the handle it used instead of returning it to the pool.
TEST(ReaderHandles, FailedTiffReadsCloseTheirHandles) {
  test::TempDir dir;
  const std::string path = dir.file("short_strip.tif");
  test::writeBytes(path, tiffWithShortStrip());
  const size_t before = openDescriptors();
  auto reader = openStack(path);
  std::vector<float> slice(64);
  int failures = 0;
  for (int round = 0; round < 5; ++round) try {
      reader->readSlice(0, slice.data());
    } catch (const IoError& e) {
      EXPECT_NE(e.reason().find("cannot read slice 0"), std::string::npos) << e.what();
      ++failures;
    }
  EXPECT_EQ(failures, 5);
  EXPECT_LE(openDescriptors(), before + 1);  // at most the handle the constructor pooled
  reader.reset();
  EXPECT_EQ(openDescriptors(), before);
}

}  // namespace
}  // namespace stacklens::io
