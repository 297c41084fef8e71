// Movies decoded back with FFmpeg: PNG frames and GIF give the palette's colours exactly, MP4
// (H.264) within a few levels; odd sizes, the frame count and rate, the errors, and nothing left
// behind by a writer that was not finished.
#include <gtest/gtest.h>

#ifdef STACKLENS_HAVE_MOVIE
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "io/io_error.h"
#include "io/movie_writer.h"

namespace {

namespace fs = std::filesystem;
using stacklens::io::IoError;
using stacklens::io::MovieOptions;
using stacklens::io::MovieWriter;

struct Decoded {
  int width = 0, height = 0;
  double fps = 0;
  std::vector<std::vector<uint8_t>> rgb;  // one RGB24 image per frame
};

// Every frame of a file as RGB24, through libavformat and libavcodec.
Decoded decode(const std::string& path) {
  Decoded d;
  AVFormatContext* format = nullptr;
  if (avformat_open_input(&format, path.c_str(), nullptr, nullptr) < 0) return d;
  avformat_find_stream_info(format, nullptr);
  const int index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  AVStream* stream = format->streams[index];
  const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
  AVCodecContext* decoder = avcodec_alloc_context3(codec);
  avcodec_parameters_to_context(decoder, stream->codecpar);
  avcodec_open2(decoder, codec, nullptr);
  d.width = decoder->width, d.height = decoder->height;
  d.fps = av_q2d(stream->avg_frame_rate.num ? stream->avg_frame_rate : stream->r_frame_rate);
  AVPacket* packet = av_packet_alloc();
  AVFrame* frame = av_frame_alloc();
  SwsContext* scale = nullptr;
  auto take = [&] {
    while (avcodec_receive_frame(decoder, frame) == 0) {
      scale = sws_getCachedContext(scale, frame->width, frame->height, AVPixelFormat(frame->format),
                                   frame->width, frame->height, AV_PIX_FMT_RGB24, SWS_POINT,
                                   nullptr, nullptr, nullptr);
      std::vector<uint8_t> rgb(size_t(frame->width) * size_t(frame->height) * 3);
      uint8_t* planes[1] = {rgb.data()};
      const int strides[1] = {3 * frame->width};
      sws_scale(scale, frame->data, frame->linesize, 0, frame->height, planes, strides);
      d.rgb.push_back(std::move(rgb));
    }
  };
  while (av_read_frame(format, packet) >= 0) {
    if (packet->stream_index == index)
      while (avcodec_send_packet(decoder, packet) == AVERROR(EAGAIN)) take();
    av_packet_unref(packet);
    take();
  }
  avcodec_send_packet(decoder, nullptr);
  take();
  sws_freeContext(scale);
  av_frame_free(&frame);
  av_packet_free(&packet);
  avcodec_free_context(&decoder);
  avformat_close_input(&format);
  return d;
}

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
