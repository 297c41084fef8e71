// read_regions, read_catalog, crossmatch: DS9 regions and catalogs placed on an image and
// matched with its sources as the viewer and `stacklens-cli regions` / `crossmatch` do
// (io/region_placement.h, compute/catalog_match.h).
#include <pybind11/stl.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "compute/catalog_match.h"
#include "io/catalog.h"
#include "io/region_placement.h"
#include "io/stack.h"
#include "python/src/arrays.h"
#include "python/src/operations.h"

namespace stacklens::python {
namespace {

using namespace pybind11::literals;

py::object points(const std::vector<std::array<double, 2>>& p) {
  py::list out;
  for (const auto& q : p) out.append(py::make_tuple(q[0], q[1]));
  return out;
}

std::unique_ptr<io::StackReader> openImage(const std::string& path, std::optional<int> hdu,
                                           int plane) {
  io::OpenOptions options;
  options.hdu = hdu.value_or(-1);
  options.plane = plane;
  return io::openStack(path, options);
}

py::dict tableDict(const io::CatalogTable& t) {
  py::dict d;
  d["name"] = t.name;
  d["columns"] = t.columns;
  d["units"] = t.units;
  d["ucds"] = t.ucds;
  d["datatypes"] = t.datatypes;
  d["rows"] = t.cells;
  d["note"] = t.note;
  return d;
}

// A sources table: the path of a `segment --sources` CSV, or segment()'s dict of columns.
io::CatalogTable sourcesTable(const py::handle& sources, std::string& name) {
  if (!py::isinstance<py::dict>(sources)) {
    name = py::str(py::module_::import("os").attr("fspath")(sources));
    return io::readCatalog(name);
  }
  name = "sources";
  const py::dict d = py::reinterpret_borrow<py::dict>(sources);
  io::CatalogTable t;
  auto add = [&](const char* column, std::initializer_list<const char*> keys) {
    for (const char* key : keys)
      if (d.contains(key)) {
        const auto v = py::array_t<double, py::array::forcecast>::ensure(d[key]);
        if (!v || v.ndim() != 1)
          throw compute::InvalidArgument(std::string("sources['") + key +
                                         "']: expected a 1D column of numbers");
        if (!t.columns.empty() && size_t(v.shape(0)) != t.cells.size())
          throw compute::InvalidArgument(std::string("sources['") + key +
                                         "']: not as long as the other columns");
        t.cells.resize(size_t(v.shape(0)));
        for (size_t i = 0; i < t.cells.size(); ++i) {
          char text[32];
          std::snprintf(text, sizeof text, "%.17g", v.at(py::ssize_t(i)));
          t.cells[i].push_back(text);
        }
        t.columns.push_back(column);
        return;
      }
  };
  add("label", {"label"});
  add("x", {"x_centroid", "x"});
  add("y", {"y_centroid", "y"});
  add("flux", {"flux"});
  add("npix", {"npix"});
  add("peak", {"peak"});
  add("z", {"z"});
  for (auto& row : t.cells) row.resize(t.columns.size());
  t.units.assign(t.columns.size(), "");
  return t;
}

// read_regions: a DS9 region file placed on an image as the viewer draws it, one dict a region.
void addReadRegions(py::module_& m) {
  m.def(
      "read_regions",
      [](const py::handle& path, const py::handle& image, std::optional<int> hdu, int plane,
         int64_t slice) {
        const std::string file = py::str(py::module_::import("os").attr("fspath")(path));
        std::unique_ptr<io::StackReader> reader;
        if (!image.is_none())
          reader = openImage(py::str(py::module_::import("os").attr("fspath")(image)), hdu, plane);
        if (reader && (slice < 0 || slice >= reader->info().z))
          throw compute::InvalidArgument("slice: " + std::to_string(slice) + " is outside 0.." +
                                         std::to_string(reader->info().z - 1));
        const io::Wcs* wcs = reader ? reader->wcs() : nullptr;
        const io::PhysicalToImage physical =
            reader ? io::PhysicalToImage::fromHeader(reader->info().header) : io::PhysicalToImage{};
        io::RegionPlacement placement;
        {
          py::gil_scoped_release release;
          placement = io::placeRegions(io::readDs9Regions(file), wcs, double(slice), physical);
        }
        for (const std::string& w : placement.warnings)
          if (PyErr_WarnEx(PyExc_UserWarning, (file + ": " + w).c_str(), 1) != 0)
            throw py::error_already_set();
        const bool celestial = wcs && wcs->hasCelestial();
        py::list out;
        for (const io::PlacedRegion& p : placement.regions) {
          const io::PixelRegion& r = p.pixels;
          py::dict d;
          d["line"] = r.line;
          d["shape"] = io::regionShapeName(r.shape);
          d["pixels"] = points(r.points);
          d["sizes"] = r.sizes;
          d["angles"] = r.angles;
          d["angle"] = r.angle;
          d["sky"] = celestial ? points(io::skyPoints(r, wcs, double(slice))) : py::none();
          d["sky_frame"] =
              celestial ? py::cast(io::skyFrameName(wcs->celestialFrame())) : py::none();
          d["text"] = r.text;
          d["color"] = r.color;
          d["tag"] = r.tag;
          d["exclude"] = r.exclude;
          d["source"] = r.source;
          out.append(d);
        }
        return out;
      },
      "path"_a, "image"_a = py::none(), py::kw_only(), "hdu"_a = py::none(), "plane"_a = 0,
      "slice"_a = 0,
      R"(The regions of a DS9 region file placed on image (a FITS or TIFF path) at slice as the
viewer draws them and `stacklens-cli regions` writes them: a list of dicts with line, shape
('circle', 'ellipse', 'box', 'polygon', 'point', 'line', 'text', 'annulus', 'ellipse annulus',
'box annulus', 'panda', 'epanda', 'bpanda'), pixels (0-based (x, y) of the centre, vertices or
end points), sizes (pixels: circle (r,), ellipse (a, b) semi-axes, box (w, h); annuli every
ring's radii or axes, ascending), angles (a panda's sector edges, degrees), angle (degrees ccw
from +x), sky (the points' (lon, lat) in degrees in sky_frame, the
image's celestial frame; None without one), text, color, tag, exclude, source. Without an image
only image-frame regions are placed. Lines left out or changed are UserWarnings.)");
}

// read_catalog: a catalog as the viewer reads it, with the position columns it would preselect.
void addReadCatalog(py::module_& m) {
  m.def(
      "read_catalog",
      [](const py::handle& path, std::optional<int> table) {
        const std::string file = py::str(py::module_::import("os").attr("fspath")(path));
        io::CatalogReadOptions options;
        options.table = table.value_or(-1);
        io::CatalogTable t;
        {
          py::gil_scoped_release release;
          t = io::readCatalog(file, options);
        }
        py::dict d = tableDict(t);
        const compute::CatalogPositions c = compute::guessCatalogPositions(t);
        py::dict guess;
        auto name = [&](int k) { return k >= 0 ? py::cast(t.columns[size_t(k)]) : py::none(); };
        guess["lon"] = name(c.lon);
        guess["lat"] = name(c.lat);
        guess["x"] = name(c.x);
        guess["y"] = name(c.y);
        guess["frame"] = io::skyFrameName(c.frame);
        guess["lon_in_hours"] = c.lonInHours;
        d["positions"] = guess;
        return d;
      },
      "path"_a, py::kw_only(), "table"_a = py::none(),
      R"(A catalog (CSV/TSV/text, IPAC, VOTable, FITS table) as the viewer reads it: a dict with
name, columns, units, ucds, datatypes, rows (lists of the cells as text; '' for null), note
(which table of several, what was left out) and positions, the position columns the viewer
preselects (lon, lat or x, y by name; frame; lon_in_hours). table: which table of a file with
several (0-based; default the first with rows).)");
}

// The catalog's position columns: the viewer's guess unless lon/lat (sky) or x/y (pixels) name
// them, with frame, hours and zero_based applied; checked before the match, which needs columns
// it can place.
compute::CatalogPositions positionColumns(const io::CatalogTable& t, const std::string& catalogFile,
                                          const std::optional<std::string>& lon,
                                          const std::optional<std::string>& lat,
                                          const std::optional<std::string>& frame, bool hours,
                                          const std::optional<std::string>& x,
                                          const std::optional<std::string>& y, bool zeroBased) {
  compute::CatalogPositions c = compute::guessCatalogPositions(t);
  if ((lon || lat) && (x || y))
    throw compute::InvalidArgument("give lon and lat (sky) or x and y (pixels), not both");
  if (lon || lat) {
    if (!lon || !lat) throw compute::InvalidArgument("lon and lat go together");
    const int k = compute::catalogColumn(t, *lon, catalogFile);
    c.lonInHours = k == c.lon && c.lonInHours;
    c.lon = k, c.lat = compute::catalogColumn(t, *lat, catalogFile);
    if (!c.sky()) c.frame = io::SkyFrame::Fk5;
  } else if (x || y) {
    if (!x || !y) throw compute::InvalidArgument("x and y go together");
    c.x = compute::catalogColumn(t, *x, catalogFile);
    c.y = compute::catalogColumn(t, *y, catalogFile);
    c.frame = io::SkyFrame::Image;
  }
  if (frame) {
    bool known = false;
    for (io::SkyFrame f : {io::SkyFrame::Icrs, io::SkyFrame::Fk5, io::SkyFrame::Fk4,
                           io::SkyFrame::Galactic, io::SkyFrame::Ecliptic})
      if (*frame == io::skyFrameName(f)) c.frame = f, known = true;
    if (!known || !c.sky())
      throw compute::InvalidArgument(
          "frame: expected icrs, fk5, fk4, galactic or ecliptic for sky columns");
  }
  c.lonInHours = c.lonInHours || hours;
  c.oneBased = !zeroBased;
  if (!c.valid())
    throw io::IoError(catalogFile, "no position columns found: name them (lon, lat or x, y)");
  return c;
}

// crossmatch's result: NumPy arrays for the matches and the rows and sources left over (what a
// script indexes with), and the matched table as read_catalog gives tables (what it writes).
py::dict matchDict(const compute::CatalogMatch& match, const io::CatalogTable& matched) {
  const size_t n = match.result.matched.size();
  const std::vector<py::ssize_t> dims{py::ssize_t(n)};
  py::array_t<int64_t> rows(dims, stridesOf(dims, 8)), src(dims, stridesOf(dims, 8));
  py::array_t<double> separation(dims, stridesOf(dims, 8));
  for (size_t i = 0; i < n; ++i) {
    rows.mutable_at(py::ssize_t(i)) = match.result.matched[i].a;
    src.mutable_at(py::ssize_t(i)) = match.result.matched[i].b;
    separation.mutable_at(py::ssize_t(i)) = match.result.matched[i].separation;
  }
  auto indices = [](const std::vector<int64_t>& v) {
    const std::vector<py::ssize_t> d{py::ssize_t(v.size())};
    py::array_t<int64_t> a(d, stridesOf(d, 8));
    for (size_t i = 0; i < v.size(); ++i) a.mutable_at(py::ssize_t(i)) = v[i];
    return a;
  };
  py::dict out;
  out["catalog_row"] = rows;
  out["source"] = src;
  out["separation"] = separation;
  out["unit"] = match.sky ? "arcsec" : "pixels";
  out["unmatched_catalog"] = indices(match.result.unmatchedA);
  out["unmatched_sources"] = indices(match.result.unmatchedB);
  out["outside_image"] = match.outsideImage;
  out["slice"] = match.sourcesZ;
  out["table"] = tableDict(matched);
  return out;
}

// crossmatch: a catalog placed on an image and matched with segment()'s sources, as the
// viewer and `stacklens-cli crossmatch` match them.
void addCrossmatch(py::module_& m) {
  m.def(
      "crossmatch",
      [](const py::handle& catalog, const py::handle& sources, const py::handle& image,
         double radius, std::optional<std::string> unit, bool oneToOne,
         std::optional<std::string> lon, std::optional<std::string> lat,
         std::optional<std::string> frame, bool hours, std::optional<std::string> x,
         std::optional<std::string> y, bool zeroBased, std::optional<int> table,
         std::optional<int64_t> slice, std::optional<int> hdu, int plane) {
        if (!(radius > 0)) throw compute::InvalidArgument("radius: expected a positive number");
        const std::string catalogFile = py::str(py::module_::import("os").attr("fspath")(catalog));
        const auto reader =
            openImage(py::str(py::module_::import("os").attr("fspath")(image)), hdu, plane);
        const io::StackInfo& info = reader->info();
        const io::Wcs* wcs = reader->wcs();
        const bool celestial = wcs && wcs->hasCelestial();
        const std::string u = unit.value_or(celestial ? "arcsec" : "pixels");
        if (u != "arcsec" && u != "pixels")
          throw compute::InvalidArgument("unit: expected 'arcsec' or 'pixels'");
        if (u == "arcsec" && !celestial)
          throw io::IoError(info.path, "no celestial WCS: a radius in arcsec cannot be placed");
        if (slice && (*slice < 0 || *slice >= info.z))
          throw compute::InvalidArgument("slice: " + std::to_string(*slice) + " is outside 0.." +
                                         std::to_string(info.z - 1));
        io::CatalogReadOptions read;
        read.table = table.value_or(-1);
        const io::CatalogTable t = io::readCatalog(catalogFile, read);
        const compute::CatalogPositions c =
            positionColumns(t, catalogFile, lon, lat, frame, hours, x, y, zeroBased);
        std::string sourcesName;
        const io::CatalogTable st = sourcesTable(sources, sourcesName);
        compute::SliceSources s = compute::sourcesFromTable(st, sourcesName, slice);
        if (s.z < 0 || s.z >= info.z)
          throw compute::InvalidArgument(sourcesName + ": its sources are of slice " +
                                         std::to_string(s.z) + ", outside the image");
        compute::CatalogMatch match;
        io::CatalogTable matched;
        {
          py::gil_scoped_release release;
          const compute::CatalogPlacement placed = compute::placeCatalog(t, c, wcs, double(s.z));
          match = compute::matchCatalog(t, c, placed, wcs, info.x, info.y, std::move(s.sources),
                                        s.z, {radius, u == "arcsec", oneToOne});
          matched = compute::matchedTable(t, match, wcs);
        }
        return matchDict(match, matched);
      },
      "catalog"_a, "sources"_a, "image"_a, "radius"_a, py::kw_only(), "unit"_a = py::none(),
      "one_to_one"_a = false, "lon"_a = py::none(), "lat"_a = py::none(), "frame"_a = py::none(),
      "hours"_a = false, "x"_a = py::none(), "y"_a = py::none(), "zero_based"_a = false,
      "table"_a = py::none(), "slice"_a = py::none(), "hdu"_a = py::none(), "plane"_a = 0,
      R"(A catalog placed on image (a FITS or TIFF path) and matched with its sources as the viewer
does and `stacklens-cli crossmatch` writes it: each catalog row on the image to its nearest
source within radius (arcsec on the sky when the image has a celestial WCS, else pixels; unit
says which), one_to_one: each source at most once, the closest pairs first. sources: a
`segment --sources` CSV path, or segment()'s dict of columns (label, x_centroid, y_centroid,
flux, peak, npix, z); those of slice (default: the table's only z). Position columns are the
viewer's guess unless lon/lat (frame, hours) or x/y (1-based unless zero_based) name them.
Returns a dict: catalog_row, source (index into the slice's sources) and separation as NumPy
arrays of the matches, unmatched_catalog, unmatched_sources, outside_image (catalog rows off
the image), unit, slice, and table: the matched table as read_catalog gives tables (the
catalog's columns, then source_label, source_x, source_y, source_flux, source_peak, source_ra,
source_dec or source_glon, source_glat, separation_arcsec or separation_px).)");
}

}  // namespace

void addCatalogs(py::module_& m) {
  addReadRegions(m);
  addReadCatalog(m);
  addCrossmatch(m);
}

}  // namespace stacklens::python
