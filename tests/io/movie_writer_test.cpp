// Movies decoded back with FFmpeg: PNG frames and GIF give the palette's colours exactly, MP4
// (H.264) within a few levels; odd sizes, the frame count and rate, the errors, and nothing left
// behind by a writer that was not finished.
#include <gtest/gtest.h>

#ifdef STACKLENS_HAVE_MOVIE
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "io/io_error.h"
#include "io/movie_writer.h"
#include "tests/io/movie_decode.h"

namespace {

namespace fs = std::filesystem;
using stacklens::io::IoError;
using stacklens::io::MovieOptions;
using stacklens::io::MovieWriter;
using stacklens::testing::decode;
using stacklens::testing::Decoded;

class Movie : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stacklens_movie_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    for (int i = 0; i < 256; ++i)  // a palette whose colours differ in every channel
      options_.palette[size_t(i)] = {uint8_t(i), uint8_t(255 - i), uint8_t((i * 7) % 256)};
    options_.fps = 12.5;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Frame k: index (8 x + 4 y + 40 k) mod 256, in blocks of 8 x 8 pixels (H.264 keeps flat
  // blocks well).
  std::vector<uint8_t> frame(int k, int w, int h) const {
    std::vector<uint8_t> f(size_t(w) * size_t(h));
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        f[size_t(y * w + x)] = uint8_t((8 * (x / 8) + 4 * (y / 8) + 40 * k) % 256);
    return f;
  }
  void write(const std::string& file, int w, int h, int frames) const {
    MovieWriter m(file, w, h, options_);
    for (int k = 0; k < frames; ++k) m.addFrame(frame(k, w, h).data());
    EXPECT_EQ(m.frames(), frames);
    m.finish();
  }
  // The largest difference of a decoded frame from the palette's colours of frame k.
  double worst(const std::vector<uint8_t>& rgb, int k, int w, int h) const {
    const std::vector<uint8_t> f = frame(k, w, h);
    double most = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c)
          most =
              std::max(most, std::fabs(double(rgb[size_t((y * w + x) * 3 + c)]) -
                                       double(options_.palette[f[size_t(y * w + x)]][size_t(c)])));
    return most;
  }

  fs::path dir_;
  MovieOptions options_;
};

TEST_F(Movie, GifFramesHaveThePalettesColoursExactly) {
  write(path("m.gif"), 40, 24, 3);
  const Decoded d = decode(path("m.gif"));
  ASSERT_EQ(d.rgb.size(), 3u);
  EXPECT_EQ(d.width, 40);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(worst(d.rgb[size_t(k)], k, 40, 24), 0.0) << k;
}

TEST_F(Movie, PngFramesAreNumberedFilesWithExactColours) {
  write(path("f.png"), 33, 17, 2);
  for (int k = 0; k < 2; ++k) {
    const std::string name = path("f_000" + std::to_string(k) + ".png");
    const Decoded d = decode(name);
    ASSERT_EQ(d.rgb.size(), 1u) << name;
    EXPECT_EQ(d.width, 33);
    EXPECT_EQ(worst(d.rgb[0], k, 33, 17), 0.0);
  }
  EXPECT_FALSE(fs::exists(path("f.png")));
}

TEST_F(Movie, Mp4KeepsTheFramesTheirRateAndAnOddSizeMadeEven) {
  write(path("m.mp4"), 64, 47, 5);
  const Decoded d = decode(path("m.mp4"));
  ASSERT_EQ(d.rgb.size(), 5u);
  EXPECT_EQ(d.width, 64);
  EXPECT_EQ(d.height, 48);  // one row more, repeating the last
  EXPECT_NEAR(d.fps, 12.5, 1e-6);
  // 4:2:0 chroma and a lossy codec: the mean error over the frame is small.
  for (int k = 0; k < 5; ++k) {
    const std::vector<uint8_t> f = frame(k, 64, 47);
    double sum = 0;
    for (int y = 0; y < 47; ++y)
      for (int x = 0; x < 64; ++x)
        for (int c = 0; c < 3; ++c)
          sum += std::fabs(double(d.rgb[size_t(k)][size_t((y * 64 + x) * 3 + c)]) -
                           double(options_.palette[f[size_t(y * 64 + x)]][size_t(c)]));
    EXPECT_LT(sum / (64 * 47 * 3), 4.0) << k;
  }
}

TEST_F(Movie, UnfinishedWritersLeaveNothingAndBadRequestsAreRefused) {
  {
    MovieWriter m(path("gone.mp4"), 16, 16, options_);
    m.addFrame(frame(0, 16, 16).data());
  }
  {
    MovieWriter m(path("gone.png"), 16, 16, options_);
    m.addFrame(frame(0, 16, 16).data());
  }
  EXPECT_TRUE(fs::is_empty(dir_));
  EXPECT_THROW(MovieWriter(path("m.avi"), 16, 16, options_), IoError);
  EXPECT_THROW(MovieWriter(path("m.mp4"), 0, 16, options_), IoError);
  MovieOptions slow = options_;
  slow.fps = 0;
  EXPECT_THROW(MovieWriter(path("m.gif"), 16, 16, slow), IoError);
  MovieWriter empty(path("empty.gif"), 16, 16, options_);
  EXPECT_THROW(empty.finish(), IoError);
  EXPECT_THROW(MovieWriter(path("no/such/folder/m.mp4"), 16, 16, options_), IoError);
}

}  // namespace
#endif
