// Cross-matching: the grid search against brute force (pixels, the sky across RA 0/360 and
// near the poles, one-to-one), and the bundled radio cube's catalog against the sources that
// segmenting the cube finds.
#include "compute/crossmatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "compute/backend.h"
#include "compute/params.h"
#include "io/catalog.h"
#include "io/ds9_regions.h"
#include "io/stack.h"
#include "io/wcs.h"

using namespace stacklens::compute;
using Points = std::vector<std::array<double, 2>>;

namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;

// Haversine: an independent formula for the same separation (arcsec).
double haversineArcsec(const std::array<double, 2>& p, const std::array<double, 2>& q) {
  const double dlat = (q[1] - p[1]) * kDeg, dlon = (q[0] - p[0]) * kDeg;
  const double h =
      std::sin(dlat / 2) * std::sin(dlat / 2) +
      std::cos(p[1] * kDeg) * std::cos(q[1] * kDeg) * std::sin(dlon / 2) * std::sin(dlon / 2);
  return 2 * std::asin(std::min(1.0, std::sqrt(h))) / kDeg * 3600;
}

double separation(const std::array<double, 2>& p, const std::array<double, 2>& q, bool sky) {
  if (!sky) return std::hypot(p[0] - q[0], p[1] - q[1]);
  return angularSeparation(p[0], p[1], q[0], q[1]) * 3600;
}

bool valid(const std::array<double, 2>& p) { return std::isfinite(p[0]) && std::isfinite(p[1]); }

// Every pair of the two lists: the nearest b of each a, or greedy closest-first pairs.
CrossMatch bruteForce(const Points& a, const Points& b, const MatchOptions& o) {
  CrossMatch out;
  std::vector<Match> pairs;
  for (size_t i = 0; i < a.size(); ++i) {
    Match best{int64_t(i), -1, std::numeric_limits<double>::infinity()};
    for (size_t j = 0; j < b.size(); ++j) {
      if (!valid(a[i]) || !valid(b[j])) continue;
      const double s = separation(a[i], b[j], o.sky);
      if (s > o.radius) continue;
      pairs.push_back({int64_t(i), int64_t(j), s});
      if (s < best.separation) best = {int64_t(i), int64_t(j), s};
    }
    if (!o.oneToOne && best.b >= 0) out.matched.push_back(best);
  }
  if (o.oneToOne) {
    std::sort(pairs.begin(), pairs.end(), [](const Match& x, const Match& y) {
      return x.separation != y.separation ? x.separation < y.separation
                                          : (x.a != y.a ? x.a < y.a : x.b < y.b);
    });
    std::vector<bool> ua(a.size()), ub(b.size());
    for (const Match& m : pairs)
      if (!ua[size_t(m.a)] && !ub[size_t(m.b)]) {
        ua[size_t(m.a)] = ub[size_t(m.b)] = true;
        out.matched.push_back(m);
      }
    std::sort(out.matched.begin(), out.matched.end(),
              [](const Match& x, const Match& y) { return x.a < y.a; });
  }
  std::vector<bool> ua(a.size()), ub(b.size());
  for (const Match& m : out.matched) ua[size_t(m.a)] = ub[size_t(m.b)] = true;
  for (size_t i = 0; i < a.size(); ++i)
    if (!ua[i]) out.unmatchedA.push_back(int64_t(i));
  for (size_t j = 0; j < b.size(); ++j)
    if (!ub[j]) out.unmatchedB.push_back(int64_t(j));
  return out;
}

void expectSame(const CrossMatch& got, const CrossMatch& want, const std::string& what) {
  ASSERT_EQ(got.matched.size(), want.matched.size()) << what;
  for (size_t k = 0; k < got.matched.size(); ++k) {
    EXPECT_EQ(got.matched[k].a, want.matched[k].a) << what << " " << k;
    EXPECT_EQ(got.matched[k].b, want.matched[k].b) << what << " " << k;
    EXPECT_NEAR(got.matched[k].separation, want.matched[k].separation, 1e-9) << what;
  }
  EXPECT_EQ(got.unmatchedA, want.unmatchedA) << what;
  EXPECT_EQ(got.unmatchedB, want.unmatchedB) << what;
}

// b: a scattered by up to `scatter` and shuffled, plus distractors; a few NaN positions.
void makeSky(std::mt19937& rng, double lon0, double lon1, double lat0, double lat1, size_t n,
             double scatterArcsec, Points& a, Points& b) {
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = 0; i < n; ++i) {
    double lon = lon0 + (lon1 - lon0) * u(rng);
    lon = std::fmod(lon + 360.0, 360.0);
    const double lat = std::asin(std::sin(lat0 * kDeg) +
                                 (std::sin(lat1 * kDeg) - std::sin(lat0 * kDeg)) * u(rng)) /
                       kDeg;
    a.push_back({lon, lat});
    if (u(rng) < 0.8) {
      // An offset of up to `scatter` in a random direction.
      const double d = scatterArcsec / 3600 * u(rng) * kDeg, pa = 2 * M_PI * u(rng);
      const double p1 = lat * kDeg;
      const double lat2 =
          std::asin(std::sin(p1) * std::cos(d) + std::cos(p1) * std::sin(d) * std::cos(pa));
      const double dl = std::atan2(std::sin(pa) * std::sin(d) * std::cos(p1),
                                   std::cos(d) - std::sin(p1) * std::sin(lat2));
      b.push_back({std::fmod(lon + dl / kDeg + 720.0, 360.0), lat2 / kDeg});
    }
  }
  std::shuffle(b.begin(), b.end(), rng);
  a.push_back({std::nan(""), 10.0});
  b.push_back({10.0, std::nan("")});
}

}  // namespace

TEST(CrossMatch, PixelsMatchBruteForce) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1000);
  Points a, b;
  for (int i = 0; i < 3000; ++i) a.push_back({u(rng), u(rng)});
  for (int i = 0; i < 2500; ++i) b.push_back({u(rng), u(rng)});
  a.push_back({std::nan(""), 1.0});
  b.push_back({-1e300, 1e300});  // too far out for a grid cell: still handled
  for (bool oneToOne : {false, true})
    for (double radius : {0.5, 5.0, 40.0}) {
      const MatchOptions o{radius, false, oneToOne};
      expectSame(crossMatch(a, b, o), bruteForce(a, b, o),
                 "r=" + std::to_string(radius) + (oneToOne ? " 1:1" : ""));
    }
}

TEST(CrossMatch, SkyMatchesBruteForceAcrossRaWrapAndPoles) {
  struct Field {
    const char* name;
    double lon0, lon1, lat0, lat1;
  };
  const Field fields[] = {{"ra wrap", -0.2, 0.2, -0.2, 0.2},
                          {"north pole", 0, 360, 89.8, 90},
                          {"south pole", 0, 360, -90, -89.9},
                          {"mid sky", 120, 120.5, 40, 40.4}};
  for (const Field& f : fields) {
    std::mt19937 rng(5);
    Points a, b;
    makeSky(rng, f.lon0, f.lon1, f.lat0, f.lat1, 800, 30, a, b);
    for (bool oneToOne : {false, true})
      for (double radius : {2.0, 20.0, 120.0}) {
        const MatchOptions o{radius, true, oneToOne};
        const CrossMatch got = crossMatch(a, b, o);
        expectSame(got, bruteForce(a, b, o),
                   std::string(f.name) + " r=" + std::to_string(radius) + (oneToOne ? " 1:1" : ""));
        for (const Match& m : got.matched)
          EXPECT_NEAR(m.separation, haversineArcsec(a[size_t(m.a)], b[size_t(m.b)]), 1e-6);
      }
  }
  // A pair straddling RA 0/360 and one across the pole.
  const auto m =
      crossMatch({{359.9999, 0}, {0, 89.9999}}, {{0.0001, 0}, {180, 89.9999}}, {1.0, true, false});
  ASSERT_EQ(m.matched.size(), 2u);
  EXPECT_NEAR(m.matched[0].separation, 0.72, 1e-6);
  EXPECT_NEAR(m.matched[1].separation, 0.72, 1e-6);
}

TEST(CrossMatch, OneToOneGivesEachBToItsClosestA) {
  // Two a near one b: without oneToOne both take it; with it the closer keeps it.
  const Points a = {{0, 0}, {1, 0}}, b = {{0.8, 0}};
  CrossMatch m = crossMatch(a, b, {2.0, false, false});
  ASSERT_EQ(m.matched.size(), 2u);
  EXPECT_TRUE(m.unmatchedB.empty());
  m = crossMatch(a, b, {2.0, false, true});
  ASSERT_EQ(m.matched.size(), 1u);
  EXPECT_EQ(m.matched[0].a, 1);
  EXPECT_EQ(m.unmatchedA, (std::vector<int64_t>{0}));
  EXPECT_TRUE(crossMatch(a, {}, {2.0, false, false}).matched.empty());
  EXPECT_EQ(crossMatch(a, {}, {2.0, false, false}).unmatchedA.size(), 2u);
}

// The bundled radio cube: its catalog (written with the cube by stacklens-make-samples) against
// the sources found by segmenting the channel average. The catalog's pixel columns must agree
// with its sky columns through the cube's WCS, nearly every injected source must be found
// within a pixel, and a catalog shifted by 5 pixels must not match.
TEST(CrossMatch, RadioCubeCatalogMatchesSegmentedSources) {
  namespace io = stacklens::io;
  const std::string dir = STACKLENS_SAMPLE_DIR;
  const io::CatalogTable catalog = io::readCatalog(dir + "/radio_cube_sources.csv");
  ASSERT_EQ(catalog.cells.size(), 40u);
  const io::PositionColumns columns = io::guessPositionColumns(catalog);
  ASSERT_EQ(catalog.columns[size_t(columns.lon)], "ra");
  ASSERT_EQ(catalog.columns[size_t(columns.lat)], "dec");
  EXPECT_FALSE(columns.lonInHours);
  const auto ra = io::numericColumn(catalog, columns.lon);
  const auto dec = io::numericColumn(catalog, columns.lat);
  const auto raHms = io::numericColumn(catalog, 3, true);
  const auto decDms = io::numericColumn(catalog, 4);
  const auto xs = io::numericColumn(catalog, columns.x), ys = io::numericColumn(catalog, columns.y);

  const auto reader = io::openStack(dir + "/radio_cube.fits");
  const io::Wcs* wcs = reader->wcs();
  ASSERT_TRUE(wcs && wcs->hasCelestial());
  Points cat;
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_NEAR(raHms[i], ra[i], 0.0001 * 15 / 3600 * 0.51 + 1e-12) << i;
    EXPECT_NEAR(decDms[i], dec[i], 0.001 / 3600 * 0.51 + 1e-12) << i;
    double x = 0, y = 0;
    ASSERT_TRUE(wcs->worldToPixel(ra[i], dec[i], 0, x, y));
    EXPECT_NEAR(x, xs[i], 1e-5) << i;
    EXPECT_NEAR(y, ys[i], 1e-5) << i;
    cat.push_back({ra[i], dec[i]});
  }

  // The DS9 regions written beside it circle the same pixels.
  const io::RegionFile regions = io::readDs9Regions(dir + "/radio_cube_sources.reg");
  EXPECT_TRUE(regions.warnings.empty());
  const auto circles = io::regionsInPixels(regions.regions, wcs, 0, nullptr);
  ASSERT_EQ(circles.size(), cat.size());
  for (size_t i = 0; i < circles.size(); ++i) {
    EXPECT_NEAR(circles[i].points[0][0], xs[i], 1e-4) << i;
    EXPECT_NEAR(circles[i].points[0][1], ys[i], 1e-4) << i;
    EXPECT_NEAR(circles[i].sizes[0], 2.0, 1e-3);  // 8″ at 4″ per pixel
    EXPECT_EQ(circles[i].text, catalog.cells[i][0]);
  }

  const io::StackInfo& info = reader->info();
  Image mean = Image::host({1, info.y, info.x});
  std::vector<float> slice(size_t(info.y * info.x));
  for (int64_t z = 0; z < info.z; ++z) {
    reader->readSlice(z, slice.data());
    for (size_t i = 0; i < slice.size(); ++i) mean.data()[i] += slice[i] / float(info.z);
  }
  auto backend = makeCpuBackend(2);
  SegmentParams params;
  // 10σ of the channel average (σ ≈ 0.2 mJy/beam): the faintest sources (4 mJy/beam) stand
  // out, and blends stay fewer than at 5σ.
  params.nSigma = 10;
  params.minPixels = 4;
  const Segmentation seg = backend->segment(mean, params);
  Points found;
  for (const Source& s : seg.sources) {
    double l = 0, b = 0;
    ASSERT_TRUE(wcs->celestial(s.centroidX, s.centroidY, 0, l, b));
    found.push_back({l, b});
  }
  const CrossMatch m = crossMatch(cat, found, {4.0, true, true});  // one pixel
  // The sources segmentation must find on their own: away from each other (blends give one
  // centroid between them), from the rotating disk at (64, 64) and the extended source at
  // (35, 90), and brighter than the threshold by a margin.
  const auto peaks = io::numericColumn(catalog, 7);
  std::vector<bool> matchedA(cat.size(), false);
  for (const Match& x : m.matched) {
    matchedA[size_t(x.a)] = true;
    EXPECT_LT(x.separation, 4.0);
  }
  size_t isolated = 0, isolatedMatched = 0;
  for (size_t i = 0; i < cat.size(); ++i) {
    bool alone = peaks[i] > 2 * seg.threshold && std::hypot(xs[i] - 64, ys[i] - 64) > 26 &&
                 std::hypot(xs[i] - 35, ys[i] - 90) > 30;
    for (size_t j = 0; j < cat.size(); ++j)
      if (j != i && std::hypot(xs[i] - xs[j], ys[i] - ys[j]) < 10) alone = false;
    if (!alone) continue;
    ++isolated;
    if (matchedA[i]) ++isolatedMatched;
    EXPECT_TRUE(matchedA[i]) << catalog.cells[i][0] << " at " << xs[i] << ", " << ys[i];
  }
  std::vector<double> seps;
  for (const Match& x : m.matched) seps.push_back(x.separation);
  std::sort(seps.begin(), seps.end());
  ASSERT_FALSE(seps.empty());
  EXPECT_GE(isolated, 8u);
  EXPECT_EQ(isolatedMatched, isolated);
  EXPECT_GE(m.matched.size(), 20u);
  EXPECT_LT(seps[seps.size() / 2], 1.0);
  EXPECT_EQ(m.matched.size() + m.unmatchedA.size(), cat.size());
  EXPECT_EQ(m.matched.size() + m.unmatchedB.size(), found.size());

  Points shifted = cat;
  for (auto& p : shifted) p[1] += 20.0 / 3600;
  EXPECT_LE(crossMatch(shifted, found, {4.0, true, true}).matched.size(), 2u);
}
