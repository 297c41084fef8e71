#include "io/movie_writer.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "io/file_checks.h"
#include "io/io_error.h"
#include "io/whole_file.h"
#include "io/write_stop.h"

namespace stacklens::io {
namespace {

enum class Kind { Mp4, Gif, Png };

std::string lowerExtension(const std::string& path) {
  std::string e = std::filesystem::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e;
}

std::string ffmpegError(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

}  // namespace

struct MovieWriter::State {
  std::string path;
  Kind kind = Kind::Mp4;
  int width = 0, height = 0;  // the frames given
  MovieOptions options;
  AVFormatContext* format = nullptr;
  AVCodecContext* encoder = nullptr;
  AVStream* stream = nullptr;
  SwsContext* scale = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  std::unique_ptr<AtomicOutput> output;
  std::vector<uint8_t> rgb;
  std::array<uint8_t, 256> canonical{};  // each index's first index of the same colour
  std::vector<std::string> pngs;
  int64_t next = 0;
  bool finished = false;

  void check(int code, const char* what) const {
    if (code < 0) throw IoError(path, std::string(what) + ": " + ffmpegError(code));
  }

  // Packets the encoder has ready: into the file (MP4, GIF) or each a PNG file.
  void drain() {
    for (;;) {
      const int got = avcodec_receive_packet(encoder, packet);
      if (got == AVERROR(EAGAIN) || got == AVERROR_EOF) return;
      check(got, "encoding a frame");
      if (kind == Kind::Png) {
        char suffix[32];
        std::snprintf(suffix, sizeof suffix, "_%04lld.png", static_cast<long long>(pngs.size()));
        const std::filesystem::path p(path);
        const std::string name = (p.parent_path() / (p.stem().string() + suffix)).string();
        writeWholeFile(name,
                       std::string(reinterpret_cast<const char*>(packet->data),
                                   static_cast<size_t>(packet->size)),
                       options.sourcePath);
        pngs.push_back(name);
        av_packet_unref(packet);
        continue;
      }
      // Every frame lasts one frame period; without it the MP4 muxer's edit list ends at the
      // last frame's start, and players drop that frame.
      packet->duration = 1;
      av_packet_rescale_ts(packet, encoder->time_base, stream->time_base);
      packet->stream_index = stream->index;
      check(av_interleaved_write_frame(format, packet), "writing a frame");
    }
  }

  ~State() {
    if (format && format->pb && !finished) avio_closep(&format->pb);
    if (!finished)
      for (const std::string& p : pngs) std::remove(p.c_str());
    sws_freeContext(scale);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&encoder);
    if (format) avformat_free_context(format);
  }
};

bool MovieWriter::available() { return true; }

bool MovieWriter::supports(const std::string& path) {
  const std::string e = lowerExtension(path);
  return e == ".mp4" || e == ".gif" || e == ".png";
}

MovieWriter::MovieWriter(const std::string& path, int width, int height,
                         const MovieOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  // FFmpeg reports through its return codes, which name the problem in our errors; its log
  // (libx264's settings, statistics) would go to stderr from inside the library.
  av_log_set_level(AV_LOG_QUIET);
  s.path = path;
  s.options = options;
  s.width = width, s.height = height;
  const std::string e = lowerExtension(path);
  s.kind = e == ".gif" ? Kind::Gif : e == ".png" ? Kind::Png : Kind::Mp4;
  if (!supports(path)) throw IoError(path, "a movie is written as .mp4, .gif or .png frames");
  if (width < 1 || height < 1 || width > 16384 || height > 16384)
    throw IoError(path, "frames of " + std::to_string(width) + " x " + std::to_string(height) +
                            " pixels cannot be encoded");
  if (!(options.fps > 0 && options.fps <= 1000))
    throw IoError(path, "the frame rate must be above 0 and at most 1000");
  // Colormaps repeat colours (viridis does), and FFmpeg's GIF encoder shows a repeated colour's
  // later index as index 0: frames use the first index of each colour.
  for (size_t i = 0; i < 256; ++i) {
    size_t first = 0;
    while (options.palette[first] != options.palette[i]) ++first;
    s.canonical[i] = uint8_t(first);
  }
  const AVCodec* codec = s.kind == Kind::Mp4   ? avcodec_find_encoder(AV_CODEC_ID_H264)
                         : s.kind == Kind::Gif ? avcodec_find_encoder(AV_CODEC_ID_GIF)
                                               : avcodec_find_encoder(AV_CODEC_ID_PNG);
  if (!codec) throw IoError(path, "this FFmpeg has no encoder for " + e);
  s.encoder = avcodec_alloc_context3(codec);
  s.frame = av_frame_alloc();
  s.packet = av_packet_alloc();
  if (!s.encoder || !s.frame || !s.packet) throw std::bad_alloc();
  // H.264 in 4:2:0 needs even sizes.
  const bool mp4 = s.kind == Kind::Mp4;
  s.encoder->width = mp4 ? width + width % 2 : width;
  s.encoder->height = mp4 ? height + height % 2 : height;
  s.encoder->pix_fmt = mp4 ? AV_PIX_FMT_YUV420P : AV_PIX_FMT_PAL8;
  const AVRational rate = av_d2q(options.fps, 100000);
  s.encoder->framerate = rate;
  s.encoder->time_base = av_inv_q(rate);
  if (mp4) {
    av_opt_set(s.encoder->priv_data, "crf", std::to_string(options.quality).c_str(), 0);
    av_opt_set(s.encoder->priv_data, "preset", "medium", 0);
    s.encoder->color_range = AVCOL_RANGE_MPEG;
  }
  if (s.kind != Kind::Png) {
    s.output = std::make_unique<AtomicOutput>(path, options.sourcePath);
    s.check(avformat_alloc_output_context2(&s.format, nullptr, mp4 ? "mp4" : "gif", nullptr),
            "choosing the container");
    if (s.format->oformat->flags & AVFMT_GLOBALHEADER)
      s.encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  }
  s.check(avcodec_open2(s.encoder, codec, nullptr), "opening the encoder");
  s.frame->format = s.encoder->pix_fmt;
  s.frame->width = s.encoder->width;
  s.frame->height = s.encoder->height;
  s.check(av_frame_get_buffer(s.frame, 0), "allocating a frame");
  if (mp4) {
    s.scale = sws_getContext(s.encoder->width, s.encoder->height, AV_PIX_FMT_RGB24,
                             s.encoder->width, s.encoder->height, AV_PIX_FMT_YUV420P, SWS_BICUBIC,
                             nullptr, nullptr, nullptr);
    if (!s.scale) throw IoError(path, "cannot convert RGB to YUV");
    // swscale may read a little past the last row with vector loads: room to spare.
    s.rgb.resize(size_t(s.encoder->width) * size_t(s.encoder->height) * 3 + 64);
  }
  if (s.format) {
    s.stream = avformat_new_stream(s.format, nullptr);
    if (!s.stream) throw std::bad_alloc();
    s.check(avcodec_parameters_from_context(s.stream->codecpar, s.encoder),
            "describing the stream");
    s.stream->time_base = s.encoder->time_base;
    s.stream->avg_frame_rate = rate;
    s.check(avio_open(&s.format->pb, s.output->tempPath().c_str(), AVIO_FLAG_WRITE),
            "opening the temporary file");
    AVDictionary* muxer = nullptr;
    if (s.kind == Kind::Gif) av_dict_set(&muxer, "loop", "0", 0);  // loop forever
    const int header = avformat_write_header(s.format, &muxer);
    av_dict_free(&muxer);
    s.check(header, "writing the header");
  }
}

MovieWriter::~MovieWriter() = default;

int64_t MovieWriter::frames() const { return state_->next; }

void MovieWriter::addFrame(const uint8_t* indices) {
  State& s = *state_;
  if (s.finished) throw IoError(s.path, "the movie is already finished");
  throwIfWritesStopped(s.path);
  s.check(av_frame_make_writable(s.frame), "reusing a frame");
  if (s.kind == Kind::Mp4) {
    const int w = s.encoder->width, h = s.encoder->height;
    for (int y = 0; y < h; ++y) {
      const uint8_t* row = indices + size_t(std::min(y, s.height - 1)) * size_t(s.width);
      uint8_t* out = s.rgb.data() + size_t(y) * size_t(w) * 3;
      for (int x = 0; x < w; ++x) {
        const auto& c = s.options.palette[row[std::min(x, s.width - 1)]];
        out[3 * x] = c[0], out[3 * x + 1] = c[1], out[3 * x + 2] = c[2];
      }
    }
    const uint8_t* planes[1] = {s.rgb.data()};
    const int strides[1] = {3 * w};
    sws_scale(s.scale, planes, strides, 0, h, s.frame->data, s.frame->linesize);
  } else {
    for (int y = 0; y < s.height; ++y) {
      const uint8_t* in = indices + size_t(y) * size_t(s.width);
      uint8_t* out = s.frame->data[0] + size_t(y) * size_t(s.frame->linesize[0]);
      for (int x = 0; x < s.width; ++x) out[x] = s.canonical[in[x]];
    }
    auto* palette = reinterpret_cast<uint32_t*>(s.frame->data[1]);
    for (int i = 0; i < 256; ++i) {
      const auto& c = s.options.palette[size_t(i)];
      palette[i] = 0xFF000000u | uint32_t(c[0]) << 16 | uint32_t(c[1]) << 8 | uint32_t(c[2]);
    }
  }
  s.frame->pts = s.next++;
  s.check(avcodec_send_frame(s.encoder, s.frame), "encoding a frame");
  s.drain();
}

void MovieWriter::finish() {
  State& s = *state_;
  if (s.finished) return;
  if (s.next == 0) throw IoError(s.path, "a movie needs at least one frame");
  s.check(avcodec_send_frame(s.encoder, nullptr), "flushing the encoder");
  s.drain();
  if (s.format) {
    s.check(av_write_trailer(s.format), "writing the end of the file");
    s.check(avio_closep(&s.format->pb), "closing the file");
    s.output->commit();
  }
  s.finished = true;
}

}  // namespace stacklens::io
