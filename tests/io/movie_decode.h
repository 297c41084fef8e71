// Test helper: every frame of a movie file decoded to RGB24 with FFmpeg (what a player shows).
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

#include <string>
#include <vector>

namespace stacklens::testing {

struct Decoded {
  int width = 0, height = 0;
  double fps = 0;
  std::vector<std::vector<uint8_t>> rgb;  // one RGB24 image per frame
};

// Every frame of a file as RGB24, through libavformat and libavcodec.
inline Decoded decode(const std::string& path) {
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
      // swscale may write a little past the last row with vector stores: room to spare.
      std::vector<uint8_t> rgb(size_t(frame->width) * size_t(frame->height) * 3 + 64);
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

}  // namespace stacklens::testing
