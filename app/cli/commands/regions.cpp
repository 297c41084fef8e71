// stacklens-cli regions: a DS9 region file placed on an image as the viewer draws it
// (io/region_placement.h): every region in the image's pixels through its WCS, written back as
// DS9 image regions, or as JSON with each region's points in pixels and on the sky.
#include <iostream>
#include <sstream>

#include "app/cli/command.h"
#include "app/cli/json_text.h"
#include "io/region_placement.h"
#include "io/stack.h"

namespace stacklens::cli {
namespace {

std::string pointList(const std::vector<std::array<double, 2>>& points) {
  std::string out = "[";
  for (size_t k = 0; k < points.size(); ++k)
    out += (k ? ", [" : "[") + jsonNumber(points[k][0]) + ", " + jsonNumber(points[k][1]) + "]";
  return out + "]";
}

std::string regionsJson(const std::string& file, const io::StackInfo& info, const io::Wcs* wcs,
                        int64_t z, const io::RegionPlacement& placement) {
  const bool celestial = wcs && wcs->hasCelestial();
  std::ostringstream out;
  out << "{\"file\": " << jsonString(file) << ", \"image\": " << jsonString(info.path)
      << ", \"slice\": " << z << ", \"sky_frame\": "
      << (celestial ? jsonString(io::skyFrameName(wcs->celestialFrame())) : "null")
      << ",\n \"regions\": [";
  for (size_t k = 0; k < placement.regions.size(); ++k) {
    const io::PixelRegion& r = placement.regions[k].pixels;
    std::string sizes = "[", angles = "[";
    for (size_t i = 0; i < r.sizes.size(); ++i) sizes += (i ? ", " : "") + jsonNumber(r.sizes[i]);
    for (size_t i = 0; i < r.angles.size(); ++i)
      angles += (i ? ", " : "") + jsonNumber(r.angles[i]);
    out << (k ? ",\n  " : "\n  ") << "{\"line\": " << r.line
        << ", \"shape\": " << jsonString(io::regionShapeName(r.shape))
        << ", \"pixels\": " << pointList(r.points) << ", \"sizes\": " << sizes
        << "], \"angles\": " << angles << "], \"angle\": " << jsonNumber(r.angle)
        << ", \"sky\": " << (celestial ? pointList(io::skyPoints(r, wcs, double(z))) : "null")
        << ", \"text\": " << jsonString(r.text) << ", \"color\": " << jsonString(r.color)
        << ", \"tag\": " << jsonString(r.tag) << ", \"exclude\": " << (r.exclude ? "true" : "false")
        << ", \"source\": " << (r.source ? "true" : "false") << "}";
  }
  out << "],\n \"warnings\": [";
  for (size_t k = 0; k < placement.warnings.size(); ++k)
    out << (k ? ", " : "") << jsonString(placement.warnings[k]);
  out << "]}\n";
  return out.str();
}

int runRegions(const Args& args) {
  const std::string file = args.positional(0);
  if (!args.has("image")) throw UsageError("--image IMG is required: the image to place them on");
  const std::string format = args.get("format", "ds9");
  if (format != "ds9" && format != "json") throw UsageError("--format: expected ds9 or json");
  io::OpenOptions options;
  options.hdu = args.getInt32("hdu", -1);
  options.plane = args.getInt32("plane", 0);
  const auto image = io::openStack(*args.get("image"), options);
  const io::StackInfo& info = image->info();
  const int64_t z = args.getInt("slice", 0);
  if (z < 0 || z >= info.z)
    throw UsageError("--slice " + std::to_string(z) + " is outside 0.." +
                     std::to_string(info.z - 1));
  const io::RegionPlacement placement =
      io::placeRegions(io::readDs9Regions(file), image->wcs(), double(z),
                       io::PhysicalToImage::fromHeader(info.header));
  for (const std::string& w : placement.warnings)
    std::cerr << "stacklens-cli: warning: " << file << ": " << w << "\n";
  if (format == "json") {
    std::cout << regionsJson(file, info, image->wcs(), z, placement);
  } else {
    std::vector<io::PixelRegion> pixels;
    for (const io::PlacedRegion& p : placement.regions) pixels.push_back(p.pixels);
    std::cout << io::ds9RegionText(pixels);
  }
  return kOk;
}

const CommandRegistration reg{
    {"regions",
     "IN.reg",
     "a DS9 region file placed on an image as the viewer draws it: DS9 image regions, or JSON "
     "with each region in pixels (0-based) and on the sky",
     {{"image", "IMG", "the FITS or TIFF image whose WCS places the regions (required)"},
      {"format", "ds9|json",
       "ds9 (default): DS9 4.1 regions in the image frame (1-based); json: every region's shape, "
       "points in 0-based pixels and on the sky (degrees, the image's frame), sizes in pixels, "
       "angle (degrees ccw from +x), properties, and the warnings"},
      {"slice", "Z", "the slice whose WCS places them (a cube's third axis; default 0)"},
      {"hdu", "N", "FITS HDU of the image (default: the first with an image)"},
      {"plane", "P", "index along the image's 4th axis, hyperstack channel or RGB sample"}},
     1,
     1,
     runRegions}};

}  // namespace
}  // namespace stacklens::cli
