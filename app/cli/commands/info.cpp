// stacklens-cli info: describe a FITS, TIFF or Zarr stack as JSON (reads headers only, never the
// data).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "app/cli/command.h"
#include "app/cli/json_text.h"
#include "io/stack.h"
#include "io/wcs.h"

namespace stacklens::cli {
namespace {

int runInfo(const Args& args) {
  io::OpenOptions options;
  options.hdu = static_cast<int>(args.getInt("hdu", -1));
  options.plane = static_cast<int>(args.getInt("plane", 0));
  auto reader = io::openStack(args.positional(0), options);
  const io::StackInfo& info = reader->info();
  std::ostringstream out;
  out << "{\"path\": " << jsonString(info.path) << ", \"format\": " << jsonString(info.format)
      << ", \"shape\": [" << info.z << ", " << info.y << ", " << info.x << "]"
      << ", \"dtype\": " << jsonString(io::dtypeName(info.dtype)) << ", \"hdu\": " << info.hdu
      << ", \"planes\": " << info.planes << ", \"plane\": " << info.plane << ", \"hdus\": [";
  for (size_t i = 0; i < info.hdus.size(); ++i) {
    const io::HduInfo& h = info.hdus[i];
    out << (i ? ", " : "") << "{\"index\": " << h.index << ", \"name\": " << jsonString(h.name)
        << ", \"type\": " << jsonString(h.type) << ", \"shape\": [";
    // NumPy order (slowest axis first), like "shape" above.
    for (size_t a = 0; a < h.axes.size(); ++a)
      out << (a ? ", " : "") << h.axes[h.axes.size() - 1 - a];
    out << "]}";
  }
  out << "], \"spacing\": ";
  if (info.spacingKnown)
    out << "[" << jsonNumber(info.spacing[0]) << ", " << jsonNumber(info.spacing[1]) << ", "
        << jsonNumber(info.spacing[2]) << "]";
  else
    out << "null";
  out << ", \"units\": ";
  if (info.spacingKnown)
    out << "[" << jsonString(info.units[0]) << ", " << jsonString(info.units[1]) << ", "
        << jsonString(info.units[2]) << "]";
  else
    out << "null";
  out << ", \"bscale\": " << jsonNumber(info.bscale) << ", \"bzero\": " << jsonNumber(info.bzero)
      << ", \"blank\": " << (info.blank ? std::to_string(*info.blank) : "null") << ", \"wcs\": ";
  if (const io::Wcs* wcs = reader->wcs()) {
    out << "[";
    const auto types = wcs->axisTypes();
    for (size_t i = 0; i < types.size(); ++i) out << (i ? ", " : "") << jsonString(types[i]);
    out << "]";
  } else {
    out << "null";
  }
  out << ", \"warnings\": [";
  bool first = true;
  for (const auto& card : info.header)
    if (card.key == "warning") {
      out << (first ? "" : ", ") << jsonString(card.value);
      first = false;
    }
  out << "]}\n";
  std::cout << out.str();
  return kOk;
}

const CommandRegistration reg{
    {"info",
     "FILE",
     "print a stack's shape ([z, y, x]), type, HDUs (Zarr: levels), spacing, scaling and WCS "
     "axes as JSON",
     {{"hdu", "N",
       "FITS HDU to describe (0 = primary; default: the first with image data), or OME-Zarr "
       "level (0 = finest)"},
      {"plane", "P",
       "index along a 4th axis (FITS), channel/frame (TIFF hyperstacks) or sample (RGB)"}},
     1,
     1,
     runInfo}};

}  // namespace
}  // namespace stacklens::cli
