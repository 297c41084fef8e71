// stacklens-cli on Zarr folders: info describes an OME-Zarr image; convert and median read it
// through the same reader as FITS and TIFF; a damaged chunk is exit 3 naming the chunk.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../app/cli_runner.h"
#include "io/stack.h"
#include "test_support.h"
#include "zarr_support.h"

namespace stacklens::io {
namespace {

using test::kZarrV3;

TEST(ZarrCli, InfoDescribesAnOmeZarrImage) {
  const CliResult r = runCliSeparately("info " + kZarrV3 + "/ome05.zarr --plane 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(test::contains(r.out, "\"format\": \"zarr\"")) << r.out;
  EXPECT_TRUE(test::contains(r.out, "\"shape\": [3, 8, 9], \"dtype\": \"uint16\"")) << r.out;
  EXPECT_TRUE(test::contains(r.out, "\"planes\": 4, \"plane\": 2")) << r.out;
  EXPECT_TRUE(test::contains(r.out,
                             "{\"index\": 1, \"name\": \"s1\", \"type\": \"zarr array (level 1)\", "
                             "\"shape\": [2, 2, 3, 4, 5]}"))
      << r.out;
  EXPECT_TRUE(test::contains(r.out, "\"spacing\": [1.5, 0.5, 0.5]")) << r.out;
  EXPECT_TRUE(test::contains(r.out, "\"units\": [\"micron\", \"micron\", \"micron\"]")) << r.out;
}

// Every plane converted to FITS holds the values NumPy wrote.
TEST(ZarrCli, ConvertToFitsKeepsEveryPlane) {
  test::TempDir dir;
  const std::vector<float> expected = test::readF32(kZarrV3 + "/ome05.f32");
  const size_t n = 3 * 8 * 9;
  for (int plane = 0; plane < 4; ++plane) {
    SCOPED_TRACE(plane);
    const std::string out = dir.file("p" + std::to_string(plane) + ".fits");
    const CliResult r = runCliSeparately("convert " + kZarrV3 + "/ome05.zarr " + out + " --plane " +
                                         std::to_string(plane));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto fits = openStack(out);
    EXPECT_EQ(fits->info().format, "fits");
    EXPECT_TRUE(test::sameValues(
        std::vector<float>(expected.begin() + plane * n, expected.begin() + (plane + 1) * n),
        test::readAll(*fits)));
  }
}

// A filter reads the Zarr folder as it reads the same data in FITS: the results are equal.
TEST(ZarrCli, MedianOfZarrEqualsMedianOfTheSameFits) {
  test::TempDir dir;
  const std::string zarr = kZarrV3 + "/sharded_u2.zarr";
  ASSERT_EQ(runCliSeparately("convert " + zarr + " " + dir.file("in.fits")).code, 0);
  const CliResult a =
      runCliSeparately("median " + zarr + " " + dir.file("a.fits") + " --size 3 --backend cpu");
  ASSERT_EQ(a.code, 0) << a.err;
  const CliResult b = runCliSeparately("median " + dir.file("in.fits") + " " + dir.file("b.fits") +
                                       " --size 3 --backend cpu");
  ASSERT_EQ(b.code, 0) << b.err;
  const std::vector<float> fromZarr = test::readAll(*openStack(dir.file("a.fits")));
  const std::vector<float> fromFits = test::readAll(*openStack(dir.file("b.fits")));
  EXPECT_TRUE(test::sameValues(fromFits, fromZarr));
  // Not the identity: the filter ran.
  EXPECT_FALSE(test::sameValues(test::readF32(kZarrV3 + "/sharded_u2.f32"), fromZarr));
}

TEST(ZarrCli, ADamagedChunkExitsWithTheChunkKeyAndNoOutput) {
  test::TempDir dir;
  const std::string zarr = dir.file("d.zarr");
  std::filesystem::copy(kZarrV3 + "/zstd_f4.zarr", zarr, std::filesystem::copy_options::recursive);
  test::writeBytes(zarr + "/c/0/1/1", "this is not a zstd frame");
  const CliResult r = runCliSeparately("convert " + zarr + " " + dir.file("out.fits"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_TRUE(test::contains(r.err, "c/0/1/1")) << r.err;
  EXPECT_TRUE(test::contains(r.err, "zstd")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.fits")));
  const CliResult bad = runCliSeparately("info " + dir.file("nothing.zarr"));
  EXPECT_EQ(bad.code, 3);
}

}  // namespace
}  // namespace stacklens::io
