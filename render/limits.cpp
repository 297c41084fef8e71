// Display limits from one slice: min/max, percentiles and IRAF zscale (after astropy).
#include "render/limits.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace stacklens::render {

const char* limitsModeName(LimitsMode m) {
  switch (m) {
    case LimitsMode::MinMax:
      return "minmax";
    case LimitsMode::P99_5:
      return "99.5";
    case LimitsMode::P99:
      return "99";
    case LimitsMode::P98:
      return "98";
    case LimitsMode::P95:
      return "95";
    case LimitsMode::P90:
      return "90";
    case LimitsMode::ZScale:
      return "zscale";
    case LimitsMode::Manual:
      return "manual";
  }
  return "minmax";
}

LimitsMode limitsModeFromName(const std::string& name) {
  for (LimitsMode m : kAllLimitsModes)
    if (name == limitsModeName(m)) return m;
  throw std::invalid_argument("unknown limits '" + name +
                              "' (minmax, 99.5, 99, 98, 95, 90, zscale, manual)");
}

// A display range must have positive width for the shader's division.
static Limits widened(double low, double high) {
  if (!(high > low)) high = low + 1.0;
  return {static_cast<float>(low), static_cast<float>(high)};
}

static std::vector<float> finiteValues(const float* data, size_t count) {
  std::vector<float> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i)
    if (std::isfinite(data[i])) out.push_back(data[i]);
  return out;
}

Limits minMaxLimits(const float* data, size_t count) {
  float lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < count; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) return {0.f, 1.f};
  return widened(lo, hi);
}

// numpy's default ("linear") percentile of values, which it partially reorders.
static double percentileOf(std::vector<float>& values, double q) {
  const double index = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto below = static_cast<size_t>(std::floor(index));
  const double frac = index - static_cast<double>(below);
  std::nth_element(values.begin(), values.begin() + below, values.end());
  const double a = values[below];
  if (frac == 0.0 || below + 1 >= values.size()) return a;
  const double b = *std::min_element(values.begin() + below + 1, values.end());
  return a + (b - a) * frac;
}

Limits percentileLimits(const float* data, size_t count, double percent) {
  if (!(percent > 0 && percent <= 100))
    throw std::invalid_argument("percentile limits need 0 < percent <= 100");
  std::vector<float> values = finiteValues(data, count);
  if (values.empty()) return {0.f, 1.f};
  const double cut = (100.0 - percent) / 2.0;
  const double lo = percentileOf(values, cut);
  const double hi = percentileOf(values, 100.0 - cut);
  return widened(lo, hi);
}

// zscale's sample: up to `count` of the values at an even stride, sorted.
static std::vector<float> zscaleSamples(const std::vector<float>& values, int count) {
  const size_t stride =
      std::max<size_t>(1, static_cast<size_t>(static_cast<double>(values.size()) / count));
  std::vector<float> samples;
  for (size_t i = 0; i < values.size() && samples.size() < static_cast<size_t>(count); i += stride)
    samples.push_back(values[i]);
  std::sort(samples.begin(), samples.end());
  return samples;
}

// A straight line through the samples against their index, and the number of points it fits.
struct ZScaleLine {
  double n = 0, slope = 0.0, intercept = 0.0;
};

// Least-squares line through the good points (polyfit with 0/1 weights).
static ZScaleLine fitGoodPoints(const std::vector<float>& samples, const std::vector<char>& bad) {
  const auto npix = static_cast<int64_t>(samples.size());
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int64_t i = 0; i < npix; ++i) {
    if (bad[i]) continue;
    const double x = static_cast<double>(i), y = samples[i];
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double det = n * sxx - sx * sx;
  ZScaleLine line;
  line.n = n;
  line.slope = det != 0 ? (n * sxy - sx * sy) / det : 0.0;
  line.intercept = (sy - line.slope * sx) / n;
  return line;
}

// kRej times the population std of the residuals of the good points.
static double rejectionThreshold(const std::vector<float>& samples, const std::vector<char>& bad,
                                 const ZScaleLine& line, double kRej) {
  const auto npix = static_cast<int64_t>(samples.size());
  const double slope = line.slope, intercept = line.intercept, n = line.n;
  double mean = 0;
  for (int64_t i = 0; i < npix; ++i)
    if (!bad[i]) mean += samples[i] - (slope * i + intercept);
  mean /= n;
  double var = 0;
  for (int64_t i = 0; i < npix; ++i)
    if (!bad[i]) {
      const double d = samples[i] - (slope * i + intercept) - mean;
      var += d * d;
    }
  return kRej * std::sqrt(var / n);
}

// Marks every point (good or not) whose residual lies beyond ±threshold.
static void rejectBeyond(const std::vector<float>& samples, std::vector<char>& bad,
                         const ZScaleLine& line, double threshold) {
  const auto npix = static_cast<int64_t>(samples.size());
  for (int64_t i = 0; i < npix; ++i) {
    const double flat = samples[i] - (line.slope * i + line.intercept);
    if (flat < -threshold || flat > threshold) bad[i] = 1;
  }
}

// Grow the rejected set like np.convolve(bad, ones(ngrow), mode="same"): output i sees
// inputs i − (ngrow − (ngrow−1)/2 − 1) … i + (ngrow−1)/2. `grown` is scratch of bad's size.
static void growRejected(std::vector<char>& bad, std::vector<char>& grown, int64_t ngrow) {
  const auto npix = static_cast<int64_t>(bad.size());
  const int64_t ahead = (ngrow - 1) / 2, behind = ngrow - 1 - ahead;
  for (int64_t i = 0; i < npix; ++i) {
    char any = 0;
    for (int64_t j = std::max<int64_t>(0, i - behind); j <= std::min(npix - 1, i + ahead) && !any;
         ++j)
      any = bad[j];
    grown[i] = any;
  }
  bad.swap(grown);
}

// Narrows [vmin, vmax] to the line's span around the samples' median, its slope eased by the
// contrast.
static void narrowToLine(const std::vector<float>& samples, double slope, double contrast,
                         double& vmin, double& vmax) {
  const auto npix = static_cast<int64_t>(samples.size());
  if (contrast > 0) slope /= contrast;
  const int64_t center = (npix - 1) / 2;
  const double median =
      npix % 2 ? samples[center] : 0.5 * (double(samples[center]) + double(samples[center + 1]));
  vmin = std::max(vmin, median - static_cast<double>(center - 1) * slope);
  vmax = std::min(vmax, median + static_cast<double>(npix - center) * slope);
}

Limits zscaleLimits(const float* data, size_t count, const ZScaleOptions& o) {
  std::vector<float> values = finiteValues(data, count);
  if (values.empty()) return {0.f, 1.f};
  const std::vector<float> samples = zscaleSamples(values, o.samples);
  const auto npix = static_cast<int64_t>(samples.size());
  double vmin = samples.front(), vmax = samples.back();

  const int64_t minpix =
      std::max<int64_t>(o.minPixels, static_cast<int64_t>(static_cast<double>(npix) * o.maxReject));
  const int64_t ngrow =
      std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(npix) * 0.01));
  std::vector<char> bad(npix, 0), grown(npix, 0);
  int64_t ngood = npix, lastNgood = npix + 1;
  ZScaleLine line;
  bool fitted = false;
  for (int iter = 0; iter < o.maxIterations; ++iter) {
    if (ngood >= lastNgood || ngood < minpix) break;
    line = fitGoodPoints(samples, bad);
    fitted = true;
    rejectBeyond(samples, bad, line, rejectionThreshold(samples, bad, line, o.kRej));
    growRejected(bad, grown, ngrow);
    lastNgood = ngood;
    ngood = std::count(bad.begin(), bad.end(), 0);
  }
  if (fitted && ngood >= minpix) narrowToLine(samples, line.slope, o.contrast, vmin, vmax);
  return widened(vmin, vmax);
}

Limits computeLimits(LimitsMode mode, const float* data, size_t count, Limits manual) {
  switch (mode) {
    case LimitsMode::MinMax:
      return minMaxLimits(data, count);
    case LimitsMode::P99_5:
      return percentileLimits(data, count, 99.5);
    case LimitsMode::P99:
      return percentileLimits(data, count, 99);
    case LimitsMode::P98:
      return percentileLimits(data, count, 98);
    case LimitsMode::P95:
      return percentileLimits(data, count, 95);
    case LimitsMode::P90:
      return percentileLimits(data, count, 90);
    case LimitsMode::ZScale:
      return zscaleLimits(data, count);
    case LimitsMode::Manual:
      return manual;
  }
  return manual;
}

Limits sliceLimits(LimitsMode mode, const float* data, size_t count) {
  const size_t sample = size_t(1) << 20;
  const bool percentile = mode != LimitsMode::MinMax && mode != LimitsMode::ZScale;
  if (!percentile || count <= 2 * sample) return computeLimits(mode, data, count);
  std::vector<float> values;
  values.reserve(sample + 1);
  const size_t stride = count / sample;
  for (size_t i = 0; i < count; i += stride) values.push_back(data[i]);
  return computeLimits(mode, values.data(), values.size());
}

}  // namespace stacklens::render
