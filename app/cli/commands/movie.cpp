// stacklens-cli movie: one frame per slice of a range, as MP4 (H.264), animated GIF or PNG
// frames, with a colormap and one set of display limits for the whole movie (as DS9's blink and
// MPEG export, Fiji's AVI).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <tuple>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "io/movie_frame.h"
#include "io/movie_writer.h"
#include "resources/colormaps/colormap_tables.h"

namespace stacklens::cli {
namespace {

// --size WxH, or the slice's size.
std::pair<int, int> frameSize(const Args& args, const io::StackInfo& info) {
  if (!args.has("size")) return {int(info.x), int(info.y)};
  const std::string text = args.get("size", "");
  const size_t x = text.find('x');
  const double w = x == std::string::npos ? -1 : parseNumber(text.substr(0, x), "--size");
  const double h = x == std::string::npos ? -1 : parseNumber(text.substr(x + 1), "--size");
  if (w < 1 || h < 1 || w > 16384 || h > 16384 || w != std::floor(w) || h != std::floor(h))
    throw UsageError("--size: expected WIDTHxHEIGHT in pixels, e.g. 800x600, got '" + text + "'");
  return {int(w), int(h)};
}

int runMovie(const Args& args) {
  InputStack input;
  auto reader = openInput(args, input);
  const io::StackInfo& info = input.info;
  const std::string out = args.positional(1);
  if (!io::MovieWriter::supports(out))
    throw UsageError("OUT: expected a .mp4, .gif or .png (numbered frames) name, got '" + out +
                     "'");
  const int64_t first = args.getInt("first", 0), last = args.getInt("last", info.z - 1);
  if (first < 0 || last >= info.z || first > last)
    throw UsageError("--first/--last: expected 0 <= FIRST <= LAST <= " +
                     std::to_string(info.z - 1));
  io::MovieOptions options;
  options.fps = args.getDouble("fps", 10);
  if (!(options.fps > 0 && options.fps <= 1000))
    throw UsageError("--fps: expected a rate above 0, at most 1000");
  options.sourcePath = info.path;
  try {
    options.palette = resources::colormapTable(args.get("colormap", "gray"));
  } catch (const std::invalid_argument&) {
    std::string names;
    for (const auto& n : resources::colormapTableNames()) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("--colormap: expected one of " + names);
  }
  const auto [width, height] = frameSize(args, info);

  // One set of limits for every frame: given, or a percentile of a sample of the range.
  std::vector<float> slice(size_t(info.y * info.x));
  float low = 0, high = 1;
  const std::string limits = args.get("limits", "99.5");
  if (limits.find(',') != std::string::npos) {
    const std::vector<double> v = args.getDoubles("limits");
    if (v.size() != 2 || !(v[1] > v[0]))
      throw UsageError("--limits: expected LOW,HIGH with LOW < HIGH");
    low = float(v[0]), high = float(v[1]);
  } else {
    const double percent = limits == "minmax" ? 100.0 : parseNumber(limits, "--limits");
    if (percent <= 0 || percent > 100)
      throw UsageError("--limits: expected a percentage in (0, 100]");
    const int64_t count = last - first + 1, picks = std::min<int64_t>(count, 16);
    std::vector<float> sample;
    for (int64_t k = 0; k < picks; ++k) {
      reader->readSlice(first + (k * count) / picks, slice.data());
      sample.insert(sample.end(), slice.begin(), slice.end());
    }
    std::tie(low, high) = io::percentileRange(sample.data(), int64_t(sample.size()), percent);
  }
  const io::FrameLayout layout{info.x, info.y, width, height, info.format == "fits"};
  io::MovieWriter movie(out, width, height, options);
  const bool terminal = isatty(fileno(stderr));
  for (int64_t z = first; z <= last; ++z) {
    if (interrupted()) throw compute::Cancelled();
    reader->readSlice(z, slice.data());
    movie.addFrame(io::movieFrame(slice.data(), layout, low, high).data());
    if (terminal)
      std::fprintf(stderr, "\rframes %lld/%lld", static_cast<long long>(z - first + 1),
                   static_cast<long long>(last - first + 1));
  }
  movie.finish();
  std::fprintf(stderr, "%s%lld frames of %d x %d at %g frames/s, limits %g .. %g\n",
               terminal ? "\r" : "", static_cast<long long>(movie.frames()), width, height,
               options.fps, double(low), double(high));
  return kOk;
}

std::vector<OptionSpec> movieOptions() {
  return {
      {"first", "Z", "first slice (0-based, default 0)"},
      {"last", "Z", "last slice (default the last)"},
      {"fps", "N", "frames per second (default 10)"},
      {"size", "WxH", "frame size in pixels (default the slice's; nearest neighbour)"},
      {"colormap", "NAME", "gray (default), viridis, magma, inferno, plasma, ... as the viewer"},
      {"limits", "P|minmax|LOW,HIGH",
       "display limits for every frame: the central P % of the range's values (default "
       "99.5), their min and max, or given"},
      {"hdu", "N", "FITS HDU to read (default: the first with an image)"},
      {"plane", "P", "index along a 4th axis"}};
}

const CommandRegistration reg{{"movie", "IN OUT.mp4|OUT.gif|OUT.png",
                               "a movie of the slices, one frame per slice (MP4 H.264, animated "
                               "GIF, or numbered PNG frames)",
                               movieOptions(), 2, 2, runMovie}};

}  // namespace
}  // namespace stacklens::cli
