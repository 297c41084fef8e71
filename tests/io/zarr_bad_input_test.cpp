// Damaged and hostile Zarr input: impossible shapes and chunk grids refused at open with the
// metadata file and the reason; damaged chunks and shards an error naming the chunk key, while
// the rest of the array still reads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::kZarrV3;

// A v2 array: a valid float32 (2, 4, 4) array of (1, 4, 4) chunks, uncompressed, with the given
// .zarray fields (JSON object members) replacing its own.
std::string writeV2(const test::TempDir& dir, const std::string& fields,
                    const std::string& name = "a.zarr") {
  const std::string folder = dir.file(name);
  std::filesystem::create_directories(folder);
  nlohmann::json meta = nlohmann::json::parse(R"({"zarr_format": 2, "shape": [2, 4, 4],
      "chunks": [1, 4, 4], "dtype": "<f4", "compressor": null, "fill_value": 0,
      "filters": null, "order": "C"})");
  meta.update(nlohmann::json::parse("{" + fields + "}"));
  test::writeBytes(folder + "/.zarray", meta.dump());
  return folder;
}

// The message of the IoError openStack (and, if it opens, reading every slice) throws.
std::string failure(const std::string& path) {
  try {
    const auto reader = openStack(path);
    test::readAll(*reader);
  } catch (const IoError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ZarrBadInput, ImpossibleShapesAndGridsAreRefusedAtOpen) {
  test::TempDir dir;
  struct Case {
    const char* fields;
    const char* reason;
  } cases[] = {
      {R"("shape": [2, -4, 4])", "negative size"},
      {R"("shape": [2, 0, 4])", "holds no elements"},
      {R"("chunks": [1, 0, 4])", "chunk size below 1"},
      {R"("chunks": [1, 4])", "do not match"},
      {R"("shape": [4294967296, 4294967296, 4294967296])", "more elements than can be counted"},
      {R"("chunks": [1, 1048576, 1048576])", "MiB StackLens decodes at once"},
      {R"("shape": [2, 4, "4"])", "must be an integer"},
      {R"("dtype": "<c8")", "complex"},
      {R"("dtype": [["a", "<f4"]])", "structured"},
      {R"("compressor": {"id": "lz4"})", "compressor \"lz4\""},
      {R"("filters": [{"id": "delta", "dtype": "<f4"}])", "filters"},
      {R"("fill_value": "abc")", "fill_value \"abc\""},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string folder = writeV2(dir, c.fields, "case" + std::to_string(i++) + ".zarr");
    const std::string message = failure(folder);
    EXPECT_TRUE(test::contains(message, folder + "/.zarray: ")) << c.fields << " → " << message;
    EXPECT_TRUE(test::contains(message, c.reason)) << c.fields << " → " << message;
  }
}

// A chunk is also held as float32: one-byte chunks are capped by their float32 size too.
TEST(ZarrBadInput, TheChunkCapCountsTheFloat32Copy) {
  const char* before = std::getenv("STACKLENS_ALLOCATION_CAP_MB");
  const std::string saved = before ? before : "";
  ::setenv("STACKLENS_ALLOCATION_CAP_MB", "512", 1);  // chunks up to 64 MiB
  test::TempDir dir;
  // 32 Mi elements: 32 MiB as uint8, 128 MiB as float32.
  const std::string message = failure(
      writeV2(dir, R"("dtype": "|u1", "shape": [1, 4096, 8192], "chunks": [1, 4096, 8192])"));
  if (before)
    ::setenv("STACKLENS_ALLOCATION_CAP_MB", saved.c_str(), 1);
  else
    ::unsetenv("STACKLENS_ALLOCATION_CAP_MB");
  EXPECT_TRUE(test::contains(message, "more than the 64 MiB StackLens decodes at once")) << message;
}

// A 100000² plane of unwritten chunks (a mosaic's blank sky) opens and reads by boxes as the
// fill value; only reading a slice whole, beyond the allocation cap, is refused.
TEST(ZarrBadInput, APlaneLargerThanMemoryOpensButIsNotReadWhole) {
  const char* before = std::getenv("STACKLENS_ALLOCATION_CAP_MB");
  const std::string saved = before ? before : "";
  ::setenv("STACKLENS_ALLOCATION_CAP_MB", "512", 1);
  test::TempDir dir;
  const std::string folder = writeV2(
      dir, R"("shape": [1, 100000, 100000], "chunks": [1, 1024, 1024], "fill_value": "NaN")");
  std::string message = "(no error)";
  bool readByBoxes = false;
  try {
    const auto reader = openStack(folder);
    EXPECT_EQ(reader->info().x, 100000);
    EXPECT_EQ(reader->info().y, 100000);
    std::vector<float> box(4 * 6, 0.f);
    reader->readBox(0, 99996, 100000, 50000, 50006, box.data());
    for (float v : box) EXPECT_TRUE(std::isnan(v));
    readByBoxes = true;
    std::vector<float> one(1);
    reader->readSlice(0, one.data());  // refused before anything is written to the buffer
  } catch (const IoError& e) {
    message = e.what();
  }
  if (before)
    ::setenv("STACKLENS_ALLOCATION_CAP_MB", saved.c_str(), 1);
  else
    ::unsetenv("STACKLENS_ALLOCATION_CAP_MB");
  EXPECT_TRUE(readByBoxes) << message;
  EXPECT_TRUE(test::contains(message, folder +
                                          ": slices of 100000 × 100000 are more than StackLens "
                                          "can hold whole"))
      << message;
}

TEST(ZarrBadInput, MetadataThatIsNotZarrIsNamed) {
  test::TempDir dir;
  const std::string folder = dir.file("bad.zarr");
  std::filesystem::create_directories(folder);
  test::writeBytes(folder + "/.zarray", "{\"zarr_format\": 2, \"shape\": [");
  EXPECT_TRUE(test::contains(failure(folder), ".zarray: is not valid JSON")) << failure(folder);
  const std::string empty = dir.file("empty");
  std::filesystem::create_directories(empty);
  EXPECT_TRUE(test::contains(failure(empty), "nor a Zarr array or OME-Zarr image"))
      << failure(empty);
  const std::string group = dir.file("group.zarr");
  std::filesystem::create_directories(group);
  test::writeBytes(group + "/.zgroup", "{\"zarr_format\": 2}");
  EXPECT_TRUE(test::contains(failure(group), "without OME multiscales")) << failure(group);
}

TEST(ZarrBadInput, DatasetPathsCannotLeaveTheImage) {
  test::TempDir dir;
  writeV2(dir, "", "outside.zarr");
  const std::string root = dir.file("image.zarr");
  std::filesystem::create_directories(root);
  for (const char* path : {"../outside.zarr", "/etc", "a/../../outside.zarr", "%2e%2E/outside.zarr",
                           "a%2f..%2F..%2foutside.zarr"}) {
    test::writeBytes(root + "/.zattrs", std::string(R"({"multiscales": [{"version": "0.4",
        "axes": [{"name": "z"}, {"name": "y"}, {"name": "x"}], "datasets": [{"path": ")") +
                                            path + "\"}]}]}");
    const std::string message = failure(root);
    EXPECT_TRUE(test::contains(message, "dataset path")) << path << " → " << message;
  }
  // Axes that do not match the array's.
  std::filesystem::create_directories(root + "/0");
  std::filesystem::copy(dir.file("outside.zarr") + "/.zarray", root + "/0/.zarray");
  test::writeBytes(root + "/.zattrs", R"({"multiscales": [{"version": "0.4",
      "axes": [{"name": "y"}, {"name": "x"}], "datasets": [{"path": "0"}]}]})");
  EXPECT_TRUE(test::contains(failure(root), "the OME metadata names 2")) << failure(root);
}

// A damaged chunk: the error names its key and why; the other slices still read.
TEST(ZarrBadInput, ADamagedChunkIsAnErrorNamingItsKey) {
  test::TempDir dir;
  struct Case {
    const char* compressor;
    std::string bytes;
    const char* reason;
  } cases[] = {
      {R"({"id": "zstd", "level": 1})", "not zstd at all", "zstd"},
      {R"({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1})", std::string(20, 'x'),
       "blosc"},
      {R"({"id": "gzip", "level": 1})", "\x1f\x8b garbage", "gzip"},
      {R"({"id": "zlib", "level": 1})", "", "zlib"},
      {"null", std::string(63, '\0'), "63 bytes where the chunk holds 64"},
      {"null", std::string(200000, '\0'), "more than any encoding"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string folder = writeV2(dir, std::string("\"compressor\": ") + c.compressor,
                                       "d" + std::to_string(i++) + ".zarr");
    test::writeBytes(folder + "/1.0.0", c.bytes);
    const auto reader = openStack(folder);
    std::vector<float> slice(16);
    reader->readSlice(0, slice.data());  // never written: the fill value
    EXPECT_EQ(slice, std::vector<float>(16, 0.0f));
    try {
      reader->readSlice(1, slice.data());
      ADD_FAILURE() << c.compressor << ": no error";
    } catch (const IoError& e) {
      EXPECT_TRUE(test::contains(e.what(), "1.0.0")) << e.what();
      EXPECT_TRUE(test::contains(e.what(), c.reason)) << e.what();
    }
  }
}

// A gzip stream that inflates past the chunk's size is refused, not followed.
TEST(ZarrBadInput, AChunkInflatingPastItsSizeIsRefused) {
  test::TempDir dir;
  const std::string folder = writeV2(dir, R"("compressor": {"id": "zlib", "level": 1})");
  // zlib stream of 1000 zero bytes (python3 -c "import zlib; zlib.compress(bytes(1000))").
  const unsigned char stream[] = {0x78, 0x9c, 0x63, 0x60, 0x18, 0x05, 0xa3, 0x60, 0x14,
                                  0x0c, 0x77, 0x00, 0x00, 0x03, 0xe8, 0x00, 0x01};
  test::writeBytes(folder + "/0.0.0",
                   std::string(reinterpret_cast<const char*>(stream), sizeof stream));
  const std::string message = failure(folder);
  EXPECT_TRUE(test::contains(message, "0.0.0")) << message;
  EXPECT_TRUE(test::contains(message, "more than the chunk's 64 bytes")) << message;
}

// Shards whose index lies (points past the end), is damaged (crc32c) or is cut short.
TEST(ZarrBadInput, DamagedShardsNameTheShardAndInnerChunk) {
  test::TempDir dir;
  const std::string folder = dir.file("s.zarr");
  std::filesystem::copy(kZarrV3 + "/sharded_u2.zarr", folder,
                        std::filesystem::copy_options::recursive);
  const std::string shard = folder + "/c/0/0/0";
  const std::string good = test::readBytes(shard);
  const size_t indexAt = good.size() - (16 * 8 + 4);

  std::string lying = good;
  lying[indexAt + 8] = char(0x7f);  // the first inner chunk's length: far past the end
  // Recompute nothing: the crc32c must catch it first.
  test::writeBytes(shard, lying);
  std::string message = failure(folder);
  EXPECT_TRUE(test::contains(message, "c/0/0/0")) << message;
  EXPECT_TRUE(test::contains(message, "crc32c")) << message;

  test::writeBytes(shard, good.substr(0, 100));  // shorter than its index
  message = failure(folder);
  EXPECT_TRUE(test::contains(message, "less than its 132-byte index")) << message;

  test::writeBytes(shard, good);
  const auto reader = openStack(folder);
  std::vector<float> slice(size_t(16 * 20));
  reader->readSlice(0, slice.data());  // intact again
  // Another shard, its inner chunk's bytes damaged (blosc header kept, data changed).
  const std::string other = folder + "/c/2/0/0";
  std::string damaged = test::readBytes(other);
  damaged[3] = char(0xff);  // the blosc header's typesize/flags byte... and its sizes next
  damaged[4] = char(0xff), damaged[5] = char(0xff);
  test::writeBytes(other, damaged);
  const auto again = openStack(folder);
  try {
    again->readSlice(4, slice.data());
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_TRUE(test::contains(e.what(), "shard c/2/0/0, inner chunk [4, 0, 0]")) << e.what();
  }
  again->readSlice(0, slice.data());  // the rest still reads
}

TEST(ZarrBadInput, PlanesAndLevelsOutsideTheImageAreRefused) {
  EXPECT_THROW(openStack(kZarrV3 + "/ome05.zarr", OpenOptions{-1, 4}), IoError);
  EXPECT_THROW(openStack(kZarrV3 + "/ome05.zarr", OpenOptions{2, 0}), IoError);
  const auto reader = openStack(kZarrV3 + "/ome05.zarr");
  std::vector<float> slice(72);
  EXPECT_THROW(reader->readSlice(3, slice.data()), IoError);
  EXPECT_THROW(reader->readBox(0, 0, 9, 0, 9, slice.data()), IoError);
}

}  // namespace
}  // namespace stacklens::io
