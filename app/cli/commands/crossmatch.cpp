// stacklens-cli crossmatch: a catalog placed on an image and matched with the sources detected in
// it (a `segment --sources` table), as the viewer's catalog panel does (compute/catalog_match.h):
// the matched table as CSV, the counts on stderr.
#include <cstdio>
#include <iostream>

#include "app/cli/command.h"
#include "compute/catalog_match.h"
#include "io/stack.h"

namespace stacklens::cli {
namespace {

io::SkyFrame frameNamed(const std::string& name) {
  for (io::SkyFrame f : {io::SkyFrame::Icrs, io::SkyFrame::Fk5, io::SkyFrame::Fk4,
                         io::SkyFrame::Galactic, io::SkyFrame::Ecliptic})
    if (name == io::skyFrameName(f)) return f;
  throw UsageError("--frame: expected icrs, fk5, fk4, galactic or ecliptic, got '" + name + "'");
}

// The viewer's guess (its column dialog's preselection), with what the options say instead.
compute::CatalogPositions positionsFor(const Args& args, const io::CatalogTable& table,
                                       const std::string& file) {
  compute::CatalogPositions c = compute::guessCatalogPositions(table);
  const bool lonLat = args.has("lon") || args.has("lat"), xy = args.has("x") || args.has("y");
  if (lonLat && xy) throw UsageError("give --lon/--lat (sky) or --x/--y (pixels), not both");
  if (lonLat) {
    if (!args.has("lon") || !args.has("lat")) throw UsageError("--lon and --lat go together");
    const int lon = compute::catalogColumn(table, *args.get("lon"), file);
    c.lonInHours = lon == c.lon && c.lonInHours;
    c.lon = lon, c.lat = compute::catalogColumn(table, *args.get("lat"), file);
    if (!c.sky()) c.frame = io::SkyFrame::Fk5;
  } else if (xy) {
    if (!args.has("x") || !args.has("y")) throw UsageError("--x and --y go together");
    c.x = compute::catalogColumn(table, *args.get("x"), file);
    c.y = compute::catalogColumn(table, *args.get("y"), file);
    c.frame = io::SkyFrame::Image;
  }
  if (args.has("frame")) {
    if (!c.sky()) throw UsageError("--frame is for sky columns (--lon, --lat)");
    c.frame = frameNamed(*args.get("frame"));
  }
  if (args.has("hours")) c.lonInHours = true;
  if (args.has("zero-based")) c.oneBased = false;
  if (!c.valid())
    throw io::IoError(file, "no position columns found: name them with --lon/--lat or --x/--y");
  return c;
}

int runCrossmatch(const Args& args) {
  const std::string catalogFile = args.positional(0), sourcesFile = args.positional(1);
  if (!args.has("image")) throw UsageError("--image IMG is required: the image they lie on");
  if (!args.has("radius")) throw UsageError("--radius R is required");
  const double radius = args.getDouble("radius", 0);
  if (!(radius > 0)) throw UsageError("--radius: expected a positive number");
  io::OpenOptions open;
  open.hdu = args.getInt32("hdu", -1);
  open.plane = args.getInt32("plane", 0);
  const auto image = io::openStack(*args.get("image"), open);
  const io::StackInfo& info = image->info();
  const io::Wcs* wcs = image->wcs();
  const bool celestial = wcs && wcs->hasCelestial();
  const std::string unit = args.get("unit", celestial ? "arcsec" : "pixels");
  if (unit != "arcsec" && unit != "pixels") throw UsageError("--unit: expected arcsec or pixels");
  if (unit == "arcsec" && !celestial)
    throw io::IoError(info.path,
                      "no celestial WCS: a radius in arcsec cannot be placed (--unit "
                      "pixels)");
  std::optional<int64_t> slice;
  if (args.has("slice")) {
    slice = args.getInt("slice", 0);
    if (*slice < 0 || *slice >= info.z)
      throw UsageError("--slice " + std::to_string(*slice) + " is outside 0.." +
                       std::to_string(info.z - 1));
  }
  io::CatalogReadOptions read;
  read.table = args.getInt32("table", -1);
  const io::CatalogTable catalog = io::readCatalog(catalogFile, read);
  const compute::CatalogPositions columns = positionsFor(args, catalog, catalogFile);
  compute::SliceSources sources =
      compute::sourcesFromTable(io::readCatalog(sourcesFile), sourcesFile, slice);
  if (sources.z < 0 || sources.z >= info.z)
    throw UsageError(sourcesFile + ": its sources are of slice " + std::to_string(sources.z) +
                     ", outside the image's 0.." + std::to_string(info.z - 1));
  const compute::CatalogPlacement placed =
      compute::placeCatalog(catalog, columns, wcs, double(sources.z));
  const compute::CatalogMatch match = compute::matchCatalog(
      catalog, columns, placed, wcs, info.x, info.y, std::move(sources.sources), sources.z,
      {radius, unit == "arcsec", args.has("one-to-one")});
  const io::CatalogTable table = compute::matchedTable(catalog, match, wcs);
  if (args.has("output")) {
    io::writeCsv(table, *args.get("output"));
  } else {
    std::cout << io::csvText(table);
  }
  const size_t unmatched = match.result.unmatchedA.size() - size_t(match.outsideImage);
  std::fprintf(stderr, "%zu matched, %zu catalog unmatched, %zu sources unmatched",
               match.result.matched.size(), unmatched, match.result.unmatchedB.size());
  if (match.outsideImage > 0)
    std::fprintf(stderr, " (%lld catalog rows not on the image)",
                 static_cast<long long>(match.outsideImage));
  std::fprintf(stderr, "; slice %lld, radius %g %s\n", static_cast<long long>(match.sourcesZ),
               radius, match.sky ? "arcsec" : "pixels");
  return kOk;
}

const CommandRegistration reg{
    {"crossmatch",
     "CATALOG SOURCES.csv",
     "a catalog (CSV, IPAC, VOTable, FITS table) placed on an image and matched with its sources "
     "(segment --sources) as the viewer does: the matched table as CSV",
     {{"image", "IMG", "the FITS or TIFF image the sources were detected in (required)"},
      {"radius", "R", "the largest separation of a match, in --unit (required)"},
      {"unit", "arcsec|pixels",
       "of --radius (default arcsec when the image has a celestial WCS, else pixels)"},
      {"one-to-one", "", "each source matches at most one catalog row, the closest pairs first"},
      {"lon", "COL", "the catalog's longitude (RA) column (default: guessed as the viewer does)"},
      {"lat", "COL", "the catalog's latitude (Dec) column"},
      {"frame", "icrs|fk5|fk4|galactic|ecliptic",
       "the sky frame of --lon/--lat (default: from the column names, else fk5)"},
      {"hours", "", "the longitude column is in hours"},
      {"x", "COL", "the catalog's x pixel column (instead of --lon/--lat)"},
      {"y", "COL", "the catalog's y pixel column"},
      {"zero-based", "", "--x/--y count from 0 (default 1, as SExtractor and DS9 write them)"},
      {"table", "N", "which table of a file with several (0-based; default the first with rows)"},
      {"slice", "Z", "the slice of the sources (default: the z of the sources table, else 0)"},
      {"hdu", "N", "FITS HDU of the image (default: the first with an image)"},
      {"plane", "P", "index along the image's 4th axis, hyperstack channel or RGB sample"},
      {"output", "FILE", "write the matched table to FILE (default: stdout)"}},
     2,
     2,
     runCrossmatch}};

}  // namespace
}  // namespace stacklens::cli
