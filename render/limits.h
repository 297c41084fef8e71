// Display limits: min/max, symmetric percentiles and IRAF's zscale, from one slice.
#pragma once

#include <cstddef>
#include <string>

namespace stacklens::render {

struct Limits {
  float low = 0.f;
  float high = 1.f;
};

enum class LimitsMode { MinMax, P99_5, P99, P98, P95, P90, ZScale, Manual };
inline constexpr LimitsMode kAllLimitsModes[] = {
    LimitsMode::MinMax, LimitsMode::P99_5, LimitsMode::P99,    LimitsMode::P98,
    LimitsMode::P95,    LimitsMode::P90,   LimitsMode::ZScale, LimitsMode::Manual};
const char* limitsModeName(LimitsMode m);  // "minmax", "99.5", ..., "zscale", "manual"
// Throws std::invalid_argument naming the unknown mode.
LimitsMode limitsModeFromName(const std::string& name);

// Finite values only; {0, 1} when there is none. high > low always holds (a flat slice gets
// high = low + 1) so the shader never divides by zero.
Limits minMaxLimits(const float* data, size_t count);
// The central `percent` % of the finite values (DS9 "99.5%": 0.25 % cut at each end), with
// linear interpolation between order statistics (numpy's default percentile).
Limits percentileLimits(const float* data, size_t count, double percent);

struct ZScaleOptions {
  int samples = 1000;
  double contrast = 0.25;
  double maxReject = 0.5;
  int minPixels = 5;
  double kRej = 2.5;
  int maxIterations = 5;
};
// IRAF's zscale as astropy's ZScaleInterval implements it: up to `samples` finite values taken
// at an even stride, sorted, a straight line fitted with iterative k-sigma rejection (rejected
// points grown by 1 % of the sample), slope divided by the contrast, limits around the median.
Limits zscaleLimits(const float* data, size_t count, const ZScaleOptions& options = {});

// Dispatches on mode (Manual returns {low, high} unchanged as given).
Limits computeLimits(LimitsMode mode, const float* data, size_t count, Limits manual = {});
// The limits of a whole slice as the viewer shows it at once: percentiles of a big slice come
// from an even-stride sample of 2^20 pixels (a selection pass over 16 M values would hold up the
// first frame); zscale samples anyway, min/max is exact.
Limits sliceLimits(LimitsMode mode, const float* data, size_t count);

}  // namespace stacklens::render
