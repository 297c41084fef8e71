// Helpers of the Zarr tests: the cases a fixture script wrote (manifest.txt and <name>.f32) and
// the v2 arrays written at test time by Debian's python3-zarr.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace stacklens::io::test {

struct ZarrCase {
  std::string name;
  int64_t planes = 1, z = 1, y = 1, x = 1;
};

inline std::vector<ZarrCase> readZarrManifest(const std::string& folder) {
  std::vector<ZarrCase> cases;
  std::ifstream in(folder + "/manifest.txt");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    ZarrCase c;
    if (fields >> c.name >> c.planes >> c.z >> c.y >> c.x) cases.push_back(c);
  }
  return cases;
}

inline std::vector<float> readF32(const std::string& path) {
  const std::string bytes = readBytes(path);
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

// "ome04_level1" is level 1 of ome04.zarr; every other case is <name>.zarr, level 0.
inline std::string zarrFolderOf(const std::string& folder, const ZarrCase& c, int& level) {
  const size_t at = c.name.find("_level");
  level = at == std::string::npos ? 0 : std::stoi(c.name.substr(at + 6));
  return folder + "/" + c.name.substr(0, at) + ".zarr";
}

// The v2 arrays of make_zarr_v2.py, written once per test program into a temporary folder.
// Debian's python3-zarr is a test dependency (packaging/install-deps.sh): when it is missing,
// the tests fail with the script's output rather than skip.
class ZarrV2Arrays {
 public:
  static const ZarrV2Arrays& get() {
    static const ZarrV2Arrays arrays;
    return arrays;
  }
  const std::string& folder() const { return folder_; }
  const std::string& failure() const { return failure_; }

 private:
  ZarrV2Arrays() {
    folder_ = dir_.path().string();
    const std::string command = std::string("/usr/bin/python3 ") + STACKLENS_TEST_DATA +
                                "/zarr/make_zarr_v2.py '" + folder_ + "' 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string output;
    char buffer[512];
    while (pipe && std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
    const int status = pipe ? ::pclose(pipe) : -1;
    if (status != 0)
      failure_ = "make_zarr_v2.py failed (" + std::to_string(status) + "): " + output;
  }
  TempDir dir_;
  std::string folder_, failure_;
};

}  // namespace stacklens::io::test
