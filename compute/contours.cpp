#include "compute/contours.h"

#include <cmath>
#include <unordered_map>

namespace stacklens::compute {
namespace {

// One piece, between two cell edges named by edgeId.
struct Piece {
  int64_t a, b;  // edge ids
  ContourPoint pa, pb;
};

// Edge ids: the horizontal edge from (i, j) to (i + 1, j) is 2 (j w + i), the vertical one from
// (i, j) to (i, j + 1) is 2 (j w + i) + 1. Crossings are computed from the edge's first corner,
// so that the two cells that share an edge agree on its point exactly.
std::vector<Piece> pieces(const double* v, int64_t w, int64_t h, double level) {
  std::vector<Piece> out;
  auto f = [&](int64_t i, int64_t j) { return v[j * w + i] - level; };
  auto crossing = [&](int64_t i, int64_t j, bool vertical) {
    const double a = f(i, j), b = vertical ? f(i, j + 1) : f(i + 1, j);
    const double t = a / (a - b);
    return vertical ? ContourPoint{double(i), double(j) + t}
                    : ContourPoint{double(i) + t, double(j)};
  };
  for (int64_t j = 0; j + 1 < h; ++j)
    for (int64_t i = 0; i + 1 < w; ++i) {
      const double c[4] = {f(i, j), f(i + 1, j), f(i + 1, j + 1), f(i, j + 1)};
      if (!std::isfinite(c[0] + c[1] + c[2] + c[3])) continue;
      // The cell's edges in order round it: top, right, bottom, left.
      const int64_t id[4] = {2 * (j * w + i), 2 * (j * w + i + 1) + 1, 2 * ((j + 1) * w + i),
                             2 * (j * w + i) + 1};
      const ContourPoint at[4] = {crossing(i, j, false), crossing(i + 1, j, true),
                                  crossing(i, j + 1, false), crossing(i, j, true)};
      int hit[4], n = 0;
      for (int e = 0; e < 4; ++e)
        if ((c[e] < 0) != (c[(e + 1) % 4] < 0)) hit[n++] = e;
      if (n == 2) {
        out.push_back({id[hit[0]], id[hit[1]], at[hit[0]], at[hit[1]]});
      } else if (n == 4) {
        // A saddle: the mean says whether the centre is above; pair the edges round the corners
        // that are on the other side from it.
        const bool centreAbove = (c[0] + c[1] + c[2] + c[3]) / 4 >= 0;
        const bool firstAbove = c[0] >= 0;
        const int s = centreAbove == firstAbove ? 0 : 1;  // pair (s, s+1) and (s+2, s+3)
        out.push_back({id[s], id[(s + 1) % 4], at[s], at[(s + 1) % 4]});
        out.push_back({id[(s + 2) % 4], id[(s + 3) % 4], at[(s + 2) % 4], at[(s + 3) % 4]});
      }
    }
  return out;
}

}  // namespace

std::vector<std::pair<ContourPoint, ContourPoint>> contourSegments(const double* values,
                                                                   int64_t width, int64_t height,
                                                                   double level) {
  std::vector<std::pair<ContourPoint, ContourPoint>> out;
  for (const Piece& p : pieces(values, width, height, level)) out.emplace_back(p.pa, p.pb);
  return out;
}

std::vector<ContourLine> contourLines(const float* image, int64_t width, int64_t height,
                                      const std::vector<double>& levels) {
  const std::vector<double> v(image, image + width * height);
  std::vector<ContourLine> lines;
  for (double level : levels) {
    const std::vector<Piece> all = pieces(v.data(), width, height, level);
    // Each edge is shared by at most two pieces.
    std::unordered_map<int64_t, std::vector<size_t>> at;
    for (size_t k = 0; k < all.size(); ++k) at[all[k].a].push_back(k), at[all[k].b].push_back(k);
    std::vector<bool> used(all.size(), false);
    auto other = [&](int64_t edge, size_t piece) -> long {
      for (size_t k : at[edge])
        if (k != piece && !used[k]) return long(k);
      return -1;
    };
    auto walk = [&](size_t k, int64_t edge, std::vector<ContourPoint>& points) {
      // From piece k leaving through edge: follow the chain until it ends or comes round.
      for (long next = other(edge, k); next >= 0; next = other(edge, size_t(next))) {
        used[size_t(next)] = true;
        const Piece& p = all[size_t(next)];
        const bool forward = p.a == edge;
        points.push_back(forward ? p.pb : p.pa);
        edge = forward ? p.b : p.a;
        k = size_t(next);
      }
      return edge;
    };
    for (size_t k = 0; k < all.size(); ++k) {
      if (used[k]) continue;
      used[k] = true;
      ContourLine line{level, {all[k].pa, all[k].pb}, false};
      const int64_t end = walk(k, all[k].b, line.points);
      if (end == all[k].a && line.points.size() > 2) {
        line.points.pop_back();  // came round: the first point again
        line.closed = true;
      } else {
        std::vector<ContourPoint> back;
        walk(k, all[k].a, back);
        line.points.insert(line.points.begin(), back.rbegin(), back.rend());
      }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

std::vector<double> contourLevels(double low, double high, int count) {
  std::vector<double> levels;
  if (!(high > low) || count < 1) return levels;
  for (int k = 1; k <= count; ++k) levels.push_back(low + (high - low) * k / (count + 1));
  return levels;
}

}  // namespace stacklens::compute
