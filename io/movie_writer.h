// Movies of a stack (FFmpeg's libraries): frames of 8-bit colormap indices with one 256-colour
// palette, written as MP4 (H.264), animated GIF, or numbered PNG files.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace stacklens::io {

struct MovieOptions {
  double fps = 10;
  std::array<std::array<uint8_t, 3>, 256> palette{};  // RGB per index (the colormap)
  int quality = 18;        // H.264's constant rate factor: 0 lossless, 18 visually so, 51 worst
  std::string sourcePath;  // the input: never written over
};

// By path's extension: .mp4 (H.264 in yuv420p through libx264; odd widths and heights get one
// more column or row, repeating the last), .gif (every frame with the palette, looping), .png
// (frames as path's name followed by _0000, _0001, ...). The MP4 or GIF appears at path on
// finish() (a temporary file until then); each PNG is written whole. An unfinished writer (an
// error, a cancel) removes what it wrote. Throws IoError naming path and the reason.
class MovieWriter {
 public:
  MovieWriter(const std::string& path, int width, int height, const MovieOptions& options);
  ~MovieWriter();
  MovieWriter(const MovieWriter&) = delete;
  MovieWriter& operator=(const MovieWriter&) = delete;

  static bool supports(const std::string& path);  // .mp4, .gif or .png
  // False in a build without FFmpeg (STACKLENS_MOVIE=OFF), which writes no movie.
  static bool available();
  // width · height indices, row by row, the first row at the top.
  void addFrame(const uint8_t* indices);
  void finish();
  int64_t frames() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stacklens::io
