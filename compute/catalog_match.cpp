// placeCatalog, matchCatalog, matchedTable: the viewer's catalog panel without its widgets.
#include "compute/catalog_match.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace stacklens::compute {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool finite(const std::array<double, 2>& p) { return std::isfinite(p[0]) && std::isfinite(p[1]); }

std::string number(double v, int precision = 10) {
  if (!std::isfinite(v)) return {};
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", precision, v);
  return text;
}

int columnNamed(const io::CatalogTable& table, const std::string& name) {
  for (size_t k = 0; k < table.columns.size(); ++k)
    if (table.columns[k] == name) return int(k);
  return -1;
}

}  // namespace

CatalogPositions guessCatalogPositions(const io::CatalogTable& table, CatalogPositions base) {
  const io::PositionColumns guess = io::guessPositionColumns(table);
  CatalogPositions c = base;
  c.lon = guess.lon, c.lat = guess.lat, c.x = guess.x, c.y = guess.y;
  c.lonInHours = guess.lonInHours;
  const bool sky = guess.lon >= 0 && guess.lat >= 0;
  c.frame = sky && guess.frame != io::SkyFrame::Image && guess.frame != io::SkyFrame::Native
                ? guess.frame
                : (!sky && guess.x >= 0 && guess.y >= 0 ? io::SkyFrame::Image : io::SkyFrame::Fk5);
  return c;
}

CatalogPlacement placeCatalog(const io::CatalogTable& t, const CatalogPositions& c,
                              const io::Wcs* wcs, double z) {
  CatalogPlacement out;
  out.z = z;
  const size_t rows = t.cells.size();
  out.pixels.assign(rows, {kNaN, kNaN});
  out.placeable = c.valid() && (!c.sky() || (wcs && wcs->hasCelestial()));
  if (out.placeable && c.sky()) {
    const std::vector<double> lon = io::numericColumn(t, c.lon, c.lonInHours);
    const std::vector<double> lat = io::numericColumn(t, c.lat);
    for (size_t k = 0; k < rows; ++k) {
      double x = 0, y = 0;
      if (wcs->skyToPixel(c.frame, lon[k], lat[k], z, x, y)) out.pixels[k] = {x, y};
    }
  } else if (out.placeable) {
    const std::vector<double> xs = io::numericColumn(t, c.x), ys = io::numericColumn(t, c.y);
    const double origin = c.oneBased ? 1 : 0;
    for (size_t k = 0; k < rows; ++k) out.pixels[k] = {xs[k] - origin, ys[k] - origin};
  }
  for (const auto& p : out.pixels) out.skipped += !finite(p);
  return out;
}

CatalogMatchInput catalogMatchInput(const io::CatalogTable& table, const CatalogPositions& c,
                                    const CatalogPlacement& placement, const io::Wcs* wcs,
                                    int64_t width, int64_t height, std::vector<Source> sources,
                                    int64_t sourcesZ, const CatalogMatchOptions& options) {
  CatalogMatchInput in;
  CatalogMatch& out = in.match;
  out.sky = options.arcsec && wcs && wcs->hasCelestial();
  out.sourcesZ = sourcesZ;
  const std::vector<std::array<double, 2>>& positions = placement.pixels;
  auto inImage = [&](const std::array<double, 2>& p) {
    return finite(p) && (width <= 0 || (p[0] >= -0.5 && p[0] < double(width) - 0.5 &&
                                        p[1] >= -0.5 && p[1] < double(height) - 0.5));
  };
  // The catalog's rows off the image take no part (NaN: never matched).
  std::vector<std::array<double, 2>>& a = in.catalog;
  a.assign(positions.size(), {kNaN, kNaN});
  const bool skyColumns = out.sky && c.sky();
  const std::vector<double> lon =
      skyColumns ? io::numericColumn(table, c.lon, c.lonInHours) : std::vector<double>{};
  const std::vector<double> lat = skyColumns ? io::numericColumn(table, c.lat) : lon;
  for (size_t k = 0; k < positions.size(); ++k) {
    if (!inImage(positions[k])) {
      ++out.outsideImage;
      continue;
    }
    if (!out.sky)
      a[k] = positions[k];
    else if (c.sky())
      a[k] = {lon[k], lat[k]};
    else if (!wcs->celestial(positions[k][0], positions[k][1], placement.z, a[k][0], a[k][1]))
      a[k] = {kNaN, kNaN};
  }
  // Sources on the sky in the catalog's own frame (or the image's, for a pixel catalog).
  in.sources.reserve(sources.size());
  for (const Source& s : sources) {
    std::array<double, 2> p{s.centroidX, s.centroidY};
    if (out.sky) {
      const double z = double(sourcesZ);
      const bool ok = c.sky() ? wcs->pixelToSky(c.frame, s.centroidX, s.centroidY, z, p[0], p[1])
                              : wcs->celestial(s.centroidX, s.centroidY, z, p[0], p[1]);
      if (!ok) p = {kNaN, kNaN};
    }
    in.sources.push_back(p);
  }
  in.options.radius = options.radius;
  in.options.sky = out.sky;
  in.options.oneToOne = options.oneToOne;
  out.sources = std::move(sources);
  return in;
}

CatalogMatch matchCatalog(CatalogMatchInput input) {
  input.match.result = crossMatch(input.catalog, input.sources, input.options);
  return std::move(input.match);
}

CatalogMatch matchCatalog(const io::CatalogTable& table, const CatalogPositions& columns,
                          const CatalogPlacement& placement, const io::Wcs* wcs, int64_t width,
                          int64_t height, std::vector<Source> sources, int64_t sourcesZ,
                          const CatalogMatchOptions& options) {
  return matchCatalog(catalogMatchInput(table, columns, placement, wcs, width, height,
                                        std::move(sources), sourcesZ, options));
}

io::CatalogTable matchedTable(const io::CatalogTable& table, const CatalogMatch& match,
                              const io::Wcs* wcs) {
  const bool celestial = wcs && wcs->hasCelestial();
  io::CatalogTable out;
  out.name = table.name + "_matched";
  out.columns = table.columns;
  out.units = table.units;
  out.units.resize(out.columns.size());
  auto add = [&out](const char* name, const char* unit) {
    out.columns.push_back(name);
    out.units.push_back(unit);
  };
  add("source_label", "");
  add("source_x", "pix");  // 0-based, as the sources table writes them
  add("source_y", "pix");
  add("source_flux", "");
  add("source_peak", "");
  const bool galactic = celestial && wcs->celestialFrame() == io::SkyFrame::Galactic;
  if (celestial) {
    add(galactic ? "source_glon" : "source_ra", "deg");
    add(galactic ? "source_glat" : "source_dec", "deg");
  }
  add(match.sky ? "separation_arcsec" : "separation_px", match.sky ? "arcsec" : "pix");
  out.ucds.assign(out.columns.size(), "");
  out.datatypes.assign(out.columns.size(), "");
  for (const Match& m : match.result.matched) {
    std::vector<std::string> row = table.cells[size_t(m.a)];
    row.resize(table.columns.size());
    const Source& s = match.sources[size_t(m.b)];
    row.push_back(std::to_string(s.label));
    row.push_back(number(s.centroidX));
    row.push_back(number(s.centroidY));
    row.push_back(number(s.flux));
    row.push_back(number(s.peak, 8));
    if (celestial) {
      double lng = kNaN, lat = kNaN;
      wcs->celestial(s.centroidX, s.centroidY, double(match.sourcesZ), lng, lat);
      row.push_back(number(lng, 12));
      row.push_back(number(lat, 12));
    }
    row.push_back(number(m.separation, 6));
    out.cells.push_back(std::move(row));
  }
  return out;
}

int catalogColumn(const io::CatalogTable& table, const std::string& name, const std::string& file) {
  const int k = columnNamed(table, name);
  if (k < 0) throw io::IoError(file, "no column called '" + name + "'");
  return k;
}

SliceSources sourcesFromTable(const io::CatalogTable& table, const std::string& name,
                              std::optional<int64_t> slice) {
  const int label = columnNamed(table, "label"), x = columnNamed(table, "x"),
            y = columnNamed(table, "y"), z = columnNamed(table, "z");
  if (label < 0 || x < 0 || y < 0)
    throw io::IoError(name,
                      "not a sources table: it needs the columns label, x and y (0-based "
                      "pixels), as `stacklens-cli segment --sources` writes them");
  auto column = [&](const char* n) {
    const int k = columnNamed(table, n);
    return k < 0 ? std::vector<double>(table.cells.size(), 0.0) : io::numericColumn(table, k);
  };
  const std::vector<double> labels = io::numericColumn(table, label),
                            xs = io::numericColumn(table, x), ys = io::numericColumn(table, y),
                            flux = column("flux"), npix = column("npix"), peak = column("peak"),
                            zs = column("z");
  SliceSources out;
  if (slice) {
    out.z = *slice;
  } else if (z >= 0 && !zs.empty()) {
    const auto [low, high] = std::minmax_element(zs.begin(), zs.end());
    if (*low != *high)
      throw InvalidArgument(name + ": the sources of several slices (z " + number(*low) + " to " +
                            number(*high) + "): choose one");
    out.z = int64_t(*low);
  }
  for (size_t k = 0; k < table.cells.size(); ++k) {
    if (!(std::fabs(labels[k]) < 2147483648.0) || !std::isfinite(xs[k]) || !std::isfinite(ys[k]))
      throw io::IoError(
          name, "row " + std::to_string(k + 1) + " has no label, x or y: every source needs them");
    if (z >= 0 && !(zs[k] == double(out.z))) continue;
    Source s;
    s.label = int32_t(labels[k]);
    s.centroidX = xs[k], s.centroidY = ys[k];
    s.flux = flux[k];
    s.npix = std::fabs(npix[k]) < 9e18 ? int64_t(npix[k]) : 0;
    s.peak = float(peak[k]);
    s.z = out.z;
    out.sources.push_back(s);
  }
  return out;
}

}  // namespace stacklens::compute
