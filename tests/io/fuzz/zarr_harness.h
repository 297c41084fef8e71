// What the Zarr fuzzer does with one input: unpack it into a Zarr folder (array metadata, an
// optional OME group, and one chunk's bytes stored under every key a small grid can have), for
// openStack to open and read. The layout lets libFuzzer mutate metadata and chunk bytes apart.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace stacklens::io::fuzz {

// Input: one flags byte (bit 0: v3 metadata, else v2; bit 1: the array is level "0" of an
// OME-Zarr group whose attributes follow the array's metadata), the array's metadata JSON up to
// a NUL, the group's attributes JSON up to a NUL when bit 1 is set, then the chunk bytes.
// Returns the folder to open (removed by removeZarrInput).
inline std::string writeZarrInput(const uint8_t* data, size_t size) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string root = std::string(tmp && *tmp ? tmp : "/tmp") + "/stacklens-fuzz-" +
                           std::to_string(::getpid()) + ".zarr";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  if (size == 0) return root;
  const bool v3 = data[0] & 1, ome = data[0] & 2;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t end = std::min(rest.find('\0'), rest.size());
  const std::string meta = rest.substr(0, end);
  std::string tail = end < rest.size() ? rest.substr(end + 1) : std::string();
  std::string attributes;
  if (ome) {
    const size_t groupEnd = std::min(tail.find('\0'), tail.size());
    attributes = tail.substr(0, groupEnd);
    tail = groupEnd < tail.size() ? tail.substr(groupEnd + 1) : std::string();
  }
  const std::string array = ome ? root + "/0" : root;
  std::filesystem::create_directories(array);
  const auto write = [](const std::string& path, const std::string& bytes) {
    std::error_code ec;  // a key whose folder is another key's file stays unwritten
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (!ec)
      std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  };
  write(array + (v3 ? "/zarr.json" : "/.zarray"), meta);
  if (ome) {
    if (v3)
      write(root + "/zarr.json", R"({"zarr_format": 3, "node_type": "group", "attributes": )" +
                                     (attributes.empty() ? std::string("{}") : attributes) + "}");
    else
      write(root + "/.zattrs", attributes);
  }
  // The first two chunks' keys, for the number of axes bits 2-4 ask for, in every encoding.
  const int axes = 1 + (data[0] >> 2) % 5;
  const auto key = [axes](const std::string& first, const char* separator, const char* prefix) {
    std::string k = prefix + first;
    for (int i = 1; i < axes; ++i) k += std::string(separator) + "0";
    return k;
  };
  for (const std::string& k : {key("0", ".", ""), key("1", ".", ""), key("0", "/", ""),
                               key("0", "/", "c/"), key("1", "/", "c/"), key("0", ".", "c.")})
    write(array + "/" + k, tail);
  return root;
}

inline void removeZarrInput(const std::string& root) {
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

}  // namespace stacklens::io::fuzz
