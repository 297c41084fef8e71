// The readers close every file they open: after a constructor throws, after a failed slice read
// and when a reader is destroyed, no descriptor is left open (counted in /proc/self/fd).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "handmade_tiff.h"
#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kTestData;

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
  const std::vector<std::string> files = filesIn(kTestData + "/corpus_regressions");
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
  const std::vector<std::string> files = filesIn(kTestData + "/fixtures");
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
  for (const std::string& path : filesIn(kTestData + "/fixtures")) {
    EXPECT_EQ(openAndReadAll(path), "") << path;
    EXPECT_EQ(openDescriptors(), before) << path;
  }
}

// Each failed read closes the handle it used instead of returning it to the pool.
TEST(ReaderHandles, FailedTiffReadsCloseTheirHandles) {
  test::TempDir dir;
  const std::string path = dir.file("short_strip.tif");
  // One 8 x 8 16-bit page whose strip claims 128 bytes of which only 64 are in the file.
  test::writeBytes(path, test::tiffFile(8, 8, 128, 64));
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
