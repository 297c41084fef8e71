// stacklens-cli project and moments: results against column-by-column references computed here,
// bands of rows (a small --ram-budget-mb) giving the same image, the WCS and BUNIT of the output,
// and the usage errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "temp_folder_test.h"

namespace {

namespace fs = std::filesystem;
namespace io = stacklens::io;

class CliAlongZ : public stacklens::testing::TempFolderTest {
 protected:
  CliAlongZ() : TempFolderTest("stacklens_cli_along_z_") {}
  static constexpr int64_t kZ = 24, kY = 40, kX = 30;

  void SetUp() override {
    TempFolderTest::SetUp();
    // A radio-style cube: a Gaussian line per pixel (centre moving with x) over noise, a few
    // NaN voxels; 24 channels of 5 km/s in m/s, the reference at channel 12 (1-based) = 100 km/s.
    std::mt19937 rng(3);
    std::normal_distribution<float> noise(0.f, 0.01f);
    cube_.resize(size_t(kZ * kY * kX));
    for (int64_t z = 0; z < kZ; ++z)
      for (int64_t y = 0; y < kY; ++y)
        for (int64_t x = 0; x < kX; ++x) {
          const double v = velocity(z), centre = 80.0 + double(x);
          cube_[size_t((z * kY + y) * kX + x)] =
              float(2.0 * std::exp(-(v - centre) * (v - centre) / (2 * 12.0 * 12.0))) + noise(rng);
        }
    for (int i = 0; i < 40; ++i) cube_[size_t(rng() % cube_.size())] = NAN;
    io::WriteOptions o;
    o.header = {
        {"BUNIT", "'Jy/beam'", ""}, {"CTYPE1", "'RA---SIN'", ""}, {"CTYPE2", "'DEC--SIN'", ""},
        {"CTYPE3", "'VRAD'", ""},   {"CRPIX1", "15.0", ""},       {"CRPIX2", "20.0", ""},
        {"CRPIX3", "12.0", ""},     {"CRVAL1", "180.0", ""},      {"CRVAL2", "-30.0", ""},
        {"CRVAL3", "100000.0", ""}, {"CDELT1", "-0.001", ""},     {"CDELT2", "0.001", ""},
        {"CDELT3", "5000.0", ""},   {"CUNIT3", "'m/s'", ""},      {"CUNIT1", "'deg'", ""},
        {"CUNIT2", "'deg'", ""}};
    in_ = path("cube.fits");
    io::writeStack(in_, cube_.data(), kZ, kY, kX, o);
  }

  static double velocity(int64_t z) { return 100.0 + 5.0 * double(z + 1 - 12); }  // km/s
  float at(int64_t z, int64_t y, int64_t x) const { return cube_[size_t((z * kY + y) * kX + x)]; }

  std::vector<float> read(const std::string& file, io::StackInfo* info = nullptr) const {
    auto r = io::openStack(file, {});
    EXPECT_EQ(r->info().z, 1);
    std::vector<float> v(size_t(r->info().y * r->info().x));
    r->readSlice(0, v.data());
    if (info) *info = r->info();
    return v;
  }
  static std::string card(const io::StackInfo& info, const std::string& key) {
    for (const auto& c : info.header)
      if (c.key == key) return c.value;
    return "";
  }

  std::string in_;
  std::vector<float> cube_;
};

TEST_F(CliAlongZ, ProjectionsMatchAReferenceAndBandsChangeNothing) {
  for (const char* op : {"max", "min", "mean", "sum", "std", "median"}) {
    CliResult r = runCli("project " + in_ + " " + path("p.fits") + " --backend cpu --op " + op +
                         " --first 3 --last 17");
    ASSERT_EQ(r.code, 0) << r.out;
    const std::vector<float> got = read(path("p.fits"));
    for (int64_t y = 0; y < kY; y += 7)
      for (int64_t x = 0; x < kX; x += 5) {
        std::vector<double> v;
        for (int64_t z = 3; z <= 17; ++z)
          if (!std::isnan(at(z, y, x))) v.push_back(at(z, y, x));
        std::sort(v.begin(), v.end());
        double sum = 0, s2 = 0;
        for (double a : v) sum += a;
        for (double a : v) s2 += (a - sum / double(v.size())) * (a - sum / double(v.size()));
        const size_t n = v.size();
        const std::string o = op;
        const double want = o == "max"    ? v.back()
                            : o == "min"  ? v.front()
                            : o == "mean" ? sum / double(n)
                            : o == "sum"  ? sum
                            : o == "std"  ? std::sqrt(s2 / double(n))
                            : n % 2       ? v[n / 2]
                                          : (v[n / 2 - 1] + v[n / 2]) / 2;
        EXPECT_NEAR(got[size_t(y * kX + x)], want, 1e-5) << op << " at " << y << "," << x;
      }
    // One row per band: the same image.
    r = runCli("project " + in_ + " " + path("bands.fits") + " --backend cpu --op " + op +
               " --first 3 --last 17 --ram-budget-mb 0 --timings");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("\"bands\": 40"), std::string::npos) << r.out;
    EXPECT_EQ(read(path("bands.fits")), got) << op;
  }
}

TEST_F(CliAlongZ, MomentsAreInKmPerSecondWithTheWcsKept) {
  // Against CASA's formulas over each column's voxels above the clip (channels 5 km/s wide),
  // and moment 1 near each line's centre (the clip cuts the line's wings a little unevenly).
  io::StackInfo info;
  for (int order : {0, 1, 2}) {
    const std::string out = path("m" + std::to_string(order) + ".fits");
    CliResult r = runCli("moments " + in_ + " " + out + " --backend cpu --clip 0.05 --order " +
                         std::to_string(order));
    ASSERT_EQ(r.code, 0) << r.out;
    const std::vector<float> m = read(out, &info);
    for (int64_t y = 0; y < kY; y += 9)
      for (int64_t x = 0; x < kX; x += 3) {
        double w = 0, wv = 0, spread = 0;
        for (int64_t z = 0; z < kZ; ++z)
          if (at(z, y, x) >= 0.05) w += at(z, y, x), wv += at(z, y, x) * velocity(z);
        for (int64_t z = 0; z < kZ; ++z)
          if (at(z, y, x) >= 0.05)
            spread += at(z, y, x) * (velocity(z) - wv / w) * (velocity(z) - wv / w);
        const double want = order == 0 ? 5.0 * w : order == 1 ? wv / w : std::sqrt(spread / w);
        EXPECT_NEAR(m[size_t(y * kX + x)], want, 1e-4 * want) << order << " " << y << "," << x;
        if (order == 1 && x >= 10 && x < 20) {
          EXPECT_NEAR(m[size_t(y * kX + x)], 80.0 + double(x), 1.0);
        }
      }
    EXPECT_EQ(card(info, "BUNIT"), order == 0 ? "'Jy/beam.km/s'" : "'km/s'");
    // The spectral axis stays as a degenerate axis at the range's middle (channel 11.5, 0-based).
    EXPECT_NEAR(std::stod(card(info, "CRPIX3")), 12.0 - 11.5, 1e-9);
    EXPECT_NE(card(info, "CTYPE1").find("RA---SIN"), std::string::npos);
  }
  // A range: moment 0 sums only its channels.
  ASSERT_EQ(runCli("moments " + in_ + " " + path("r.fits") +
                   " --backend cpu --order 0 --first 2 "
                   "--last 5")
                .code,
            0);
  const std::vector<float> part = read(path("r.fits"));
  double want = 0;
  for (int64_t z = 2; z <= 5; ++z) want += std::isnan(at(z, 0, 0)) ? 0 : at(z, 0, 0) * 5.0;
  EXPECT_NEAR(part[0], want, 1e-4);
}

TEST_F(CliAlongZ, UsageErrorsNameTheOption) {
  CliResult r = runCli("project " + in_ + " " + path("x.fits") + " --op average");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--op"), std::string::npos) << r.out;
  r = runCli("project " + in_ + " " + path("x.fits") + " --op max --last 24");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--last"), std::string::npos) << r.out;
  r = runCli("moments " + in_ + " " + path("x.fits") + " --order 3");
  EXPECT_EQ(r.code, 2);
  r = runCli("moments " + in_ + " " + path("x.fits"));
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(fs::exists(path("x.fits")));
}

// One rule for velocities, whatever the CUNIT's spelling: moment 1 of a one-channel line at
// 100 km/s is 100 in BUNIT 'km/s' for 'm/s', 'm s-1', 'm.s-1' and 'km/s' alike.
TEST_F(CliAlongZ, VelocitiesAreInKmPerSecondForEverySpellingOfTheUnit) {
  const int64_t z = 5;
  std::vector<float> cube(size_t(z * 4 * 3), 0.f);
  for (size_t i = 0; i < 12; ++i) cube[2 * 12 + i] = 1.f;  // the line: channel 2 only
  for (const auto& [unit, step] : std::vector<std::pair<std::string, double>>{
           {"m/s", 5000.0}, {"m s-1", 5000.0}, {"m.s-1", 5000.0}, {"km/s", 5.0}}) {
    io::WriteOptions o;
    // Channel 2 (0-based) is the reference pixel 3 at 100 km/s.
    o.header = {{"CTYPE3", "'VRAD'", ""},
                {"CRPIX3", "3.0", ""},
                {"CRVAL3", std::to_string(100.0 * step / 5.0), ""},
                {"CDELT3", std::to_string(step), ""},
                {"CUNIT3", "'" + unit + "'", ""}};
    const std::string in = path("v.fits"), out = path("v_m1.fits");
    fs::remove(in), fs::remove(out);
    io::writeStack(in, cube.data(), z, 4, 3, o);
    CliResult r = runCli("moments " + in + " " + out + " --backend cpu --order 1");
    ASSERT_EQ(r.code, 0) << unit << ": " << r.out;
    io::StackInfo info;
    const std::vector<float> m = read(out, &info);
    EXPECT_EQ(card(info, "BUNIT"), "'km/s'") << unit;
    EXPECT_NEAR(m[0], 100.0, 1e-4) << unit;  // float32 of 100: exact to 1e-5
  }
}

// Without a spectral axis (or z spacing) moments 1 and 2 are in slice indices: the input's BUNIT
// (the data's unit) is not theirs and is dropped; moment 0 keeps it (the index step is 1).
TEST_F(CliAlongZ, MomentsWithoutASpectralAxisDropTheDataUnit) {
  std::vector<float> cube(size_t(5 * 4 * 3), 1.f);
  io::WriteOptions o;
  o.header = {{"BUNIT", "'Jy/beam'", ""}};
  const std::string in = path("plain.fits");
  io::writeStack(in, cube.data(), 5, 4, 3, o);
  for (int order : {0, 1, 2}) {
    const std::string out = path("plain_m" + std::to_string(order) + ".fits");
    CliResult r =
        runCli("moments " + in + " " + out + " --backend cpu --order " + std::to_string(order));
    ASSERT_EQ(r.code, 0) << r.out;
    io::StackInfo info;
    read(out, &info);
    EXPECT_EQ(card(info, "BUNIT"), order == 0 ? "'Jy/beam'" : "") << order;
  }
}

}  // namespace
