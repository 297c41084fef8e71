// A catalog's columns as numbers (decimal or sexagesimal) and the guess of its position columns.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "io/catalog.h"
#include "io/catalog_rows.h"
#include "io/sexagesimal.h"
#include "io/text_fields.h"

namespace stacklens::io {

namespace {

bool isSexagesimalText(const std::string& cell) {
  return !looksNumeric(cell) && parseSexagesimal(cell).has_value();
}

// The column that best matches a position, or -1. Score: UCD with meta.main 3, a listed name 2
// (earlier names first), UCD alone 1.
int bestColumn(const CatalogTable& table, const std::string& ucdWord,
               const std::vector<std::string>& names) {
  const size_t n = table.columns.size();
  auto ucd = [&](size_t c) {
    return c < table.ucds.size() ? lowerCase(table.ucds[c]) : std::string();
  };
  int best = -1;
  double bestScore = 0;
  for (size_t c = 0; c < n; ++c) {
    const std::string u = ucd(c), name = lowerCase(trimmed(table.columns[c]));
    double score = 0;
    if (!ucdWord.empty()) {
      // The UCD's first word must be the position itself (not e.g. stat.error;pos.eq.ra).
      const std::string firstWord = u.substr(0, u.find(';'));
      if (firstWord == ucdWord) score = u.find("meta.main") != std::string::npos ? 30 : 10;
    }
    for (size_t k = 0; k < names.size(); ++k)
      if (name == names[k]) score = std::max(score, 20.0 - static_cast<double>(k) / 100.0);
    if (score > bestScore) {
      bestScore = score;
      best = static_cast<int>(c);
    }
  }
  return best;
}

const std::vector<std::string>& raNames() {
  static const std::vector<std::string> names = {
      "ra",          "raj2000",         "_raj2000",    "ra_icrs",         "ra_j2000", "radeg",
      "ra_deg",      "ra2000",          "alpha_j2000", "alpha",           "ra_d",     "ra (deg)",
      "ra(deg)",     "rab1950",         "_rab1950",    "ra1950",          "ra_b1950", "alpha_b1950",
      "ra_hms",      "rahms",           "raj2000_hms", "right_ascension", "_ra",      "ra_x",
      "ra_centroid", "sky_centroid.ra", "skycoord.ra"};
  return names;
}

const std::vector<std::string>& decNames() {
  static const std::vector<std::string> names = {"dec",
                                                 "dej2000",
                                                 "_dej2000",
                                                 "decj2000",
                                                 "de_icrs",
                                                 "dec_icrs",
                                                 "dec_j2000",
                                                 "decdeg",
                                                 "dec_deg",
                                                 "dec2000",
                                                 "delta_j2000",
                                                 "delta",
                                                 "dec_d",
                                                 "dec (deg)",
                                                 "dec(deg)",
                                                 "deb1950",
                                                 "_deb1950",
                                                 "dec1950",
                                                 "dec_b1950",
                                                 "delta_b1950",
                                                 "dec_dms",
                                                 "dedms",
                                                 "dej2000_dms",
                                                 "declination",
                                                 "decl",
                                                 "de",
                                                 "_de",
                                                 "_dec",
                                                 "dec_x",
                                                 "dec_centroid",
                                                 "sky_centroid.dec",
                                                 "skycoord.dec"};
  return names;
}

// The equinox an RA column's name implies (RAJ2000 → fk5, RAB1950 → fk4), else ICRS.
SkyFrame equatorialFrameOf(const std::string& raColumn) {
  const std::string a = lowerCase(raColumn);
  if (a.find("1950") != std::string::npos) return SkyFrame::Fk4;
  if (a.find("2000") != std::string::npos) return SkyFrame::Fk5;
  return SkyFrame::Icrs;
}

// The sky columns: equatorial first, then galactic, then ecliptic; -1 for both when no pair.
void findSkyColumns(const CatalogTable& table, PositionColumns& p) {
  p.lon = bestColumn(table, "pos.eq.ra", raNames());
  p.lat = bestColumn(table, "pos.eq.dec", decNames());
  p.frame = SkyFrame::Icrs;
  if (p.lon >= 0 && p.lat >= 0) {
    p.frame = equatorialFrameOf(table.columns[static_cast<size_t>(p.lon)]);
    return;
  }
  p.lon =
      bestColumn(table, "pos.galactic.lon", {"glon", "_glon", "l", "gal_long", "glon_deg", "lii"});
  p.lat =
      bestColumn(table, "pos.galactic.lat", {"glat", "_glat", "b", "gal_lat", "glat_deg", "bii"});
  if (p.lon >= 0 && p.lat >= 0) {
    p.frame = SkyFrame::Galactic;
    return;
  }
  p.lon = bestColumn(table, "pos.ecliptic.lon", {"elon", "_elon", "ecl_lon", "elong", "lambda"});
  p.lat = bestColumn(table, "pos.ecliptic.lat", {"elat", "_elat", "ecl_lat", "elat", "beta"});
  if (p.lon >= 0 && p.lat >= 0)
    p.frame = SkyFrame::Ecliptic;
  else
    p.lon = p.lat = -1;
}

// Whether RA column c is in hours: by its unit, or with no unit by its first non-empty cell
// (sexagesimal text in an RA column is hours).
bool raInHours(const CatalogTable& table, size_t c) {
  const std::string unit = c < table.units.size() ? lowerCase(trimmed(table.units[c])) : "";
  std::string u = unit;
  u.erase(std::remove(u.begin(), u.end(), '"'), u.end());
  if (u == "h" || u == "hour" || u == "hours" || u == "hr" || u == "hms" || u == "h:m:s" ||
      u == "hourangle" || u == "h m s")
    return true;
  if (!u.empty()) return false;
  for (const auto& row : table.cells) {
    if (c >= row.size() || trimmed(row[c]).empty()) continue;
    return isSexagesimalText(row[c]);
  }
  return false;
}

// The pixel columns, both or neither.
void findPixelColumns(const CatalogTable& table, PositionColumns& p) {
  p.x = bestColumn(table, "pos.cartesian.x",
                   {"x", "x_image", "xcentroid", "x_centroid", "xcenter", "x_center", "xwin_image",
                    "x_pix", "xpix", "xpos", "x_pos", "peak_x", "x_world_pix", "col", "column"});
  p.y = bestColumn(table, "pos.cartesian.y",
                   {"y", "y_image", "ycentroid", "y_centroid", "ycenter", "y_center", "ywin_image",
                    "y_pix", "ypix", "ypos", "y_pos", "peak_y", "y_world_pix", "row", "line"});
  if (p.x < 0 || p.y < 0) p.x = p.y = -1;
}

}  // namespace

std::vector<double> numericColumn(const CatalogTable& table, int column, bool hours) {
  std::vector<double> out(table.cells.size(), std::numeric_limits<double>::quiet_NaN());
  if (column < 0 || column >= static_cast<int>(table.columns.size())) return out;
  for (size_t r = 0; r < table.cells.size(); ++r) {
    const auto& row = table.cells[r];
    if (static_cast<size_t>(column) >= row.size()) continue;
    const std::string cell = trimmed(row[static_cast<size_t>(column)]);
    double v = 0;
    if (parseNumber(cell, v)) {
      out[r] = hours ? v * 15.0 : v;
    } else if (const auto angle = parseSexagesimal(cell)) {
      out[r] = hours || angle->hours ? angle->value * 15.0 : angle->value;
    }
  }
  return out;
}

PositionColumns guessPositionColumns(const CatalogTable& table) {
  PositionColumns p;
  findSkyColumns(table, p);
  if (p.lon >= 0 && p.frame != SkyFrame::Galactic && p.frame != SkyFrame::Ecliptic)
    p.lonInHours = raInHours(table, static_cast<size_t>(p.lon));
  findPixelColumns(table, p);
  return p;
}

}  // namespace stacklens::io
