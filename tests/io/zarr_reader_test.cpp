// ZarrReader against values written by independent writers: python3-zarr 2.13 (v2, at test time)
// and NumPy/numcodecs by hand (v3 and sharding, committed fixtures); OME-Zarr axes, spacing,
// levels and channel hints; boxes across chunk edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "io/stack.h"
#include "io/zarr_reader.h"
#include "test_support.h"
#include "zarr_support.h"

namespace stacklens::io {
namespace {

using test::ZarrCase;

using test::kZarrV3;

// Every plane of every slice equals the expected values.
void checkCase(const std::string& folder, const ZarrCase& c) {
  SCOPED_TRACE(c.name);
  int level = 0;
  const std::string path = test::zarrFolderOf(folder, c, level);
  const std::vector<float> expected = test::readF32(folder + "/" + c.name + ".f32");
  ASSERT_EQ(int64_t(expected.size()), c.planes * c.z * c.y * c.x);
  for (int p = 0; p < c.planes; ++p) {
    SCOPED_TRACE("plane " + std::to_string(p));
    const auto reader = openStack(path, OpenOptions{level, p});
    const StackInfo& info = reader->info();
    EXPECT_EQ(info.format, "zarr");
    ASSERT_EQ(info.planes, c.planes);
    ASSERT_EQ(info.z, c.z);
    ASSERT_EQ(info.y, c.y);
    ASSERT_EQ(info.x, c.x);
    const size_t n = size_t(c.z * c.y * c.x);
    const std::vector<float> want(expected.begin() + p * n, expected.begin() + (p + 1) * n);
    EXPECT_TRUE(test::sameValues(want, test::readAll(*reader)));
  }
}

TEST(ZarrV2, EveryArrayMatchesZarrPython) {
  const auto& arrays = test::ZarrV2Arrays::get();
  ASSERT_EQ(arrays.failure(), "");
  const auto cases = test::readZarrManifest(arrays.folder());
  ASSERT_EQ(cases.size(), 21u);
  for (const ZarrCase& c : cases) checkCase(arrays.folder(), c);
}

TEST(ZarrV3, EveryFixtureMatchesNumpy) {
  const auto cases = test::readZarrManifest(kZarrV3);
  ASSERT_EQ(cases.size(), 13u);
  for (const ZarrCase& c : cases) checkCase(kZarrV3, c);
}

// Boxes that start and end inside chunks, across chunk and shard edges, on four threads' worth
// of chunks: each equals the same part of the whole slice.
void checkBoxes(const std::string& path, const std::vector<float>& expected) {
  const auto reader = openStack(path);
  const StackInfo& i = reader->info();
  const int64_t n = i.y * i.x;
  const int64_t boxes[][4] = {{0, i.y, 0, i.x},
                              {1, 2, 3, 4},
                              {3, i.y - 1, 2, i.x - 3},
                              {i.y - 1, i.y, 0, i.x},
                              {0, i.y, i.x - 1, i.x}};
  for (int64_t z = 0; z < i.z; ++z)
    for (const auto& b : boxes) {
      SCOPED_TRACE("z " + std::to_string(z) + " box " + std::to_string(b[0]) + ".." +
                   std::to_string(b[1]) + " × " + std::to_string(b[2]) + ".." +
                   std::to_string(b[3]));
      std::vector<float> got(size_t((b[1] - b[0]) * (b[3] - b[2])));
      reader->readBox(z, b[0], b[1], b[2], b[3], got.data());
      std::vector<float> want;
      for (int64_t y = b[0]; y < b[1]; ++y)
        for (int64_t x = b[2]; x < b[3]; ++x) want.push_back(expected[size_t(z * n + y * i.x + x)]);
      EXPECT_TRUE(test::sameValues(want, got));
      std::vector<float> rows(size_t((b[1] - b[0]) * i.x));
      reader->readRows(z, b[0], b[1], rows.data());
      EXPECT_TRUE(test::sameValues(std::vector<float>(expected.begin() + z * n + b[0] * i.x,
                                                      expected.begin() + z * n + b[1] * i.x),
                                   rows));
    }
}

TEST(ZarrBoxes, BoxesAndRowsMatchTheSliceAcrossChunkAndShardEdges) {
  checkBoxes(kZarrV3 + "/sharded_u2.zarr", test::readF32(kZarrV3 + "/sharded_u2.f32"));
  checkBoxes(kZarrV3 + "/transpose_be_i2.zarr", test::readF32(kZarrV3 + "/transpose_be_i2.f32"));
  const auto& arrays = test::ZarrV2Arrays::get();
  ASSERT_EQ(arrays.failure(), "");
  checkBoxes(arrays.folder() + "/zstd_i2_F.zarr",
             test::readF32(arrays.folder() + "/zstd_i2_F.f32"));
  checkBoxes(arrays.folder() + "/blosc_f4.zarr", test::readF32(arrays.folder() + "/blosc_f4.f32"));
}

// Chunks are converted from their stored type straight into the box read: every type, both byte
// orders, C and F order (strided rows), missing chunks (the fill value) and sharded inner chunks,
// each box starting and ending inside chunks.
TEST(ZarrBoxes, BoxesOfEveryTypeOrderAndFillMatchTheSlice) {
  const auto& arrays = test::ZarrV2Arrays::get();
  ASSERT_EQ(arrays.failure(), "");
  int checked = 0;
  for (const std::string& folder : {arrays.folder(), kZarrV3})
    for (const ZarrCase& c : test::readZarrManifest(folder)) {
      int level = 0;
      const std::string path = test::zarrFolderOf(folder, c, level);
      // checkBoxes reads plane 0 of level 0, boxes need 5 rows and 6 columns.
      if (c.planes != 1 || level != 0 || c.y < 5 || c.x < 6) continue;
      SCOPED_TRACE(c.name);
      checkBoxes(path, test::readF32(folder + "/" + c.name + ".f32"));
      ++checked;
    }
  EXPECT_GE(checked, 25);  // the types, orders and fills listed above, not a few of them
}

TEST(OmeZarr, V04SpacingUnitsLevelsAndChannelHints) {
  const auto& arrays = test::ZarrV2Arrays::get();
  ASSERT_EQ(arrays.failure(), "");
  const std::string path = arrays.folder() + "/ome04.zarr";
  const auto reader = openStack(path);
  const StackInfo& info = reader->info();
  EXPECT_EQ(info.dtype, DType::UInt16);
  EXPECT_EQ(info.planes, 2);  // c
  ASSERT_TRUE(info.spacingKnown);
  EXPECT_DOUBLE_EQ(info.spacing[0], 0.5);
  EXPECT_DOUBLE_EQ(info.spacing[1], 0.2);
  EXPECT_DOUBLE_EQ(info.spacing[2], 0.25);
  EXPECT_EQ(info.units[0], "micron");
  EXPECT_EQ(info.units[2], "micron");
  ASSERT_EQ(info.hdus.size(), 2u);
  EXPECT_EQ(info.hdus[1].axes, (std::vector<int64_t>{5, 6, 4, 2}));  // x first
  const auto* card = test::findCard(info, "OMERO_CHANNEL_0");
  ASSERT_NE(card, nullptr);
  EXPECT_NE(card->value.find("label=DAPI color=0000FF window=10..900"), std::string::npos)
      << card->value;
  const auto* zarr = dynamic_cast<const ZarrReader*>(reader.get());
  ASSERT_NE(zarr, nullptr);
  ASSERT_EQ(zarr->channels().size(), 2u);
  EXPECT_EQ(zarr->channels()[1].label, "GFP");
  EXPECT_EQ(zarr->channels()[1].color, "00FF00");
  EXPECT_DOUBLE_EQ(zarr->channels()[1].end, 4000);
  EXPECT_FALSE(zarr->channels()[1].active);
  const auto level1 = openStack(path, OpenOptions{1, 0});
  EXPECT_DOUBLE_EQ(level1->info().spacing[1], 0.4);
  EXPECT_EQ(level1->info().hdu, 1);
}

TEST(OmeZarr, V05TimeChannelPlanesAndMultipliedScales) {
  const auto reader = openStack(kZarrV3 + "/ome05.zarr", OpenOptions{-1, 3});
  const StackInfo& info = reader->info();
  EXPECT_EQ(info.planes, 4);  // c + 2·t
  EXPECT_EQ(info.plane, 3);
  EXPECT_EQ(info.z, 3);
  ASSERT_TRUE(info.spacingKnown);
  EXPECT_DOUBLE_EQ(info.spacing[0], 1.5);  // 0.75 × the multiscale's own 2
  EXPECT_DOUBLE_EQ(info.spacing[1], 0.5);
  EXPECT_EQ(info.units[1], "micron");
  const auto* version = test::findCard(info, "OME_VERSION");
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version->value, "0.5");
  const auto* zarr = dynamic_cast<const ZarrReader*>(reader.get());
  ASSERT_NE(zarr, nullptr);
  ASSERT_EQ(zarr->channels().size(), 2u);
  EXPECT_EQ(zarr->channels()[0].label, "membrane");
  EXPECT_DOUBLE_EQ(zarr->channels()[0].start, 100);
}

// A plain array (no OME metadata): the third axis from the end is z, the others are planes.
TEST(ZarrOpen, APlainArrayShowsTheThirdAxisFromTheEndAsZ) {
  const auto plain = openStack(kZarrV3 + "/ome05.zarr/s1");
  EXPECT_EQ(plain->info().z, 3);
  EXPECT_EQ(plain->info().planes, 4);  // c fastest, then t
  EXPECT_FALSE(plain->info().spacingKnown);
}

// A time series whose z has one slice: t becomes the slider axis, as for TIFF hyperstacks.
TEST(OmeZarr, TimeIsTheSliderAxisWhenZHasOneSlice) {
  test::TempDir dir;
  const std::string root = dir.file("t.zarr");
  std::filesystem::create_directories(root + "/0");
  test::writeBytes(root + "/.zattrs", R"({"multiscales": [{"version": "0.4", "axes": [
      {"name": "t", "type": "time"}, {"name": "z", "type": "space"},
      {"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
      "datasets": [{"path": "0"}]}]})");
  test::writeBytes(root + "/0/.zarray", R"({"zarr_format": 2, "shape": [3, 1, 2, 2],
      "chunks": [3, 1, 2, 2], "dtype": "|u1", "compressor": null, "fill_value": 0,
      "filters": null, "order": "C"})");
  test::writeBytes(root + "/0/0.0.0.0",
                   std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b", 12));
  const auto reader = openStack(root);
  EXPECT_EQ(reader->info().z, 3);
  EXPECT_EQ(reader->info().planes, 1);
  EXPECT_FALSE(reader->info().spacingKnown);  // no scale given
  const std::vector<float> all = test::readAll(*reader);
  EXPECT_TRUE(test::sameValues({8, 9, 10, 11}, std::vector<float>(all.begin() + 8, all.end())));
}

TEST(ZarrOpen, AMetadataFileOrATrailingSlashOpensTheFolder) {
  for (const std::string& path : {kZarrV3 + "/zstd_f4.zarr/zarr.json", kZarrV3 + "/zstd_f4.zarr/",
                                  kZarrV3 + "/ome05.zarr/zarr.json"}) {
    SCOPED_TRACE(path);
    const auto reader = openStack(path);
    EXPECT_EQ(reader->info().format, "zarr");
    EXPECT_EQ(reader->info().path.back(), 'r');  // ".zarr", without the slash or file
  }
}

// Reads from many threads at once see the same values as one read (the chunk cache is shared).
TEST(ZarrOpen, ConcurrentSliceReadsAgree) {
  const auto reader = openStack(kZarrV3 + "/sharded_u2.zarr");
  const std::vector<float> expected = test::readF32(kZarrV3 + "/sharded_u2.f32");
  const StackInfo& i = reader->info();
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::vector<float> slice(size_t(i.y * i.x));
      bool same = true;
      for (int round = 0; round < 20; ++round) {
        const int64_t z = (t + round) % i.z;
        reader->readSlice(z, slice.data());
        same = same && std::equal(slice.begin(), slice.end(), expected.begin() + z * i.y * i.x);
      }
      ok[size_t(t)] = same;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, std::vector<int>(8, 1));
}

}  // namespace
}  // namespace stacklens::io
