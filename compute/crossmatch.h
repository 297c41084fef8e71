// Nearest-neighbour cross-matching of two position lists (catalog ↔ detected sources), in pixels
// or on the sky, through a hash grid so that large catalogs match in near-linear time.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace stacklens::compute {

struct MatchOptions {
  double radius = 1.0;  // the largest separation of a match: arcsec when sky, else pixels
  // sky: points are (lon, lat) in degrees, separations great-circle arcsec; else (x, y) pixels.
  bool sky = false;
  // false: each a matched to its nearest b within radius (astropy's match_coordinates_sky and a
  // separation cut), so one b may serve several a. true: each b used at most once, the closest
  // pairs first.
  bool oneToOne = false;
};

struct Match {
  int64_t a = -1, b = -1;  // indices into the two lists
  double separation = 0;   // arcsec (sky) or pixels
};

struct CrossMatch {
  std::vector<Match> matched;                   // ordered by a
  std::vector<int64_t> unmatchedA, unmatchedB;  // ascending; positions with NaN are unmatched
};

CrossMatch crossMatch(const std::vector<std::array<double, 2>>& a,
                      const std::vector<std::array<double, 2>>& b, const MatchOptions& options);

// Great-circle separation in degrees (Vincenty's formula: exact at every separation).
double angularSeparation(double lon1, double lat1, double lon2, double lat2);

}  // namespace stacklens::compute
