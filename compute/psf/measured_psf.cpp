// The PSF measured from stars or beads (compute/psf/measured_psf.h).
#include "compute/psf/measured_psf.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <utility>

namespace stacklens::compute::psf {
namespace {

constexpr double kFwhmPerSigma = 2.3548200450309493;  // 2 √(2 ln 2)

// Axes are indexed z, y, x (0, 1, 2) throughout, as Shape is.
using Index3 = std::array<int64_t, 3>;
using Point3 = std::array<double, 3>;

// A dense z, y, x block of doubles: a cut-out while it is worked on.
struct Block {
  std::array<int64_t, 3> n{1, 1, 1};
  std::vector<double> v;
  explicit Block(std::array<int64_t, 3> dims) : n(dims), v(size_t(dims[0] * dims[1] * dims[2])) {}
  double& at(int64_t z, int64_t y, int64_t x) { return v[size_t((z * n[1] + y) * n[2] + x)]; }
  double at(int64_t z, int64_t y, int64_t x) const { return v[size_t((z * n[1] + y) * n[2] + x)]; }
};

double medianOf(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double m = values[mid];
  if (values.size() % 2 == 0) m = (m + *std::max_element(values.begin(), values.begin() + mid)) / 2;
  return m;
}

struct Level {
  double median = 0, sigma = 0;
};

// astropy's sigma_clip: the median as centre, the population σ of what is kept, bounds
// median ± kappa σ, repeated until nothing more is clipped.
Level clippedLevel(std::vector<double> values, double kappa) {
  Level level;
  for (int iteration = 0; iteration < 20 && !values.empty(); ++iteration) {
    level.median = medianOf(values);
    double mean = 0;
    for (double v : values) mean += v;
    mean /= double(values.size());
    double var = 0;
    for (double v : values) var += (v - mean) * (v - mean);
    level.sigma = std::sqrt(var / double(values.size()));
    const double lo = level.median - kappa * level.sigma, hi = level.median + kappa * level.sigma;
    const size_t before = values.size();
    std::erase_if(values, [&](double v) { return v < lo || v > hi; });
    if (values.size() == before) break;
  }
  return level;
}

// The periodic sinc (Dirichlet kernel) of an odd length n: the interpolant that a DFT phase ramp
// applies, so a shift with it is exactly the Fourier shift of the line.
double dirichlet(double t, int64_t n) {
  const double s = std::sin(std::numbers::pi * t / double(n));
  if (std::abs(s) < 1e-12) return 1.0;  // t a multiple of n (odd n): the limit is 1
  return std::sin(std::numbers::pi * t) / (double(n) * s);
}

// Moves the block's content by d samples along one axis (odd length) with the Fourier shift.
// Why Fourier and not a cubic spline: a spline shift smooths by an amount that depends on the
// fraction of a pixel moved, which widens a 3 px FWHM by about 1 % at half-pixel shifts and
// differently for each star; the Fourier shift is exact for a band-limited (well-sampled) star
// and keeps the flux. It is summed directly rather than with FFTW because cut-outs are a few
// tens of samples a side, where n² per line costs less than making plans.
void fourierShift(Block& b, int axis, double d) {
  const int64_t n = b.n[size_t(axis)];
  if (n <= 1 || d == 0) return;
  std::vector<double> kernel(static_cast<size_t>(n));
  for (int64_t m = 0; m < n; ++m) kernel[size_t(m)] = dirichlet(double(m) - d, n);
  std::vector<double> line(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  const std::array<int64_t, 3> stride{b.n[1] * b.n[2], b.n[2], 1};
  const int64_t step = stride[size_t(axis)];
  // Every line along `axis`: the starts are the block's indices whose coordinate on axis is 0.
  for (int64_t start = 0; start < int64_t(b.v.size()); ++start) {
    if ((start / step) % n != 0) continue;
    for (int64_t i = 0; i < n; ++i) line[size_t(i)] = b.v[size_t(start + i * step)];
    for (int64_t i = 0; i < n; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += line[size_t(j)] * kernel[size_t((i - j + n) % n)];
      out[size_t(i)] = sum;
    }
    for (int64_t i = 0; i < n; ++i) b.v[size_t(start + i * step)] = out[size_t(i)];
  }
}

// The cut-out sizes: `half` the final crop's half side, `reach` the window's (crop plus a margin
// whose outer part is the background ring), per axis z, y, x; z 0 in 2D.
struct Geometry {
  Index3 half{0, 0, 0};
  Index3 reach{0, 0, 0};
  Point3 fwhm{0, 0, 0};  // the window of the centroid (and the neighbour test), pixels
};

int autoSize(double fwhm) { return std::max(9, 2 * int(std::ceil(2.25 * fwhm)) + 1); }

// The ring around the crop that gives the background: 3 pixels hold a few hundred values in 2D
// (thousands in 3D); half a FWHM more keeps it off the wings of broad PSFs without making the
// window so large that stars near the edges of small stacks are lost.
int64_t margin(double fwhm) { return std::max<int64_t>(3, int64_t(std::ceil(fwhm / 2))); }

Geometry geometryFor(const Point3& fwhm, const MeasuredPsfParams& p) {
  Geometry g;
  g.fwhm = fwhm;
  const double lateral = std::max(fwhm[1], fwhm[2]);
  const int size = p.size > 0 ? p.size : autoSize(lateral);
  g.half[1] = g.half[2] = size / 2;
  g.reach[1] = g.reach[2] = size / 2 + margin(lateral);
  if (p.threeD) {
    const int sizeZ = p.sizeZ > 0 ? p.sizeZ : autoSize(fwhm[0]);
    g.half[0] = sizeZ / 2;
    g.reach[0] = sizeZ / 2 + margin(fwhm[0]);
  }
  return g;
}

bool insideImage(const Point3& pos, const Shape& s) {
  return pos[0] > -0.5 && pos[0] < double(s.z) - 0.5 && pos[1] > -0.5 &&
         pos[1] < double(s.y) - 0.5 && pos[2] > -0.5 && pos[2] < double(s.x) - 0.5;
}

// The brightest finite pixel within searchRadius of the given position (rounded), or nullopt.
std::optional<Index3> findPeak(const Image& data, const Point3& pos, const MeasuredPsfParams& p) {
  const Shape& s = data.shape();
  const int64_t r = int64_t(std::ceil(p.searchRadius));
  const Index3 c{p.threeD ? int64_t(std::lround(pos[0])) : 0, int64_t(std::lround(pos[1])),
                 int64_t(std::lround(pos[2]))};
  const int64_t rz = p.threeD ? r : 0;
  std::optional<Index3> best;
  float bestValue = -std::numeric_limits<float>::infinity();
  for (int64_t z = std::max<int64_t>(0, c[0] - rz); z <= std::min(s.z - 1, c[0] + rz); ++z)
    for (int64_t y = std::max<int64_t>(0, c[1] - r); y <= std::min(s.y - 1, c[1] + r); ++y)
      for (int64_t x = std::max<int64_t>(0, c[2] - r); x <= std::min(s.x - 1, c[2] + r); ++x) {
        const double d2 =
            double((z - c[0]) * (z - c[0]) + (y - c[1]) * (y - c[1]) + (x - c[2]) * (x - c[2]));
        if (d2 > p.searchRadius * p.searchRadius + 1e-9) continue;
        const float v = data.at(z, y, x);
        if (std::isfinite(v) && v > bestValue) bestValue = v, best = Index3{z, y, x};
      }
  return best;
}

// A rough FWHM per axis of the star at `peak`: half-maximum widths (linear interpolation) of
// the lines through the peak above the median of a probe box's faces. Only sets the centroid's
// window and the automatic size; the result's FWHM is measured on the PSF itself.
Point3 roughFwhm(const Image& data, const Index3& peak, bool threeD) {
  const Shape& s = data.shape();
  const int64_t probe = 15;
  Index3 lo{0, 0, 0}, hi{0, 0, 0};
  const std::array<int64_t, 3> n{s.z, s.y, s.x};
  for (int a = threeD ? 0 : 1; a < 3; ++a) {
    lo[size_t(a)] = std::max<int64_t>(0, peak[size_t(a)] - probe);
    hi[size_t(a)] = std::min(n[size_t(a)] - 1, peak[size_t(a)] + probe);
  }
  std::vector<double> faces;
  for (int64_t z = lo[0]; z <= hi[0]; ++z)
    for (int64_t y = lo[1]; y <= hi[1]; ++y)
      for (int64_t x = lo[2]; x <= hi[2]; ++x) {
        const bool face = y == lo[1] || y == hi[1] || x == lo[2] || x == hi[2] ||
                          (threeD && (z == lo[0] || z == hi[0]));
        const float v = data.at(z, y, x);
        if (face && std::isfinite(v)) faces.push_back(v);
      }
  const double background = medianOf(std::move(faces));
  const double half = (data.at(peak[0], peak[1], peak[2]) - background) / 2;
  Point3 fwhm{std::nan(""), std::nan(""), std::nan("")};
  if (!(half > 0)) return fwhm;
  for (int a = threeD ? 0 : 1; a < 3; ++a) {
    auto value = [&](int64_t i) {
      Index3 q = peak;
      q[size_t(a)] = i;
      return double(data.at(q[0], q[1], q[2])) - background;
    };
    std::array<double, 2> side{std::nan(""), std::nan("")};
    for (int dir = 0; dir < 2; ++dir) {
      const int64_t step = dir == 0 ? -1 : 1;
      double previous = 2 * half;
      for (int64_t i = peak[size_t(a)] + step; i >= lo[size_t(a)] && i <= hi[size_t(a)];
           i += step) {
        const double v = value(i);
        if (!std::isfinite(v)) break;
        if (v < half) {
          side[size_t(dir)] = double(std::abs(i - peak[size_t(a)])) - 1 +
                              (previous - half) / std::max(previous - v, 1e-30);
          break;
        }
        previous = v;
      }
    }
    if (std::isfinite(side[0]) && std::isfinite(side[1]))
      fwhm[size_t(a)] = side[0] + side[1];
    else if (std::isfinite(side[0]) || std::isfinite(side[1]))
      fwhm[size_t(a)] = 2 * (std::isfinite(side[0]) ? side[0] : side[1]);
  }
  return fwhm;
}

struct StarCut {
  std::string reason;  // empty when the star is used
  Point3 centre{0, 0, 0};
  Block crop{{1, 1, 1}};
};

// One star: cut out, background-subtracted, centred by the windowed centroid, shifted onto the
// grid, cropped and normalised to unit sum.
StarCut cutStar(const Image& data, const Index3& peak, const Geometry& g,
                const MeasuredPsfParams& p) {
  StarCut cut;
  const Shape& s = data.shape();
  const std::array<int64_t, 3> n{s.z, s.y, s.x};
  const std::array<int64_t, 3> w{2 * g.reach[0] + 1, 2 * g.reach[1] + 1, 2 * g.reach[2] + 1};
  const int firstAxis = p.threeD ? 0 : 1;
  Point3 centre{double(peak[0]), double(peak[1]), double(peak[2])};
  for (int pass = 0; pass < 3; ++pass) {
    Index3 origin{0, 0, 0};
    for (int a = firstAxis; a < 3; ++a) {
      origin[size_t(a)] = int64_t(std::lround(centre[size_t(a)])) - g.reach[size_t(a)];
      if (origin[size_t(a)] < 0 || origin[size_t(a)] + w[size_t(a)] > n[size_t(a)]) {
        cut.reason = "too close to the edge";
        return cut;
      }
    }
    Block b(w);
    for (int64_t z = 0; z < w[0]; ++z)
      for (int64_t y = 0; y < w[1]; ++y)
        for (int64_t x = 0; x < w[2]; ++x) {
          const float v = data.at(origin[0] + z, origin[1] + y, origin[2] + x);
          if (!std::isfinite(v) || double(v) >= p.saturation) {
            cut.reason = "saturated/non-finite";
            return cut;
          }
          b.at(z, y, x) = v;
        }
    // The background: the window's part outside the ellipse (ellipsoid) just containing the
    // crop's inscribed one, sigma-clipped so that faint neighbours there do not raise it.
    auto normalisedRadius2 = [&](int64_t z, int64_t y, int64_t x, const Point3& scale) {
      const double dz = p.threeD ? double(z - g.reach[0]) / scale[0] : 0;
      const double dy = double(y - g.reach[1]) / scale[1], dx = double(x - g.reach[2]) / scale[2];
      return dz * dz + dy * dy + dx * dx;
    };
    const Point3 ringScale{double(g.half[0] + 1), double(g.half[1] + 1), double(g.half[2] + 1)};
    std::vector<double> ring;
    for (int64_t z = 0; z < w[0]; ++z)
      for (int64_t y = 0; y < w[1]; ++y)
        for (int64_t x = 0; x < w[2]; ++x)
          if (normalisedRadius2(z, y, x, ringScale) >= 1) ring.push_back(b.at(z, y, x));
    const Level background = clippedLevel(std::move(ring), p.clipSigma);
    for (double& v : b.v) v -= background.median;
    // The peak: the brightest pixel next to the window's centre.
    double peakValue = -std::numeric_limits<double>::infinity();
    for (int64_t z = std::max<int64_t>(0, g.reach[0] - 1); z <= std::min(w[0] - 1, g.reach[0] + 1);
         ++z)
      for (int64_t y = g.reach[1] - 1; y <= g.reach[1] + 1; ++y)
        for (int64_t x = g.reach[2] - 1; x <= g.reach[2] + 1; ++x)
          peakValue = std::max(peakValue, b.at(z, y, x));
    if (!(peakValue > 0) || !(peakValue > p.minSnr * background.sigma)) {
      cut.reason = "not a peak";
      return cut;
    }
    // Anything brighter than the star beyond 1.5 FWHM of it is another source whose light would
    // be in the cut-out (its own wings never exceed its peak).
    const Point3 fwhmScale{std::max(g.fwhm[0], 1.0), std::max(g.fwhm[1], 1.0),
                           std::max(g.fwhm[2], 1.0)};
    for (int64_t z = 0; z < w[0]; ++z)
      for (int64_t y = 0; y < w[1]; ++y)
        for (int64_t x = 0; x < w[2]; ++x)
          if (b.at(z, y, x) > peakValue && normalisedRadius2(z, y, x, fwhmScale) > 1.5 * 1.5) {
            cut.reason = "overlaps a brighter source";
            return cut;
          }
    // The windowed centroid (SExtractor's XWIN): a Gaussian window of the PSF's FWHM moved to
    // the weighted centroid, doubled because a Gaussian window halves the offset it sees. Its
    // fixed point is the centre of a symmetric profile whatever the sampling, which a plain
    // centroid over a pixel box is not.
    Point3 local{0, 0, 0};  // the centre in window coordinates
    for (int a = firstAxis; a < 3; ++a)
      local[size_t(a)] = centre[size_t(a)] - double(origin[size_t(a)]);
    Point3 sigma{};
    for (int a = 0; a < 3; ++a) sigma[size_t(a)] = std::max(g.fwhm[size_t(a)], 1.0) / kFwhmPerSigma;
    bool converged = false;
    for (int iteration = 0; iteration < 100 && !converged; ++iteration) {
      double sw = 0;
      Point3 moment{0, 0, 0};
      for (int64_t z = 0; z < w[0]; ++z)
        for (int64_t y = 0; y < w[1]; ++y)
          for (int64_t x = 0; x < w[2]; ++x) {
            const Point3 d{double(z) - local[0], double(y) - local[1], double(x) - local[2]};
            double e = 0;
            for (int a = firstAxis; a < 3; ++a)
              e += d[size_t(a)] * d[size_t(a)] / (2 * sigma[size_t(a)] * sigma[size_t(a)]);
            const double wi = std::exp(-e) * b.at(z, y, x);
            sw += wi;
            for (int a = firstAxis; a < 3; ++a) moment[size_t(a)] += wi * d[size_t(a)];
          }
      if (!(sw > 0)) {
        cut.reason = "not a peak";
        return cut;
      }
      double largest = 0;
      for (int a = firstAxis; a < 3; ++a) {
        const double step = std::clamp(2 * moment[size_t(a)] / sw, -1.0, 1.0);
        local[size_t(a)] += step;
        largest = std::max(largest, std::abs(step));
      }
      converged = largest < 1e-6;
    }
    for (int a = firstAxis; a < 3; ++a) {
      centre[size_t(a)] = local[size_t(a)] + double(origin[size_t(a)]);
      if (std::abs(centre[size_t(a)] - double(peak[size_t(a)])) > p.searchRadius + 1) {
        cut.reason = "not a peak";  // the centroid ran off to something else
        return cut;
      }
    }
    bool recentred = true;
    for (int a = firstAxis; a < 3; ++a)
      recentred &= std::lround(centre[size_t(a)]) == origin[size_t(a)] + g.reach[size_t(a)];
    if (!recentred && pass < 2) continue;  // cut again around the centre found
    for (int a = firstAxis; a < 3; ++a)
      fourierShift(b, a, double(g.reach[size_t(a)]) - local[size_t(a)]);
    Block crop({2 * g.half[0] + 1, 2 * g.half[1] + 1, 2 * g.half[2] + 1});
    double sum = 0;
    for (int64_t z = 0; z < crop.n[0]; ++z)
      for (int64_t y = 0; y < crop.n[1]; ++y)
        for (int64_t x = 0; x < crop.n[2]; ++x) {
          const double v = b.at(z + g.reach[0] - g.half[0], y + g.reach[1] - g.half[1],
                                x + g.reach[2] - g.half[2]);
          crop.at(z, y, x) = v;
          sum += v;
        }
    if (!(sum > 0)) {
      cut.reason = "not a peak";
      return cut;
    }
    for (double& v : crop.v) v /= sum;
    cut.centre = centre;
    cut.crop = std::move(crop);
    return cut;
  }
  cut.reason = "not a peak";  // the centre kept moving between pixels
  return cut;
}

// The per-pixel median of the unit-sum cut-outs, negatives set to 0 (Richardson-Lucy's
// multiplicative update needs a non-negative PSF; they are noise in the far wings), sum 1.
Image combine(const std::vector<Block>& crops, const Spacing& spacing) {
  const auto& n = crops.front().n;
  Image out = Image::host({n[0], n[1], n[2]});
  std::vector<double> values(crops.size());
  double sum = 0;
  std::vector<double> combined(crops.front().v.size());
  for (size_t i = 0; i < combined.size(); ++i) {
    for (size_t k = 0; k < crops.size(); ++k) values[k] = crops[k].v[i];
    combined[i] = std::max(0.0, medianOf(values));
    sum += combined[i];
  }
  for (size_t i = 0; i < combined.size(); ++i)
    out.data()[i] = float(sum > 0 ? combined[i] / sum : 0.0);
  out.spacing = spacing;
  return out;
}

void checkParams(const Image& data, const MeasuredPsfParams& p) {
  if (!data.onHost() || data.empty()) throw InvalidArgument("measure PSF: the image is empty");
  if (p.threeD && data.shape().z < 2)
    throw InvalidArgument("measure PSF: 3D (beads) needs a stack of more than one slice");
  if (!p.threeD && data.shape().z != 1)
    throw InvalidArgument("measure PSF: 2D (stars) needs one image; take a slice of the stack");
  if (p.size < 0 || (p.size > 0 && (p.size % 2 == 0 || p.size < 3)))
    throw InvalidArgument("measure PSF: the size must be odd and at least 3 (or 0: automatic)");
  if (p.sizeZ < 0 || (p.sizeZ > 0 && (p.sizeZ % 2 == 0 || p.sizeZ < 3)))
    throw InvalidArgument("measure PSF: the depth must be odd and at least 3 (or 0: automatic)");
  if (!(p.clipSigma > 0)) throw InvalidArgument("measure PSF: the clipping sigma must be positive");
  if (p.recentreIterations < 1)
    throw InvalidArgument("measure PSF: the recentring iterations must be at least 1");
  if (!(p.searchRadius >= 0)) throw InvalidArgument("measure PSF: the search radius must be ≥ 0");
  if (!(p.minSnr >= 0)) throw InvalidArgument("measure PSF: the minimum S/N must be ≥ 0");
}

}  // namespace

MeasuredPsf measurePsf(const Image& data, const std::vector<PsfStar>& stars,
                       const MeasuredPsfParams& p, const Job& job) {
  checkParams(data, p);
  if (stars.empty()) throw InvalidArgument("measure PSF: no star positions were given");
  MeasuredPsf result;
  result.stars.resize(stars.size());
  std::vector<std::optional<Index3>> peaks(stars.size());
  for (size_t i = 0; i < stars.size(); ++i) {
    const Point3 pos{p.threeD ? stars[i].z : 0.0, stars[i].y, stars[i].x};
    result.stars[i].refined = stars[i];
    if (!p.threeD) result.stars[i].refined.z = 0;
    if (!std::isfinite(pos[0]) || !std::isfinite(pos[1]) || !std::isfinite(pos[2]) ||
        !insideImage(pos, data.shape())) {
      result.stars[i].reason = "outside the image";
      continue;
    }
    peaks[i] = findPeak(data, pos, p);
    if (!peaks[i]) result.stars[i].reason = "saturated/non-finite";
  }
  // The first pass's window and sizes from the median of the stars' rough widths.
  Point3 fwhm{0, 3, 3};
  if (p.threeD) fwhm[0] = 3;
  for (int a = p.threeD ? 0 : 1; a < 3; ++a) {
    std::vector<double> widths;
    for (const auto& peak : peaks)
      if (peak) {
        const double f = roughFwhm(data, *peak, p.threeD)[size_t(a)];
        if (std::isfinite(f) && f > 0) widths.push_back(f);
      }
    if (!widths.empty()) fwhm[size_t(a)] = std::max(1.0, medianOf(widths));
  }
  const double total = double(stars.size()) * p.recentreIterations;
  for (int iteration = 0; iteration < p.recentreIterations; ++iteration) {
    const Geometry g = geometryFor(fwhm, p);
    std::vector<Block> crops;
    std::vector<Point3> centres;
    std::vector<size_t> usedIndex;
    for (size_t i = 0; i < stars.size(); ++i) {
      job.checkCancelled();
      job.report((double(iteration) * double(stars.size()) + double(i)) / total);
      PsfStarReport& report = result.stars[i];
      if (!peaks[i]) continue;
      StarCut cut = cutStar(data, *peaks[i], g, p);
      report.used = cut.reason.empty();
      report.reason = cut.reason;
      if (!report.used) continue;
      report.refined = {cut.centre[2], cut.centre[1], p.threeD ? cut.centre[0] : 0.0};
      for (size_t k = 0; k < centres.size(); ++k) {
        double d2 = 0;
        for (int a = 0; a < 3; ++a)
          d2 += (centres[k][size_t(a)] - cut.centre[size_t(a)]) *
                (centres[k][size_t(a)] - cut.centre[size_t(a)]);
        if (d2 < 1) {
          report.used = false;
          report.reason = "duplicate of star " + std::to_string(usedIndex[k]);
          break;
        }
      }
      if (!report.used) continue;
      crops.push_back(std::move(cut.crop));
      centres.push_back(cut.centre);
      usedIndex.push_back(i);
    }
    if (crops.empty()) {
      std::string why = "measure PSF: no star could be used with a cut-out of " +
                        (p.threeD ? std::to_string(2 * g.reach[0] + 1) + " x " : "") +
                        std::to_string(2 * g.reach[1] + 1) + " x " +
                        std::to_string(2 * g.reach[2] + 1) + " pixels (";
      for (size_t i = 0; i < stars.size(); ++i)
        why += (i ? "; " : "") + std::to_string(i) + ": " + result.stars[i].reason;
      throw InvalidArgument(why + ")");
    }
    result.psf = combine(crops, data.spacing);
    result.used = int(crops.size());
    const std::array<double, 3> measured = psfFwhm(result.psf);
    result.fwhmZ = p.threeD ? measured[2] : 0;
    result.fwhmY = measured[1];
    result.fwhmX = measured[0];
    // The next pass centres with the window matched to this PSF (and sizes it, when automatic).
    const Point3 next{p.threeD ? measured[2] : 0, measured[1], measured[0]};
    bool settled = true;
    for (int a = p.threeD ? 0 : 1; a < 3; ++a) {
      if (!(next[size_t(a)] > 0)) continue;  // unmeasurable: keep the rough one
      settled &= std::abs(next[size_t(a)] - fwhm[size_t(a)]) < 1e-3 * fwhm[size_t(a)];
      fwhm[size_t(a)] = next[size_t(a)];
    }
    if (settled) break;
  }
  job.report(1.0);
  return result;
}

namespace {

// Where the line crosses `level` between samples a and a + 1 (one above it, one below): a
// cubic through the logarithms of up to four samples around them (exact for a Gaussian, whose
// logarithm is a parabola), else linear in the values.
double crossing(const std::vector<double>& line, int64_t a, double level) {
  const int64_t n = int64_t(line.size());
  const int64_t first = std::max<int64_t>(0, a - 1), last = std::min(n - 1, a + 2);
  bool positive = level > 0;
  for (int64_t i = first; i <= last; ++i) positive &= line[size_t(i)] > 0;
  auto f = [&](double t) {
    if (!positive) {
      return line[size_t(a)] + (t - double(a)) * (line[size_t(a + 1)] - line[size_t(a)]) - level;
    }
    double sum = 0;  // Lagrange's form through (i, log line[i]), i = first..last
    for (int64_t i = first; i <= last; ++i) {
      double term = std::log(line[size_t(i)]);
      for (int64_t j = first; j <= last; ++j)
        if (j != i) term *= (t - double(j)) / double(i - j);
      sum += term;
    }
    return sum - std::log(level);
  };
  double lo = double(a), hi = double(a + 1);
  const double flo = f(lo);
  for (int k = 0; k < 60; ++k) {
    const double mid = (lo + hi) / 2;
    if ((f(mid) > 0) == (flo > 0))
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

double lineFwhm(const std::vector<double>& line, int64_t m) {
  const int64_t n = int64_t(line.size());
  double peak = line[size_t(m)];
  if (m > 0 && m + 1 < n && line[size_t(m - 1)] > 0 && line[size_t(m + 1)] > 0 && peak > 0) {
    // The parabola through the logarithms of the three samples at the top: the peak between
    // samples when the PSF is not exactly centred.
    const double l0 = std::log(line[size_t(m - 1)]), l1 = std::log(peak),
                 l2 = std::log(line[size_t(m + 1)]);
    const double curvature = l0 - 2 * l1 + l2;
    if (curvature < 0) {
      const double offset = 0.5 * (l0 - l2) / curvature;
      if (std::abs(offset) <= 0.5) peak = std::exp(l1 - 0.25 * (l0 - l2) * offset);
    }
  }
  const double half = peak / 2;
  if (!(half > 0)) return 0;
  int64_t right = m;
  while (right + 1 < n && line[size_t(right + 1)] >= half) ++right;
  int64_t left = m;
  while (left - 1 >= 0 && line[size_t(left - 1)] >= half) --left;
  if (right + 1 >= n || left - 1 < 0) return 0;
  return crossing(line, right, half) - crossing(line, left - 1, half);
}

}  // namespace

std::array<double, 3> psfFwhm(const Image& psf) {
  if (!psf.onHost() || psf.empty()) throw InvalidArgument("PSF FWHM: the PSF is empty");
  const Shape& s = psf.shape();
  int64_t best = -1;
  for (int64_t i = 0; i < s.count(); ++i)
    if (std::isfinite(psf.data()[i]) && (best < 0 || psf.data()[i] > psf.data()[best])) best = i;
  if (best < 0) throw InvalidArgument("PSF FWHM: the PSF has no finite value");
  const Index3 peak{best / s.sliceCount(), (best / s.x) % s.y, best % s.x};
  const std::array<int64_t, 3> n{s.z, s.y, s.x};
  std::array<double, 3> out{0, 0, 0};  // x, y, z
  for (int a = 0; a < 3; ++a) {
    if (n[size_t(a)] < 2) continue;
    std::vector<double> line(static_cast<size_t>(n[size_t(a)]));
    for (int64_t i = 0; i < n[size_t(a)]; ++i) {
      Index3 q = peak;
      q[size_t(a)] = i;
      const float v = psf.at(q[0], q[1], q[2]);
      line[size_t(i)] = std::isfinite(v) ? v : 0.0;
    }
    out[size_t(2 - a)] = lineFwhm(line, peak[size_t(a)]);
  }
  return out;
}

std::vector<PsfStar> pickPsfStars(const std::vector<Source>& sources, Shape shape, int maxStars,
                                  double saturation) {
  if (maxStars < 0) throw InvalidArgument("pick PSF stars: the number of stars must be ≥ 0");
  // A candidate: one source, or in a stack the sources of consecutive slices that are one bead.
  struct Candidate {
    double x = 0, y = 0, flux = 0, peak = 0, sigma = 0;
    int64_t z = 0, zMin = 0, zMax = 0;
    double xMin = 0, xMax = 0, yMin = 0, yMax = 0;
  };
  std::vector<const Source*> order;
  for (const Source& s : sources) order.push_back(&s);
  std::sort(order.begin(), order.end(),
            [](const Source* a, const Source* b) { return a->peak > b->peak; });
  std::vector<Candidate> candidates;
  for (const Source* s : order) {
    Candidate* group = nullptr;
    if (shape.z > 1)
      for (Candidate& c : candidates) {
        const double reach = std::max(2.0, c.sigma * kFwhmPerSigma);
        if (std::hypot(s->centroidX - c.x, s->centroidY - c.y) <= reach && s->z >= c.zMin - 2 &&
            s->z <= c.zMax + 2) {
          group = &c;
          break;
        }
      }
    if (group) {
      group->zMin = std::min(group->zMin, s->z);
      group->zMax = std::max(group->zMax, s->z);
      group->flux += s->flux;
      group->xMin = std::min(group->xMin, double(s->xMin));
      group->xMax = std::max(group->xMax, double(s->xMax));
      group->yMin = std::min(group->yMin, double(s->yMin));
      group->yMax = std::max(group->yMax, double(s->yMax));
      continue;
    }
    Candidate c;
    c.x = s->centroidX, c.y = s->centroidY, c.z = c.zMin = c.zMax = s->z;
    c.flux = s->flux, c.peak = s->peak;
    // A Gaussian's flux is 2π σ² times its peak: the width without fitting (from its brightest
    // slice in a stack).
    c.sigma =
        s->peak > 0 && s->flux > 0 ? std::sqrt(s->flux / (2 * std::numbers::pi * s->peak)) : 0.0;
    c.xMin = double(s->xMin), c.xMax = double(s->xMax);
    c.yMin = double(s->yMin), c.yMax = double(s->yMax);
    candidates.push_back(c);
  }
  if (candidates.empty() || maxStars == 0) return {};
  // The typical width from the brighter half, whose flux the threshold truncates least.
  std::vector<const Candidate*> byFlux;
  for (const Candidate& c : candidates) byFlux.push_back(&c);
  std::sort(byFlux.begin(), byFlux.end(),
            [](const Candidate* a, const Candidate* b) { return a->flux > b->flux; });
  std::vector<double> sigmas;
  for (size_t i = 0; i < std::max<size_t>(1, byFlux.size() / 2); ++i)
    if (byFlux[i]->sigma > 0) sigmas.push_back(byFlux[i]->sigma);
  const double sigma = sigmas.empty() ? 1.0 : medianOf(sigmas);
  const double fwhm = sigma * kFwhmPerSigma;
  const double isolation = std::max(6.0, 4 * fwhm);
  const double edge = std::max(8.0, std::ceil(3.5 * fwhm) + 1);
  std::vector<PsfStar> picked;
  for (const Candidate* c : byFlux) {
    if (int(picked.size()) >= maxStars) break;
    if (double(c->peak) >= saturation) continue;
    if (c->sigma < 0.5 * sigma || c->sigma > 2 * sigma) continue;
    const double w = c->xMax - c->xMin + 1, h = c->yMax - c->yMin + 1;
    if (std::max(w, h) > 3 * std::min(w, h)) continue;  // a blend or a streak
    if (c->x < edge || c->y < edge || c->x > double(shape.x) - 1 - edge ||
        c->y > double(shape.y) - 1 - edge)
      continue;
    if (shape.z > 1 && (c->zMin <= 0 || c->zMax >= shape.z - 1)) continue;
    bool isolated = true;
    for (const Candidate& o : candidates) {
      if (&o == c) continue;
      const double dx = std::max({o.xMin - c->x, 0.0, c->x - o.xMax});
      const double dy = std::max({o.yMin - c->y, 0.0, c->y - o.yMax});
      if (std::hypot(dx, dy) < isolation) {
        isolated = false;
        break;
      }
    }
    if (!isolated) continue;
    picked.push_back({c->x, c->y, double(c->z)});
  }
  return picked;
}

}  // namespace stacklens::compute::psf
