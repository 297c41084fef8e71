// stacklens-cli blur, median, outliers and resample: usage errors, and FITS round trips (skipped
// while the io library cannot yet write or read stacks).
#include <gtest/gtest.h>

#include "cli_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io/stack.h"
#include "io/stack_writer.h"
#include "io/wcs.h"

namespace {

namespace fs = std::filesystem;
using namespace stacklens;

void expectUsageError(const std::string& args, const std::string& mention) {
  CliResult r = runCli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(mention), std::string::npos) << args << "\n" << r.out;
}

TEST(CliFilters, ParameterMistakesAreUsageErrorsNamingTheOption) {
  expectUsageError("blur in.fits out.fits", "--sigma");
  expectUsageError("blur in.fits out.fits --sigma 1,2", "--sigma");
  expectUsageError("blur in.fits out.fits --sigma x", "--sigma");
  expectUsageError("blur in.fits --sigma 1", "IN OUT");
  expectUsageError("median in.fits out.fits", "--size");
  expectUsageError("median in.fits out.fits --size 4", "--size");
  expectUsageError("median in.fits out.fits --size 0", "--size");
  expectUsageError("outliers in.fits out.fits --size 3", "--threshold");
  expectUsageError("outliers in.fits out.fits --size 3 --threshold -1", "--threshold");
  expectUsageError("outliers in.fits out.fits --size 3 --threshold 1 --mode hot", "--mode");
  expectUsageError("resample in.fits out.fits", "--zoom");
  expectUsageError("resample in.fits out.fits --zoom 2 --isotropic", "--isotropic");
  expectUsageError("resample in.fits out.fits --zoom 1,2,3,4", "--zoom");
  expectUsageError("resample in.fits out.fits --zoom 2 --order 2", "--order");
}

// The library checks the parameters (compute/params.h); the command puts its option in front of
// the library's words, before it opens the input.
TEST(CliFilters, ParameterRulesSpeakTheLibrarysWordsAfterTheOption) {
  auto expectMessage = [](const std::string& args, const std::string& message) {
    CliResult r = runCli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("error: " + message + "\n"), std::string::npos) << args << "\n" << r.out;
  };
  expectMessage("median in.fits out.fits --size 4",
                "median: --size: median size must be odd, from 1 to 1001, got 4");
  expectMessage("median in.fits out.fits --size 1003",
                "median: --size: median size must be odd, from 1 to 1001, got 1003");
  expectMessage("outliers in.fits out.fits --size 3 --threshold -1",
                "outliers: --threshold: outlier threshold must be finite and ≥ 0, got -1");
  expectMessage("blur in.fits out.fits --sigma 0,1,0",
                "blur: --sigma: blur sigma on x must be finite and > 0, got 0");
  expectMessage("blur in.fits out.fits --sigma 1 --truncate 0",
                "blur: --truncate: blur truncate must be finite and > 0, got 0");
  expectMessage("resample in.fits out.fits --zoom 2,0 --order 3",
                "resample: --zoom: resample zoom on x must be finite and > 0, got 0");
  expectMessage("median in.fits out.fits --size 99999999999",
                "median: --size: 99999999999 is out of range");
}

TEST(CliFilters, HelpDescribesEachCommand) {
  for (const char* command : {"blur", "median", "outliers", "resample"}) {
    CliResult r = runCli(std::string(command) + " --help");
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_NE(r.out.find("--backend"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--hdu"), std::string::npos) << r.out;
  }
}

// A temporary folder with a 1×9×11 FITS image: 5 everywhere, one hot and one cold pixel.
class CliFiltersRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stacklens_cli_filters_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::vector<float> pixels(9 * 11, 5.0f);
    pixels[4 * 11 + 5] = 100.0f;
    pixels[2 * 11 + 2] = -50.0f;
    try {
      io::writeStack(input(), pixels.data(), 1, 9, 11, io::WriteOptions{});
      io::openStack(input());
    } catch (const io::IoError& e) {
      if (std::string(e.what()).find("not implemented") != std::string::npos)
        GTEST_SKIP() << "io cannot write or read FITS yet: " << e.what();
      throw;
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string input() const { return (dir_ / "in.fits").string(); }
  std::string output() const { return (dir_ / "out.fits").string(); }

  // The output's shape and pixels.
  std::vector<float> readOutput(io::StackInfo& info) const {
    auto reader = io::openStack(output());
    info = reader->info();
    std::vector<float> all(static_cast<size_t>(info.z * info.y * info.x));
    for (int64_t z = 0; z < info.z; ++z) reader->readSlice(z, all.data() + z * info.y * info.x);
    return all;
  }

  bool historyMentions(const io::StackInfo& info, const std::string& text) const {
    for (const auto& card : info.header)
      if ((card.key + " " + card.value + " " + card.comment).find(text) != std::string::npos)
        return true;
    return false;
  }

  fs::path dir_;
};

TEST_F(CliFiltersRoundTrip, MedianRemovesTheSpikesAndRecordsHistory) {
  CliResult r = runCli("median " + input() + " " + output() + " --size 3 --backend cpu");
  ASSERT_EQ(r.code, 0) << r.out;
  io::StackInfo info;
  const std::vector<float> out = readOutput(info);
  ASSERT_EQ(info.y, 9);
  ASSERT_EQ(info.x, 11);
  for (float v : out) EXPECT_EQ(v, 5.0f);
  EXPECT_TRUE(historyMentions(info, "stacklens median size=3"));
}

TEST_F(CliFiltersRoundTrip, OutliersBrightReplacesOnlyTheHotPixel) {
  CliResult r = runCli("outliers " + input() + " " + output() +
                       " --size 3 --threshold 10 --mode bright --backend cpu");
  ASSERT_EQ(r.code, 0) << r.out;
  io::StackInfo info;
  const std::vector<float> out = readOutput(info);
  EXPECT_EQ(out[4 * 11 + 5], 5.0f);
  EXPECT_EQ(out[2 * 11 + 2], -50.0f);
}

TEST_F(CliFiltersRoundTrip, BlurKeepsTheTotalAwayFromTheBorders) {
  CliResult r = runCli("blur " + input() + " " + output() + " --sigma 0.7 --truncate 3 --timings");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"blur\":"), std::string::npos) << r.out;  // the --timings line
  io::StackInfo info;
  const std::vector<float> out = readOutput(info);
  double sum = 0;
  for (float v : out) sum += v;
  // Both spikes are ≥ 2 pixels (the kernel radius) from the edges, so the sum is preserved.
  EXPECT_NEAR(sum, 5.0 * 97 + 100.0 - 50.0, 1e-3);
  EXPECT_LT(out[4 * 11 + 5], 100.0f);
}

TEST_F(CliFiltersRoundTrip, ResampleZoomsYAndXOfASingleSlice) {
  CliResult r = runCli("resample " + input() + " " + output() + " --zoom 2 --order 1");
  ASSERT_EQ(r.code, 0) << r.out;
  io::StackInfo info;
  const std::vector<float> out = readOutput(info);
  EXPECT_EQ(info.z, 1);
  EXPECT_EQ(info.y, 18);
  EXPECT_EQ(info.x, 22);
  EXPECT_EQ(out.front(), 5.0f);
}

// An image takes one factor per axis it has (FY,FX); three are for a stack.
TEST_F(CliFiltersRoundTrip, ResampleTakesTwoFactorsForAnImage) {
  CliResult r = runCli("resample " + input() + " " + output() + " --zoom 2,0.5 --order 1");
  ASSERT_EQ(r.code, 0) << r.out;
  io::StackInfo info;
  readOutput(info);
  EXPECT_EQ(info.z, 1);
  EXPECT_EQ(info.y, 18);
  EXPECT_EQ(info.x, 6);  // round(11 · 0.5) = 6 (ties to even: 5.5 → 6)
  CliResult three = runCli("resample " + input() + " " + output() + " --zoom 2,2,2");
  EXPECT_EQ(three.code, 2) << three.out;
  EXPECT_NE(three.out.find("two (FY,FX) for an image"), std::string::npos) << three.out;
}

TEST_F(CliFiltersRoundTrip, IsotropicNeedsAKnownSpacing) {
  CliResult r = runCli("resample " + input() + " " + output() + " --isotropic");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("spacing"), std::string::npos) << r.out;
}

TEST_F(CliFiltersRoundTrip, InvalidSigmaIsReportedAfterReading) {
  CliResult r = runCli("blur " + input() + " " + output() + " --sigma 0");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("sigma"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(output()));
}

// The resampled HorseHead keeps its sky: output pixel p' sees the sky of input pixel p'·s.
TEST(CliFiltersSharedData, ResampleRescalesTheWcs) {
  const std::string in = std::string(STACKLENS_SHARED_DATA) + "/HorseHead.fits";
  const fs::path out = fs::temp_directory_path() /
                       ("stacklens_cli_filters_wcs_" + std::to_string(::getpid()) + ".fits");
  CliResult r = runCli("resample " + in + " " + out.string() + " --zoom 1,0.37,1.3 --backend cpu");
  ASSERT_EQ(r.code, 0) << r.out;
  auto before = io::openStack(in);
  auto after = io::openStack(out.string());
  fs::remove(out);
  const io::StackInfo &a = before->info(), &b = after->info();
  ASSERT_EQ(b.y, 330);  // round(893·0.37) = 330, round(891·1.3) = 1158
  ASSERT_EQ(b.x, 1158);
  ASSERT_TRUE(before->wcs() && after->wcs());
  const double sy = double(a.y - 1) / double(b.y - 1), sx = double(a.x - 1) / double(b.x - 1);
  for (auto [x, y] : {std::pair{0.0, 0.0}, {100.0, 200.0}, {1157.0, 329.0}, {640.5, 17.25}}) {
    const std::vector<double> want = before->wcs()->pixelToWorld(x * sx, y * sy, 0);
    const std::vector<double> got = after->wcs()->pixelToWorld(x, y, 0);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << x << "," << y;
  }
}

}  // namespace
