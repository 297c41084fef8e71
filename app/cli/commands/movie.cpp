// stacklens-cli movie: one frame per slice of a range, or a turn of the whole stack as the 3D
// view draws it (--rotate), as MP4 (H.264), animated GIF or PNG frames, with a colormap and one
// set of display limits for the whole movie (as DS9's blink and MPEG export, Fiji's AVI and 3D
// Project).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <tuple>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "compute/blocked/block_plan.h"
#include "compute/volume_binning.h"
#include "compute/volume_render.h"
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

// One set of limits for every frame: --limits LOW,HIGH, or the central P % (or min–max) of a
// sample of the range's slices.
std::pair<float, float> movieLimits(const Args& args, const io::StackReader& reader, int64_t first,
                                    int64_t last) {
  const io::StackInfo& info = reader.info();
  const std::string limits = args.get("limits", "99.5");
  if (limits.find(',') != std::string::npos) {
    const std::vector<double> v = args.getDoubles("limits");
    if (v.size() != 2 || !(v[1] > v[0]))
      throw UsageError("--limits: expected LOW,HIGH with LOW < HIGH");
    return {float(v[0]), float(v[1])};
  }
  const double percent = limits == "minmax" ? 100.0 : parseNumber(limits, "--limits");
  if (percent <= 0 || percent > 100)
    throw UsageError("--limits: expected a percentage in (0, 100]");
  const int64_t count = last - first + 1, picks = std::min<int64_t>(count, 16);
  std::vector<float> slice(size_t(info.y * info.x)), sample;
  for (int64_t k = 0; k < picks; ++k) {
    reader.readSlice(first + (k * count) / picks, slice.data());
    sample.insert(sample.end(), slice.begin(), slice.end());
  }
  return io::percentileRange(sample.data(), int64_t(sample.size()), percent);
}

int finishMovie(io::MovieWriter& movie, int width, int height, double fps, float low, float high,
                bool terminal) {
  movie.finish();
  std::fprintf(stderr, "%s%lld frames of %d x %d at %g frames/s, limits %g .. %g\n",
               terminal ? "\r" : "", static_cast<long long>(movie.frames()), width, height, fps,
               double(low), double(high));
  return kOk;
}

// --rotate N: the stack as the viewer's 3D view draws it, turned once about its vertical axis in
// N frames (tilted by --elevation), each frame rendered on the chosen backend.
int64_t writeRotation(const Args& args, const io::StackReader& reader, io::MovieWriter& movie,
                      int width, int height, float low, float high) {
  const io::StackInfo& info = reader.info();
  const int64_t frames = args.getInt("rotate", 0);
  const compute::Shape stack{info.z, info.y, info.x};
  auto backend = chooseBackend(args);
  const size_t budget = std::min(size_t(4) << 30, compute::defaultHostBudget() / 2);
  compute::VolumeBinner binner(stack, compute::volumeBinning(stack, budget, 16384));
  std::vector<float> slice(size_t(info.y * info.x));
  for (int64_t z = 0; z < info.z; ++z) {
    if (interrupted()) throw compute::Cancelled();
    reader.readSlice(z, slice.data());
    binner.add(z, slice.data());
  }
  const bool known = info.spacingKnown;
  float lo = 0, hi = 0;
  const compute::Image volume =
      binner.finish({known ? info.spacing[0] : 1.0, known ? info.spacing[1] : 1.0,
                     known ? info.spacing[2] : 1.0, known, info.units[2]},
                    &lo, &hi);
  if (!binner.note(budget).empty()) std::fprintf(stderr, "%s\n", binner.note(budget).c_str());
  compute::VolumeRenderParams p;
  p.mode = compute::parseVolumeMode(args.get("mode", "mip"));  // checked in runMovie
  p.width = width, p.height = height;
  p.low = low, p.high = high;
  p.isoLevel = args.getDouble("iso", 0.5 * (double(low) + double(high)));
  const double elevation = args.getDouble("elevation", 20);
  const io::FrameLayout layout{width, height, width, height, false};
  const bool terminal = isatty(fileno(stderr));
  for (int64_t k = 0; k < frames; ++k) {
    if (interrupted()) throw compute::Cancelled();
    compute::orbitRotation(360.0 * double(k) / double(frames), elevation, p.rotation);
    const compute::Image frame =
        backend->download(backend->renderVolume(volume, p, interruptible()));
    movie.addFrame(io::movieFrame(frame.data(), layout, low, high).data());
    if (terminal)
      std::fprintf(stderr, "\rframes %lld/%lld", static_cast<long long>(k + 1),
                   static_cast<long long>(frames));
  }
  return frames;
}

int runMovie(const Args& args) {
  InputStack input;
  auto reader = openInput(args, input);
  const io::StackInfo& info = input.info;
  const std::string out = args.positional(1);
  if (!io::MovieWriter::available())
    throw UsageError("this build of StackLens writes no movies (built without FFmpeg)");
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
  const bool rotation = args.has("rotate");
  if (rotation) {
    const int64_t frames = args.getInt("rotate", 0);
    if (frames < 2 || frames > 100000) throw UsageError("--rotate: expected 2..100000 frames");
    try {
      compute::parseVolumeMode(args.get("mode", "mip"));
    } catch (const compute::InvalidArgument& e) {
      throw UsageError(std::string("--mode: ") + e.what());
    }
  }
  const auto [width, height] =
      rotation && !args.has("size") ? std::pair(512, 512) : frameSize(args, info);

  std::vector<float> slice(size_t(info.y * info.x));
  const auto [low, high] = movieLimits(args, *reader, first, last);
  io::MovieWriter movie(out, width, height, options);
  const bool terminal = isatty(fileno(stderr));
  if (rotation) {
    writeRotation(args, *reader, movie, width, height, low, high);
    return finishMovie(movie, width, height, options.fps, low, high, terminal);
  }
  const io::FrameLayout layout{info.x, info.y, width, height, info.format == "fits"};
  for (int64_t z = first; z <= last; ++z) {
    if (interrupted()) throw compute::Cancelled();
    reader->readSlice(z, slice.data());
    movie.addFrame(io::movieFrame(slice.data(), layout, low, high).data());
    if (terminal)
      std::fprintf(stderr, "\rframes %lld/%lld", static_cast<long long>(z - first + 1),
                   static_cast<long long>(last - first + 1));
  }
  return finishMovie(movie, width, height, options.fps, low, high, terminal);
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
      {"rotate", "N",
       "instead of the slices: the whole stack as the 3D view draws it, turned once in N frames "
       "(default size 512x512)"},
      {"mode", "NAME", "with --rotate: mip (default), attenuated-mip, average or iso"},
      {"elevation", "DEG", "with --rotate: the view's tilt (default 20)"},
      {"iso", "V", "with --rotate --mode iso: the level (default the limits' middle)"},
      {"backend", "NAME", "with --rotate: cpu, cuda or auto (default auto)"},
      {"hdu", "N", "FITS HDU to read (default: the first with an image)"},
      {"plane", "P", "index along a 4th axis"}};
}

const CommandRegistration reg{{"movie", "IN OUT.mp4|OUT.gif|OUT.png",
                               "a movie of the slices, one frame per slice, or of the stack in 3D "
                               "turning (MP4 H.264, animated GIF, or numbered PNG frames)",
                               movieOptions(), 2, 2, runMovie}};

}  // namespace
}  // namespace stacklens::cli
