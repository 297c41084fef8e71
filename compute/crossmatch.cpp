// Cross-matching through a hash grid: pixel positions in square cells of the radius, sky
// positions as unit vectors in cubic cells of the matching chord, so RA wrap and the poles need
// no special case.
#include "compute/crossmatch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace stacklens::compute {

namespace {

constexpr double kDeg = 3.14159265358979323846 / 180.0;

struct CellKey {
  int64_t i, j, k;
  bool operator==(const CellKey& o) const { return i == o.i && j == o.j && k == o.k; }
};

struct CellHash {
  size_t operator()(const CellKey& c) const {
    uint64_t h = static_cast<uint64_t>(c.i) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<uint64_t>(c.j) * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(c.k) * 0x165667B19E3779F9ULL + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

// Positions in the space the grid works in: pixels (z = 0) or unit vectors.
struct Embedded {
  std::vector<std::array<double, 3>> p;
  std::vector<bool> valid;
};

Embedded embed(const std::vector<std::array<double, 2>>& pts, bool sky) {
  Embedded e;
  e.p.resize(pts.size());
  e.valid.resize(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) {
    const double u = pts[i][0], v = pts[i][1];
    e.valid[i] = std::isfinite(u) && std::isfinite(v) && (!sky || std::fabs(v) <= 90.0);
    if (!e.valid[i]) continue;
    if (sky) {
      const double c = std::cos(v * kDeg);
      e.p[i] = {c * std::cos(u * kDeg), c * std::sin(u * kDeg), std::sin(v * kDeg)};
    } else {
      e.p[i] = {u, v, 0.0};
    }
  }
  return e;
}

class Grid {
 public:
  Grid(const Embedded& e, double cell) : cell_(cell) {
    for (size_t i = 0; i < e.p.size(); ++i) {
      if (!e.valid[i]) continue;
      CellKey key;
      if (!keyOf(e.p[i], key)) {
        far_.push_back(static_cast<int64_t>(i));
        continue;
      }
      cells_[key].push_back(static_cast<int64_t>(i));
    }
  }

  // Every index in the cells around p (and the points too far out for a cell), as candidates.
  template <typename F>
  void around(const std::array<double, 3>& p, F&& visit) const {
    for (int64_t i : far_) visit(i);
    CellKey key;
    if (!keyOf(p, key)) {
      for (const auto& [k, list] : cells_)
        for (int64_t i : list) visit(i);
      return;
    }
    for (int64_t di = -1; di <= 1; ++di)
      for (int64_t dj = -1; dj <= 1; ++dj)
        for (int64_t dk = -1; dk <= 1; ++dk) {
          const auto it = cells_.find({key.i + di, key.j + dj, key.k + dk});
          if (it == cells_.end()) continue;
          for (int64_t i : it->second) visit(i);
        }
  }

 private:
  double cell_;
  std::unordered_map<CellKey, std::vector<int64_t>, CellHash> cells_;
  std::vector<int64_t> far_;  // coordinates whose cell index would overflow

  bool keyOf(const std::array<double, 3>& p, CellKey& key) const {
    const double limit = 1e15;
    double c[3];
    for (int d = 0; d < 3; ++d) {
      c[d] = std::floor(p[static_cast<size_t>(d)] / cell_);
      if (!(std::fabs(c[d]) < limit)) return false;
    }
    key = {static_cast<int64_t>(c[0]), static_cast<int64_t>(c[1]), static_cast<int64_t>(c[2])};
    return true;
  }
};

}  // namespace

double angularSeparation(double lon1, double lat1, double lon2, double lat2) {
  const double p1 = lat1 * kDeg, p2 = lat2 * kDeg, dl = (lon2 - lon1) * kDeg;
  const double x = std::cos(p2) * std::sin(dl);
  const double y = std::cos(p1) * std::sin(p2) - std::sin(p1) * std::cos(p2) * std::cos(dl);
  const double z = std::sin(p1) * std::sin(p2) + std::cos(p1) * std::cos(p2) * std::cos(dl);
  return std::atan2(std::hypot(x, y), z) / kDeg;
}

CrossMatch crossMatch(const std::vector<std::array<double, 2>>& a,
                      const std::vector<std::array<double, 2>>& b, const MatchOptions& options) {
  CrossMatch out;
  const bool sky = options.sky;
  const double radius = options.radius;
  std::vector<bool> usedA(a.size(), false), usedB(b.size(), false);
  if (radius >= 0 && std::isfinite(radius) && !a.empty() && !b.empty()) {
    const Embedded ea = embed(a, sky), eb = embed(b, sky);
    // The grid's cell: the radius in pixels, or the chord of the radius on the unit sphere
    // (slightly enlarged so that rounding never drops a pair exactly at the radius).
    const double angle = std::min(radius / 3600.0, 180.0) * kDeg;
    double cell = sky ? 2.0 * std::sin(angle / 2.0) : radius;
    cell = std::max(cell * (1 + 1e-9), sky ? 1e-12 : std::numeric_limits<double>::min() * 1e20);
    const Grid grid(eb, cell);
    auto separation = [&](size_t i, size_t j) {
      if (!sky) return std::hypot(a[i][0] - b[j][0], a[i][1] - b[j][1]);
      return angularSeparation(a[i][0], a[i][1], b[j][0], b[j][1]) * 3600.0;
    };
    std::vector<Match> pairs;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!ea.valid[i]) continue;
      Match best{static_cast<int64_t>(i), -1, std::numeric_limits<double>::infinity()};
      grid.around(ea.p[i], [&](int64_t j) {
        const double s = separation(i, static_cast<size_t>(j));
        if (!(s <= radius)) return;
        if (options.oneToOne) pairs.push_back({static_cast<int64_t>(i), j, s});
        if (s < best.separation || (s == best.separation && j < best.b)) best = {best.a, j, s};
      });
      if (!options.oneToOne && best.b >= 0) {
        out.matched.push_back(best);
        usedA[i] = true;
        usedB[static_cast<size_t>(best.b)] = true;
      }
    }
    if (options.oneToOne) {
      std::sort(pairs.begin(), pairs.end(), [](const Match& x, const Match& y) {
        if (x.separation != y.separation) return x.separation < y.separation;
        return x.a != y.a ? x.a < y.a : x.b < y.b;
      });
      for (const Match& m : pairs) {
        if (usedA[static_cast<size_t>(m.a)] || usedB[static_cast<size_t>(m.b)]) continue;
        usedA[static_cast<size_t>(m.a)] = usedB[static_cast<size_t>(m.b)] = true;
        out.matched.push_back(m);
      }
      std::sort(out.matched.begin(), out.matched.end(),
                [](const Match& x, const Match& y) { return x.a < y.a; });
    }
  }
  for (size_t i = 0; i < a.size(); ++i)
    if (!usedA[i]) out.unmatchedA.push_back(static_cast<int64_t>(i));
  for (size_t j = 0; j < b.size(); ++j)
    if (!usedB[j]) out.unmatchedB.push_back(static_cast<int64_t>(j));
  return out;
}

}  // namespace stacklens::compute
