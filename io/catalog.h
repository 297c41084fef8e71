// Catalog tables (CSV/TSV/whitespace text, IPAC, VOTable, FITS tables) read as text cells, the
// position columns guessed from names, units and UCDs, and CSV export.
#pragma once

#include <string>
#include <vector>

#include "io/io_error.h"
#include "io/wcs.h"  // SkyFrame

namespace stacklens::io {

struct CatalogTable {
  std::string name;  // the table's name (VOTable/EXTNAME), else the file's
  std::vector<std::string> columns, units, ucds;  // one each per column; "" when not given
  std::vector<std::string> datatypes;           // VOTable datatype / FITS TFORM; "" for text files
  std::vector<std::vector<std::string>> cells;  // rows × columns, as text; "" = null
  std::string note;  // which table of several was read, what was left out (e.g. "table 2 of 3")
};

// Which table of a file with several: -1 = the first with rows; otherwise the 0-based index of
// the table among the file's tables (VOTable TABLE elements in document order, FITS table HDUs).
struct CatalogReadOptions {
  int table = -1;
};

// Reads a catalog, choosing the format by content (FITS "SIMPLE", XML/VOTable, IPAC `|` header,
// else delimited text with the delimiter sniffed) and, for compressed FITS, by extension.
// IoError naming the path and the reason when it cannot be read.
CatalogTable readCatalog(const std::string& path, const CatalogReadOptions& options = {});
// The same for text already in memory (delimited text, IPAC or VOTable); name is used in errors.
CatalogTable parseCatalogText(const std::string& text, const std::string& name,
                              const CatalogReadOptions& options = {});

// The column as numbers: decimal (any sign, exponent), or sexagesimal ("12:34:56.7",
// "12 34 56.7", "12h34m56.7s", "-12d34m56s"). hours: the values are hours (RA) and come back as
// degrees (×15); "12h…" forms are hours either way. NaN for empty or unreadable cells.
std::vector<double> numericColumn(const CatalogTable& table, int column, bool hours = false);

struct PositionColumns {
  int lon = -1, lat = -1;           // sky columns (RA/Dec, GLON/GLAT, ELON/ELAT); -1 when none
  int x = -1, y = -1;               // pixel columns; -1 when none
  bool lonInHours = false;          // RA given in hours (unit h, "h:m:s", or sexagesimal text)
  SkyFrame frame = SkyFrame::Icrs;  // of lon/lat: from the names (RAJ2000 → fk5, RAB1950 → fk4…)
};
// The likeliest position columns, for a dialog to preselect: UCDs first (meta.main preferred),
// then names (ra, RAJ2000, _RAJ2000, RA_ICRS, ALPHA_J2000, dec, DEJ2000, DELTA_J2000, glon,
// X_IMAGE, xcentroid, …).
PositionColumns guessPositionColumns(const CatalogTable& table);

// The table as RFC 4180 CSV text (a header row of column names, quoting where needed).
std::string csvText(const CatalogTable& table);
// Writes the table as RFC 4180 CSV (a header row of column names, quoting where needed) through
// a temporary file renamed into place. IoError naming the path on failure.
void writeCsv(const CatalogTable& table, const std::string& path);

}  // namespace stacklens::io
