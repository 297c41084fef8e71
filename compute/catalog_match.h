// A catalog placed on an image and cross-matched with the sources detected in it: the Qt-free
// core of the viewer's catalog panel, shared with `stacklens-cli crossmatch` and
// stacklens.crossmatch so that all three place and match alike. It sits on io (tables, WCS) and
// compute (crossMatch, Source), in a library of its own (stacklens_catalog_match) so that
// neither of those depends on the other.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compute/crossmatch.h"
#include "compute/params.h"
#include "io/catalog.h"
#include "io/wcs.h"

namespace stacklens::compute {

// Which columns hold a catalog's positions and how to read them.
struct CatalogPositions {
  int lon = -1, lat = -1;  // column indexes of sky positions (frame is a sky frame)
  int x = -1, y = -1;      // column indexes of pixel positions (frame is Image)
  bool lonInHours = false;
  io::SkyFrame frame = io::SkyFrame::Fk5;
  // Pixel columns count from 1 at the first pixel's centre, as SExtractor and DS9 write them.
  bool oneBased = true;
  bool sky() const { return frame != io::SkyFrame::Image; }
  bool valid() const { return sky() ? lon >= 0 && lat >= 0 : x >= 0 && y >= 0; }
};

// The columns guessed from names, units and UCDs (io::guessPositionColumns): sky columns in
// their frame (FK5 when the names say none), else pixel columns; oneBased is left as given.
CatalogPositions guessCatalogPositions(const io::CatalogTable& table, CatalogPositions base = {});

struct CatalogPlacement {
  std::vector<std::array<double, 2>> pixels;  // per row, 0-based; NaN where it has no position
  bool placeable = false;  // columns chosen, and a celestial WCS where they are sky columns
  int64_t skipped = 0;     // rows without a position
  double z = 0;            // the slice they were placed at
};

// Each row's pixel position at slice z: sky columns through the WCS, pixel columns as they are.
CatalogPlacement placeCatalog(const io::CatalogTable& table, const CatalogPositions& columns,
                              const io::Wcs* wcs, double z);

struct CatalogMatchOptions {
  double radius = 5;   // arcsec when arcsec (and the image has a celestial WCS), else pixels
  bool arcsec = true;  // taken as false without a celestial WCS
  bool oneToOne = false;
};

struct CatalogMatch {
  CrossMatch result;            // a: catalog rows, b: sources
  bool sky = false;             // separations in arcsec on the sky, else pixels
  int64_t outsideImage = 0;     // catalog rows off the image (in result.unmatchedA too)
  std::vector<Source> sources;  // the sources matched against (b indexes them)
  int64_t sourcesZ = 0;
};

// What crossMatch is given: the catalog rows that fall on the width × height image (all when
// width is 0; NaN for the others) and the sources of slice sourcesZ, on the sky in the catalog's
// frame (the image's for pixel catalogs) when options.arcsec and the WCS is celestial, else in
// pixels. Made where the WCS lives (the viewer's GUI thread).
struct CatalogMatchInput {
  std::vector<std::array<double, 2>> catalog, sources;
  MatchOptions options;
  CatalogMatch match;  // everything but result
};
CatalogMatchInput catalogMatchInput(const io::CatalogTable& table, const CatalogPositions& columns,
                                    const CatalogPlacement& placement, const io::Wcs* wcs,
                                    int64_t width, int64_t height, std::vector<Source> sources,
                                    int64_t sourcesZ, const CatalogMatchOptions& options);
// The match itself (no WCS: any thread).
CatalogMatch matchCatalog(CatalogMatchInput input);
// Both.
CatalogMatch matchCatalog(const io::CatalogTable& table, const CatalogPositions& columns,
                          const CatalogPlacement& placement, const io::Wcs* wcs, int64_t width,
                          int64_t height, std::vector<Source> sources, int64_t sourcesZ,
                          const CatalogMatchOptions& options);

// The matched rows: the catalog's columns, then the source's label, 0-based x and y, flux, peak,
// its RA/Dec (or GLON/GLAT) when the WCS is celestial, and the separation (arcsec or pixels).
io::CatalogTable matchedTable(const io::CatalogTable& table, const CatalogMatch& match,
                              const io::Wcs* wcs);

// The index of the column called name; IoError (path file) naming it when there is none.
int catalogColumn(const io::CatalogTable& table, const std::string& name, const std::string& file);

// Sources from a table as compute::sourcesCsv writes it (label, x, y, flux, npix, peak, …, and z
// when present; only label, x and y are required), those of one slice: slice when given (rows
// of another z left out), else the table's only z. IoError (path name) for a table that is not
// a sources table; InvalidArgument when no slice is given and the table has several.
struct SliceSources {
  std::vector<Source> sources;
  int64_t z = 0;
};
SliceSources sourcesFromTable(const io::CatalogTable& table, const std::string& name,
                              std::optional<int64_t> slice);

}  // namespace stacklens::compute
