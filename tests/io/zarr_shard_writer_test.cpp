// Sharded OME-Zarr 0.5 output (Zarr v3 sharding_indexed, io/zarr_shard_encoder.h): round trips
// through our reader for float32 and int32 of shapes cut by both the shards and the inner chunks,
// with inner chunks and a shard all of fill; the shard bytes checked independently of the writer
// and the reader (the index parsed here, its crc32c computed bit by bit here, inner chunks decoded
// with libblosc directly); the metadata; the pyramid's shards; bad options; boxes of other
// processes (Dask workers) on the shard grid and off it.
//
// Debian 12's python3-zarr is zarr-python 2.x, which reads no Zarr v3, so it cannot be the
// reference here as it is for the 0.4 output (zarr_writer_test.cpp).
#include <blosc.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "io/block_writer.h"
#include "io/io_error.h"
#include "io/prepared_block_file.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using Json = nlohmann::json;
using Shape3 = std::array<int64_t, 3>;

// z, y, x, none a multiple of the shards (4, 16, 24) or of the inner chunks (2, 8, 8): the last
// shard along each axis is partial, and holds a partial inner chunk and inner chunks wholly
// outside the array.
constexpr Shape3 kShape{5, 37, 53};
constexpr Shape3 kChunks{2, 8, 8};
constexpr Shape3 kShards{4, 16, 24};
constexpr uint32_t kFloatFill = 0x7FC00000u;  // NaN, the writer's float32 fill value

// Shard (0, 0, 0) is all fill; so is the first inner chunk of shard (0, 1, 1), half of it a NaN of
// another payload (any NaN is the fill value); every other sample differs from its neighbours.
template <typename T>
std::vector<T> shardTestValues(T fill, T otherFill) {
  const auto [z, y, x] = kShape;
  std::vector<T> v(size_t(z * y * x));
  for (int64_t k = 0; k < z; ++k)
    for (int64_t r = 0; r < y; ++r)
      for (int64_t c = 0; c < x; ++c) {
        T value = T(((k * y + r) * x + c) % 9973 + 1);
        if (std::is_floating_point_v<T>) value = T(value * -0.37);
        if (k < 4 && r < 16 && c < 24) value = fill;          // shard (0, 0, 0)
        if (k < 2 && r >= 16 && r < 24 && c >= 24 && c < 32)  // inner chunk of (0, 1, 1)
          value = c < 28 ? fill : otherFill;
        v[size_t((k * y + r) * x + c)] = value;
      }
  return v;
}

WriteOptions shardedOptions(int levels = 1) {
  WriteOptions o;
  o.zarr.omeVersion = "0.5";
  o.zarr.chunks = kChunks;
  o.zarr.shards = kShards;
  o.zarr.levels = levels;
  return o;
}

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) one bit at a time: no table, so that it
// shares nothing with the writer's.
uint32_t bitwiseCrc32c(const unsigned char* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
  }
  return ~c;
}

uint64_t littleEndian64(const std::string& bytes, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | uint64_t(uint8_t(bytes[at + size_t(i)]));
  return v;
}

template <typename T>
uint32_t bitsOf(T v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

// Checks one stored shard against the values written: the index at the end (inner chunks in C
// order, (offset, nbytes) little-endian, then the crc32c of the index), each stored inner chunk
// decoded by libblosc equal to the values (fill beyond the array's edge), each absent one all
// fill. Returns how many inner chunks were absent.
template <typename T>
int checkShardBytes(const std::string& file, const Shape3& shard, const std::vector<T>& values,
                    bool (*isFill)(uint32_t)) {
  SCOPED_TRACE(file);
  const std::string bytes = test::readBytes(file);
  const Shape3 grid{kShards[0] / kChunks[0], kShards[1] / kChunks[1], kShards[2] / kChunks[2]};
  const size_t count = size_t(grid[0] * grid[1] * grid[2]);
  const size_t indexBytes = 16 * count;
  EXPECT_GT(bytes.size(), indexBytes + 4);
  if (bytes.size() <= indexBytes + 4) return -1;
  const size_t indexStart = bytes.size() - 4 - indexBytes;
  const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data());
  uint32_t storedCrc = 0;
  for (int i = 3; i >= 0; --i) storedCrc = storedCrc << 8 | raw[bytes.size() - 4 + size_t(i)];
  EXPECT_EQ(storedCrc, bitwiseCrc32c(raw + indexStart, indexBytes));
  int absent = 0;
  std::vector<std::pair<uint64_t, uint64_t>> used;
  const int64_t innerSamples = kChunks[0] * kChunks[1] * kChunks[2];
  for (size_t slot = 0; slot < count; ++slot) {
    const uint64_t offset = littleEndian64(bytes, indexStart + 16 * slot);
    const uint64_t nbytes = littleEndian64(bytes, indexStart + 16 * slot + 8);
    const Shape3 g{int64_t(slot) / (grid[1] * grid[2]), int64_t(slot) / grid[2] % grid[1],
                   int64_t(slot) % grid[2]};
    // The inner chunk's samples as written (the fill's bits outside the array).
    std::vector<uint32_t> expected;
    bool allFill = true;
    for (int64_t k = 0; k < kChunks[0]; ++k)
      for (int64_t r = 0; r < kChunks[1]; ++r)
        for (int64_t c = 0; c < kChunks[2]; ++c) {
          const int64_t z = shard[0] * kShards[0] + g[0] * kChunks[0] + k;
          const int64_t y = shard[1] * kShards[1] + g[1] * kChunks[1] + r;
          const int64_t x = shard[2] * kShards[2] + g[2] * kChunks[2] + c;
          const bool inside = z < kShape[0] && y < kShape[1] && x < kShape[2];
          const uint32_t b = inside ? bitsOf(values[size_t((z * kShape[1] + y) * kShape[2] + x)])
                                    : (std::is_floating_point_v<T> ? kFloatFill : 0u);
          allFill = allFill && isFill(b);
          expected.push_back(b);
        }
    SCOPED_TRACE("inner chunk " + std::to_string(slot));
    if (allFill) {
      EXPECT_EQ(offset, ~uint64_t(0));
      EXPECT_EQ(nbytes, ~uint64_t(0));
      ++absent;
      continue;
    }
    EXPECT_LE(offset + nbytes, indexStart);
    if (offset + nbytes > indexStart) return -1;
    for (const auto& [o, n] : used) EXPECT_TRUE(offset + nbytes <= o || o + n <= offset);
    used.push_back({offset, nbytes});
    std::vector<uint32_t> decoded(static_cast<size_t>(innerSamples));
    const int got = blosc_decompress_ctx(raw + offset, decoded.data(), decoded.size() * 4, 1);
    EXPECT_EQ(got, int(innerSamples * 4));
    EXPECT_EQ(decoded, expected);
  }
  return absent;
}

bool isFloatFill(uint32_t b) { return (b & 0x7F800000u) == 0x7F800000u && (b & 0x007FFFFFu); }
bool isZero(uint32_t b) { return b == 0; }

std::string shardFile(const std::string& zarr, int level, const Shape3& s) {
  return zarr + "/" + std::to_string(level) + "/c/" + std::to_string(s[0]) + "/" +
         std::to_string(s[1]) + "/" + std::to_string(s[2]);
}

TEST(ZarrCrc32cReference, BitwiseCrcMatchesTheStandardCheckValue) {
  // The CRC catalogue's check value of CRC-32C for "123456789".
  const std::string nine = "123456789";
  EXPECT_EQ(bitwiseCrc32c(reinterpret_cast<const unsigned char*>(nine.data()), nine.size()),
            0xE3069283u);
}

TEST(ZarrShardWriter, Float32RoundTripsWithFillChunksAndShardsLeftOut) {
  test::TempDir dir;
  const std::string path = dir.file("f.ome.zarr");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float otherNan;
  const uint32_t negativeNan = 0xFFC00001u;  // NaN of another sign and payload
  std::memcpy(&otherNan, &negativeNan, 4);
  const std::vector<float> values = shardTestValues<float>(nan, otherNan);
  writeStack(path, values.data(), kShape[0], kShape[1], kShape[2], shardedOptions());
  const auto reader = openStack(path);
  EXPECT_EQ(reader->info().dtype, DType::Float32);
  EXPECT_TRUE(test::sameValues(values, test::readAll(*reader)));

  EXPECT_FALSE(std::filesystem::exists(shardFile(path, 0, {0, 0, 0})));  // all fill
  // Every other shard of the 2 × 3 × 3 grid is there, and nothing else is in the level.
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(path + "/0/c"))
    files += e.is_regular_file();
  EXPECT_EQ(files, 2 * 3 * 3 - 1);
  EXPECT_EQ(checkShardBytes<float>(shardFile(path, 0, {0, 1, 1}), {0, 1, 1}, values, isFloatFill),
            1);
  // The far corner: of its 2 × 2 × 3 inner chunks only (0, 0, 0) holds array samples.
  EXPECT_EQ(checkShardBytes<float>(shardFile(path, 0, {1, 2, 2}), {1, 2, 2}, values, isFloatFill),
            11);
  EXPECT_EQ(checkShardBytes<float>(shardFile(path, 0, {1, 1, 0}), {1, 1, 0}, values, isFloatFill),
            6);  // z 4 only: the second inner layer (z 6, 7) is outside
}

TEST(ZarrShardWriter, Int32LabelsRoundTripWithZeroChunksLeftOut) {
  test::TempDir dir;
  const std::string path = dir.file("l.zarr");
  const std::vector<int32_t> labels = shardTestValues<int32_t>(0, 0);
  writeLabelStack(path, labels.data(), kShape[0], kShape[1], kShape[2], shardedOptions());
  const auto reader = openStack(path);
  EXPECT_EQ(reader->info().dtype, DType::Int32);
  const std::vector<float> read = test::readAll(*reader);
  ASSERT_EQ(read.size(), labels.size());
  for (size_t i = 0; i < labels.size(); ++i) ASSERT_EQ(read[i], float(labels[i])) << i;
  EXPECT_FALSE(std::filesystem::exists(shardFile(path, 0, {0, 0, 0})));
  EXPECT_EQ(checkShardBytes<int32_t>(shardFile(path, 0, {0, 1, 1}), {0, 1, 1}, labels, isZero), 1);
  EXPECT_EQ(checkShardBytes<int32_t>(shardFile(path, 0, {1, 2, 1}), {1, 2, 1}, labels, isZero),
            9);  // z 4 and y 32-36 only: inner (0, 0, *) of 2 × 2 × 3
}

// zarr.json: the shards as the chunk grid, one sharding_indexed codec with the inner chunks, the
// writer's inner codecs, a little-endian index with crc32c at the end; each level's shards are
// its whole inner chunks at most, and still a multiple of them.
TEST(ZarrShardWriter, MetadataDescribesTheShardsOfEveryLevel) {
  test::TempDir dir;
  const std::string path = dir.file("m.ome.zarr");
  const std::vector<float> values = shardTestValues<float>(1.5f, 2.5f);
  writeStack(path, values.data(), kShape[0], kShape[1], kShape[2], shardedOptions(4));
  const Shape3 expectedShards[4] = {{4, 16, 24}, {4, 16, 24}, {4, 16, 16}, {4, 5, 7}};
  const Shape3 expectedChunks[4] = {{2, 8, 8}, {2, 8, 8}, {2, 8, 8}, {2, 5, 7}};
  for (int level = 0; level < 4; ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    const Json a = Json::parse(test::readBytes(path + "/" + std::to_string(level) + "/zarr.json"));
    const auto shape = a["shape"].get<std::vector<int64_t>>();
    const Shape3 shards = a["chunk_grid"]["configuration"]["chunk_shape"].get<Shape3>();
    EXPECT_EQ(shards, expectedShards[level]);
    ASSERT_EQ(a["codecs"].size(), 1u);
    const Json& s = a["codecs"][0];
    EXPECT_EQ(s["name"], "sharding_indexed");
    const Json& c = s["configuration"];
    const Shape3 inner = c["chunk_shape"].get<Shape3>();
    EXPECT_EQ(inner, expectedChunks[level]);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(shards[i] % inner[i], 0);
      EXPECT_LT(shards[i] - inner[i], shape[i]);  // no more than the level's whole inner chunks
    }
    EXPECT_EQ(c["codecs"][0]["name"], "bytes");
    EXPECT_EQ(c["codecs"][1]["name"], "blosc");
    EXPECT_EQ(c["index_codecs"],
              Json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}},
                              {"name": "crc32c"}])"));
    EXPECT_EQ(c["index_location"], "end");
    OpenOptions open;
    open.hdu = level;
    EXPECT_EQ(openStack(path, open)->info().y, shape[1]);
  }
  // Level 1 reads back as the 2 × 2 mean: the writer's rule (io/zarr_pyramid.h), a double sum
  // in the same order rounded once to float32, so equal to the bit.
  OpenOptions level1;
  level1.hdu = 1;
  const auto reader = openStack(path, level1);
  const std::vector<float> read = test::readAll(*reader);
  const int64_t y = kShape[1], x = kShape[2], oy = (y + 1) / 2, ox = (x + 1) / 2;
  for (int64_t k = 0; k < kShape[0]; ++k)
    for (int64_t r = 0; r < oy; ++r)
      for (int64_t c = 0; c < ox; ++c) {
        double sum = 0;
        int n = 0;
        for (int64_t yy = 2 * r; yy < std::min(y, 2 * r + 2); ++yy)
          for (int64_t xx = 2 * c; xx < std::min(x, 2 * c + 2); ++xx)
            sum += values[size_t((k * y + yy) * x + xx)], ++n;
        ASSERT_EQ(read[size_t((k * oy + r) * ox + c)], float(sum / n)) << k << " " << r << " " << c;
      }
}

TEST(ZarrShardWriter, BadShardsAreRefusedNamingTheOutput) {
  test::TempDir dir;
  const std::vector<float> values(size_t(kShape[0] * kShape[1] * kShape[2]), 1.0f);
  auto refused = [&](WriteOptions o, const std::string& part) {
    const std::string path = dir.file("bad.zarr");
    try {
      writeStack(path, values.data(), kShape[0], kShape[1], kShape[2], o);
      ADD_FAILURE() << "accepted, expected: " << part;
    } catch (const IoError& e) {
      EXPECT_TRUE(test::contains(e.what(), "bad.zarr")) << e.what();
      EXPECT_TRUE(test::contains(e.what(), part)) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path));
  };
  WriteOptions v04 = shardedOptions();
  v04.zarr.omeVersion = "0.4";
  refused(v04, "OME-Zarr 0.5 only");
  WriteOptions notMultiple = shardedOptions();
  notMultiple.zarr.shards = {4, 12, 24};  // 12 is no multiple of 8, and less than 37
  refused(notMultiple, "not whole numbers of the chunks 2,8,8");
  // A shard of the shape or more is clipped to the shape's whole chunks, as chunks are.
  WriteOptions large = shardedOptions();
  large.zarr.shards = {6, 100, 1000};
  const std::string path = dir.file("large.zarr");
  writeStack(path, values.data(), kShape[0], kShape[1], kShape[2], large);
  const Json a = Json::parse(test::readBytes(path + "/0/zarr.json"));
  EXPECT_EQ(a["chunk_grid"]["configuration"]["chunk_shape"], Json::parse("[6, 40, 56]"));
  EXPECT_TRUE(test::sameValues(values, test::readAll(*openStack(path))));
}

// Dask workers: each box of whole shards is written by the process that computed it into the
// prepared folder; the committed output equals the input. A box on the chunk grid but cutting a
// shard is refused, naming the shard.
TEST(ZarrShardWriter, OtherProcessesWriteWholeShards) {
  test::TempDir dir;
  const std::string path = dir.file("p.ome.zarr");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> values = shardTestValues<float>(nan, nan);
  StackBlockWriter writer(path, kShape[0], kShape[1], kShape[2], shardedOptions(2),
                          BoxWriters::OtherProcesses);
  const PreparedBlockFile f = writer.prepared();
  EXPECT_EQ(f.zarrShards, kShards);
  auto box = [&](int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
    std::vector<float> b;
    for (int64_t k = z0; k < z1; ++k)
      for (int64_t r = y0; r < y1; ++r)
        for (int64_t c = x0; c < x1; ++c)
          b.push_back(values[size_t((k * kShape[1] + r) * kShape[2] + c)]);
    writeBoxIntoPreparedFile(f, z0, z1, y0, y1, x0, x1, b.data());
  };
  try {
    box(0, 4, 16, 24, 24, 48);  // whole inner chunks, half of shard (0, 1, 1)
    ADD_FAILURE() << "a box cutting a shard was accepted";
  } catch (const IoError& e) {
    EXPECT_TRUE(test::contains(e.what(), "shard c/0/1/1")) << e.what();
    EXPECT_TRUE(test::contains(e.what(), "p.ome.zarr")) << e.what();
  }
  // Two shards along x per box, every z and y shard.
  for (int64_t z0 = 0; z0 < kShape[0]; z0 += kShards[0])
    for (int64_t y0 = 0; y0 < kShape[1]; y0 += kShards[1])
      for (int64_t x0 = 0; x0 < kShape[2]; x0 += 2 * kShards[2])
        box(z0, std::min(kShape[0], z0 + kShards[0]), y0, std::min(kShape[1], y0 + kShards[1]), x0,
            std::min(kShape[2], x0 + 2 * kShards[2]));
  writer.commit();
  EXPECT_TRUE(test::sameValues(values, test::readAll(*openStack(path))));
  EXPECT_FALSE(std::filesystem::exists(shardFile(path, 0, {0, 0, 0})));
  EXPECT_TRUE(std::filesystem::exists(shardFile(path, 1, {0, 0, 0})));  // level 1: 19 × 27
}

// Slabs of slices from several threads with a pending limit so small that every incomplete
// shard goes to a scratch file and back, as a streaming command writes: the same result.
TEST(ZarrShardWriter, SlabsOfSlicesWithPartialShardsSetAside) {
  test::TempDir dir;
  const std::string path = dir.file("s.zarr");
  const std::vector<float> values = shardTestValues<float>(3.0f, 4.0f);
  WriteOptions o = shardedOptions();
  o.zarr.pendingBytes = 1;
  StackBlockWriter writer(path, kShape[0], kShape[1], kShape[2], o);
  const int64_t plane = kShape[1] * kShape[2];
  for (int64_t z0 = 0; z0 < kShape[0]; ++z0)  // one slice at a time: every shard waits
    writer.writeBox(z0, z0 + 1, 0, kShape[1], 0, kShape[2], values.data() + z0 * plane);
  writer.commit();
  EXPECT_TRUE(test::sameValues(values, test::readAll(*openStack(path))));
}

}  // namespace
}  // namespace stacklens::io
