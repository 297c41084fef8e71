// stacklens-cli movie: the frames decoded back (FFmpeg) are the slices through the colormap and
// the limits, FITS rows bottom up, resized by nearest neighbour; the usage errors.
#include <gtest/gtest.h>

#ifdef STACKLENS_HAVE_MOVIE
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "compute/backend.h"
#include "compute/volume_render.h"
#include "io/stack_writer.h"
#include "resources/colormaps/colormap_tables.h"
#include "tests/app/temp_folder_test.h"
#include "tests/io/movie_decode.h"

namespace {

namespace fs = std::filesystem;

class CliMovie : public stacklens::testing::TempFolderTest {
 protected:
  CliMovie() : TempFolderTest("stacklens_cli_movie_") {}
  void SetUp() override {
    TempFolderTest::SetUp();
    // Slice z: value 10 x + 100 y + 1000 z over 6 x 4 pixels, 3 slices; one NaN.
    std::vector<float> v(3 * 4 * 6);
    for (int z = 0; z < 3; ++z)
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 6; ++x)
          v[size_t((z * 4 + y) * 6 + x)] = float(10 * x + 100 * y + 1000 * z);
    v[7] = NAN;
    for (const char* name : {"s.fits", "s.tif"})
      stacklens::io::writeStack((dir_ / name).string(), v.data(), 3, 4, 6, {});
    values_ = v;
  }
  // The colour the movie should show for a value with limits [0, 2550] in `map`.
  static std::array<uint8_t, 3> colour(float v, const std::string& map) {
    const int i = std::isnan(v) ? 0 : std::clamp(int(std::lround(v * 255.0 / 2550.0)), 0, 255);
    return stacklens::resources::colormapTable(map)[size_t(i)];
  }

  std::vector<float> values_;
};

TEST_F(CliMovie, GifFramesAreTheSlicesThroughTheColormap) {
  for (const char* input : {"s.fits", "s.tif"}) {
    const bool fits = std::string(input) == "s.fits";
    CliResult r = runCli("movie " + path(input) + " " + path("m.gif") +
                         " --colormap viridis --limits 0,2550 --first 1 --fps 5");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("2 frames of 6 x 4 at 5 frames/s"), std::string::npos) << r.out;
    const auto d = stacklens::testing::decode(path("m.gif"));
    ASSERT_EQ(d.rgb.size(), 2u);
    for (int k = 0; k < 2; ++k)
      for (int row = 0; row < 4; ++row)
        for (int x = 0; x < 6; ++x) {
          const int y = fits ? 3 - row : row;  // FITS: the first row at the bottom
          const auto want = colour(values_[size_t(((k + 1) * 4 + y) * 6 + x)], "viridis");
          for (int c = 0; c < 3; ++c)
            EXPECT_EQ(d.rgb[size_t(k)][size_t((row * 6 + x) * 3 + c)], want[size_t(c)])
                << input << " frame " << k << " row " << row << " x " << x;
        }
  }
}

TEST_F(CliMovie, FramesAreResizedAndMp4HasOneFramePerSlice) {
  CliResult r = runCli("movie " + path("s.tif") + " " + path("m.mp4") + " --size 12x8");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto d = stacklens::testing::decode(path("m.mp4"));
  EXPECT_EQ(d.rgb.size(), 3u);
  EXPECT_EQ(d.width, 12);
  EXPECT_EQ(d.height, 8);
  r = runCli("movie " + path("s.tif") + " " + path("f.png") + " --size 12x8 --limits 0,2550");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto png = stacklens::testing::decode(path("f_0000.png"));
  ASSERT_EQ(png.rgb.size(), 1u);
  // Pixel (x, y) of the frame shows slice pixel (x / 2, y / 2).
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 12; ++x)
      EXPECT_EQ(png.rgb[0][size_t((y * 12 + x) * 3)],
                colour(values_[size_t((y / 2) * 6 + x / 2)], "gray")[0]);
}

// --rotate: each frame is the volume turned by 360° / N more, drawn as the 3D view draws it
// (compute::renderVolume, checked on its own in tests/compute), through the colormap and limits.
TEST_F(CliMovie, RotationFramesAreTheVolumeTurning) {
  CliResult r = runCli("movie " + path("s.tif") + " " + path("r.png") +
                       " --rotate 4 --size 40x30 --limits 0,2550 --elevation 10 --backend cpu");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("4 frames of 40 x 30"), std::string::npos) << r.out;
  stacklens::compute::Image volume = stacklens::compute::Image::host({3, 4, 6});
  std::copy(values_.begin(), values_.end(), volume.data());
  volume.data()[7] = 0;  // a blank voxel draws as the faintest value
  auto cpu = stacklens::compute::makeCpuBackend(1);
  for (int k = 0; k < 4; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "r_%04d.png", k);
    const auto png = stacklens::testing::decode(path(name));
    ASSERT_EQ(png.rgb.size(), 1u);
    ASSERT_EQ(png.width, 40);
    stacklens::compute::VolumeRenderParams p;
    p.width = 40, p.height = 30, p.low = 0, p.high = 2550;
    stacklens::compute::orbitRotation(90.0 * k, 10, p.rotation);
    const stacklens::compute::Image want = cpu->renderVolume(volume, p);
    int bad = 0;
    for (int i = 0; i < 40 * 30; ++i)
      bad += png.rgb[0][size_t(i * 3)] != colour(want.data()[i], "gray")[0];
    EXPECT_EQ(bad, 0) << "frame " << k;
  }
}

TEST_F(CliMovie, UsageErrors) {
  EXPECT_EQ(runCli("movie " + path("s.tif") + " " + path("m.avi")).code, 2);
  EXPECT_EQ(runCli("movie " + path("s.tif") + " " + path("m.gif") + " --colormap nope").code, 2);
  EXPECT_EQ(runCli("movie " + path("s.tif") + " " + path("m.gif") + " --size 12").code, 2);
  EXPECT_EQ(runCli("movie " + path("s.tif") + " " + path("m.gif") + " --last 3").code, 2);
  EXPECT_EQ(runCli("movie " + path("s.tif") + " " + path("m.gif") + " --limits 5,1").code, 2);
  EXPECT_EQ(runCli("movie " + path("s.tif") + " " + path("m.gif") + " --rotate 1").code, 2);
  EXPECT_EQ(runCli("movie " + path("s.tif") + " " + path("m.gif") + " --rotate 8 --mode x").code,
            2);
  EXPECT_FALSE(fs::exists(path("m.gif")));
  EXPECT_FALSE(fs::exists(path("m.gif")));
}

}  // namespace
#endif
