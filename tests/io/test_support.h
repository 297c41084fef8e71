// Helpers shared by the io tests: temporary folders, raw files, reading whole stacks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "io/ds9_regions.h"
#include "io/stack.h"
#include "tests/scoped_variable.h"

namespace stacklens::io::test {

using stacklens::test::ScopedVariable;

// The data the io tests read: one definition, so that the test files can be compiled together in
// batches (STACKLENS_UNITY_TESTS).
inline const std::string kTestData = STACKLENS_TEST_DATA;
inline const std::string kFixtures = kTestData + "/fixtures/";
inline const std::string kRegions = kTestData + "/regions/";
inline const std::string kZarrV3 = kTestData + "/zarr/v3";
inline const std::string kHorseHead = std::string(STACKLENS_SHARED_DATA) + "/HorseHead.fits";

// A box of a stack, half-open on each axis: [z0, z1) × [y0, y1) × [x0, x1).
struct Box {
  int64_t z0, z1, y0, y1, x0, x1;
};

// Whether the region file warned about the given line with a message containing word.
inline bool warned(const RegionFile& f, int line, const std::string& word) {
  const std::string prefix = "line " + std::to_string(line) + ":";
  return std::any_of(f.warnings.begin(), f.warnings.end(), [&](const std::string& w) {
    return w.rfind(prefix, 0) == 0 && w.find(word) != std::string::npos;
  });
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A fresh folder under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("stacklens-io-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }
  // Names of the entries in the folder (to check that no temporary file was left behind).
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      out.push_back(e.path().filename().string());
    return out;
  }

 private:
  std::filesystem::path path_;
};

inline void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// All slices of a reader, (z, y, x) order.
inline std::vector<float> readAll(const StackReader& reader) {
  const StackInfo& info = reader.info();
  std::vector<float> out(static_cast<size_t>(info.z * info.y * info.x));
  for (int64_t k = 0; k < info.z; ++k) reader.readSlice(k, out.data() + k * info.y * info.x);
  return out;
}

// Equal as float bit patterns would be too strict for NaN payloads: NaN matches NaN.
inline ::testing::AssertionResult sameValues(const std::vector<float>& expected,
                                             const std::vector<float>& actual) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << expected.size() << " vs " << actual.size();
  for (size_t i = 0; i < expected.size(); ++i) {
    const bool bothNan = expected[i] != expected[i] && actual[i] != actual[i];
    if (!bothNan && expected[i] != actual[i])
      return ::testing::AssertionFailure()
             << "value " << i << ": expected " << expected[i] << ", got " << actual[i];
  }
  return ::testing::AssertionSuccess();
}

inline const HeaderCard* findCard(const StackInfo& info, const std::string& key) {
  for (const auto& c : info.header)
    if (c.key == key) return &c;
  return nullptr;
}

}  // namespace stacklens::io::test
