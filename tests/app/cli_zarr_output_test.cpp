// stacklens-cli writing OME-Zarr (OUT.zarr): convert for both versions with levels, a streamed
// command, labels, sharded 0.5 outputs, the options' usage errors and help, and a failed run
// leaving an existing output as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "temp_folder_test.h"

namespace {

using stacklens::io::OpenOptions;
using stacklens::io::openStack;

class CliZarrOutput : public stacklens::testing::TempFolderTest {
 protected:
  CliZarrOutput() : TempFolderTest("stacklens_cli_zarr_output_") {}
  void SetUp() override {
    TempFolderTest::SetUp();
    values_.resize(size_t(z_ * y_ * x_));
    for (size_t i = 0; i < values_.size(); ++i) values_[i] = std::sin(float(i) * 0.01f) * 50.0f;
    values_[7] = std::numeric_limits<float>::quiet_NaN();
    stacklens::io::WriteOptions o;
    o.spacing = {0.3, 0.1, 0.1};
    o.units = {"um", "um", "um"};
    o.spacingKnown = true;
    stacklens::io::writeStack(path("in.fits"), values_.data(), z_, y_, x_, o);
  }

  std::vector<float> readAll(const std::string& p, int level = 0) const {
    OpenOptions open;
    open.hdu = level;
    const auto reader = openStack(p, open);
    const auto& info = reader->info();
    std::vector<float> out(size_t(info.z * info.y * info.x));
    for (int64_t k = 0; k < info.z; ++k) reader->readSlice(k, out.data() + k * info.y * info.x);
    return out;
  }

  static std::string readText(const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  static bool same(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
    return true;
  }

  const int64_t z_ = 6, y_ = 41, x_ = 43;
  std::vector<float> values_;
};

// convert copies float32 values without arithmetic, through a lossless codec: the output holds
// exactly the input's values, whichever process wrote them.
TEST_F(CliZarrOutput, ConvertWritesEitherVersionWithLevels) {
  for (const std::string version : {"0.4", "0.5"}) {
    SCOPED_TRACE(version);
    const std::string out = path("out" + version + ".ome.zarr");
    const CliResult r = runCli("convert " + path("in.fits") + " " + out + " --zarr-version " +
                               version + " --zarr-chunks 4,16,16 --levels 3");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(std::filesystem::exists(out + (version == "0.4" ? "/.zattrs" : "/zarr.json")));
    EXPECT_TRUE(same(values_, readAll(out)));
    const auto level2 = openStack(out, OpenOptions{2, 0});
    EXPECT_EQ(level2->info().y, 11);
    EXPECT_EQ(level2->info().x, 11);
    EXPECT_NEAR(level2->info().spacing[2], 0.4, 1e-12);
    const CliResult info = runCli("info " + out);
    EXPECT_NE(info.out.find("\"format\": \"zarr\""), std::string::npos) << info.out;
  }
}

// A command that streams its output slab by slab (a stack larger than its memory budget) writes
// into a .zarr what it writes into a .fits. The two runs are separate processes, so the values
// are compared to a tolerance rather than bit for bit.
TEST_F(CliZarrOutput, StreamedBlurWritesZarrAsItWritesFits) {
  const int64_t z = 24, y = 128, x = 128;  // 1.5 MiB of float32 against a 1 MiB budget
  std::vector<float> big(size_t(z * y * x));
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i % 977) * 0.5f;
  stacklens::io::writeStack(path("big.fits"), big.data(), z, y, x, {});
  for (const std::string out : {"b.fits", "b.zarr"}) {
    const CliResult r = runCli("blur " + path("big.fits") + " " + path(out) +
                               " --sigma 1.5 --backend cpu --ram-budget-mb 1");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("streaming:"), std::string::npos) << r.out;
  }
  const std::vector<float> fits = readAll(path("b.fits")), zarr = readAll(path("b.zarr"));
  ASSERT_EQ(fits.size(), zarr.size());
  for (size_t i = 0; i < fits.size(); ++i)
    ASSERT_NEAR(fits[i], zarr[i], 1e-5f * (1.0f + std::fabs(fits[i]))) << i;
}

TEST_F(CliZarrOutput, SegmentWritesLabels) {
  const CliResult r =
      runCli("segment " + path("in.fits") + " " + path("l.zarr") + " --threshold 20 --backend cpu");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(openStack(path("l.zarr"))->info().dtype, stacklens::io::DType::Int32);
}

// --zarr-shards: convert and a streamed command write sharded 0.5 outputs (a file per shard, the
// pyramid sharded too) holding the input's values.
TEST_F(CliZarrOutput, ZarrShardsWritesOneFilePerShard) {
  const std::string out = path("s.ome.zarr");
  CliResult r = runCli("convert " + path("in.fits") + " " + out +
                       " --zarr-chunks 2,8,8 --zarr-shards 4,16,32 --levels 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(same(values_, readAll(out)));
  // 6 x 41 x 43 in shards of 4 x 16 x 32: 2 x 3 x 2 files, none all fill.
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(out + "/0/c"))
    files += e.is_regular_file();
  EXPECT_EQ(files, 12);
  for (const char* level : {"/0/zarr.json", "/1/zarr.json"}) {
    const std::string meta = readText(out + level);
    EXPECT_NE(meta.find("sharding_indexed"), std::string::npos) << level;
  }
  r = runCli("blur " + path("in.fits") + " " + path("b.zarr") +
             " --sigma 1 --backend cpu --zarr-shards 32,64,64");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(openStack(path("b.zarr"))->info().z, z_);
  EXPECT_NE(readText(path("b.zarr/0/zarr.json")).find("sharding_indexed"), std::string::npos);
}

TEST_F(CliZarrOutput, ZarrShardsErrorsNameTheOption) {
  const std::string in = path("in.fits");
  CliResult r =
      runCli("convert " + in + " " + path("o.zarr") + " --zarr-version 0.4 --zarr-shards 4,16,16");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--zarr-shards"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.5"), std::string::npos) << r.out;
  r = runCli("convert " + in + " " + path("o.zarr") + " --zarr-chunks 2,8,8 --zarr-shards 4,12,16");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--zarr-shards: each size must be a multiple of --zarr-chunks"),
            std::string::npos)
      << r.out;
  r = runCli("convert " + in + " " + path("o.zarr") + " --zarr-shards 4,16");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--zarr-shards: expected Z,Y,X"), std::string::npos) << r.out;
  r = runCli("convert " + in + " " + path("o.fits") + " --zarr-shards 4,16,16");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--zarr-shards applies to a .zarr output"), std::string::npos) << r.out;
  // Against the default chunks (16,256,256 clipped to 6,41,43) the writer checks: 4 is not whole
  // chunks of 6 along z.
  r = runCli("convert " + in + " " + path("o.zarr") + " --zarr-shards 4,64,64");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("shards of 4,64,64 are not whole numbers of the chunks"), std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(path("o.zarr")));
  for (const std::string command : {"convert", "blur", "deconvolve", "psf", "project"}) {
    r = runCli(command + " --help");
    EXPECT_NE(r.out.find("--zarr-shards"), std::string::npos) << command << ": " << r.out;
  }
}

TEST_F(CliZarrOutput, OptionsAreCheckedAndDocumented) {
  const std::string in = path("in.fits");
  CliResult r = runCli("convert " + in + " " + path("o.fits") + " --levels 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--levels applies to a .zarr output"), std::string::npos) << r.out;
  r = runCli("convert " + in + " " + path("o.zarr") + " --zarr-version 0.3");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("expected 0.4 or 0.5"), std::string::npos) << r.out;
  r = runCli("convert " + in + " " + path("o.zarr") + " --zarr-chunks 4,16");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("Z,Y,X"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(path("o.zarr")));
  for (const std::string command : {"convert", "blur", "deconvolve", "psf", "project"}) {
    r = runCli(command + " --help");
    EXPECT_NE(r.out.find("--zarr-version"), std::string::npos) << command << ": " << r.out;
    EXPECT_NE(r.out.find("--levels"), std::string::npos) << command;
  }
}

// A run that fails leaves an existing output as it was, and no temporary folder.
TEST_F(CliZarrOutput, AFailedRunLeavesTheOldOutput) {
  const std::string out = path("keep.zarr");
  ASSERT_EQ(runCli("convert " + path("in.fits") + " " + out).code, 0);
  const CliResult r = runCli("convert " + path("in.fits") + " " + out + " --levels 12");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("keep.zarr"), std::string::npos) << r.out;
  EXPECT_TRUE(same(values_, readAll(out)));
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".keep.zarr.tmp"), std::string::npos) << e.path();
}

}  // namespace
