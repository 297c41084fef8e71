// Display scales (DS9 definitions) mapping a value between the limits to [0, 1] before the
// colormap.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace stacklens::render {

// DS9's scales. With x = (v − low) / (high − low) clamped to [0, 1]:
// linear x; log log10(a·x + 1) / log10(a); sqrt √x; squared x²; asinh asinh(10x) / 3;
// power (aˣ − 1) / a; histogram equalisation: the cumulative distribution of the slice's values.
enum class Scale { Linear, Log, Sqrt, Squared, Asinh, Power, HistEq };

inline constexpr Scale kAllScales[] = {Scale::Linear, Scale::Log,   Scale::Sqrt,  Scale::Squared,
                                       Scale::Asinh,  Scale::Power, Scale::HistEq};
const char* scaleName(Scale s);  // "linear", "log", ...
// Throws std::invalid_argument naming the unknown scale.
Scale scaleFromName(const std::string& name);

inline constexpr float kDefaultScaleExponent = 1000.f;  // DS9's default for log and power
inline constexpr int kCdfSize = 1024;                   // entries of the equalisation CDF

// The CPU version of the shader's mapping (for the colorbar, the histogram and tests).
// cdf is needed for HistEq only (kCdfSize entries, see equalisationCdf).
float applyScale(Scale s, float x, float exponent = kDefaultScaleExponent,
                 const std::vector<float>* cdf = nullptr);

// The cumulative distribution of the finite values of data within [low, high], sampled at
// kCdfSize equal steps of x ∈ [0, 1] (entry i covers x ≤ (i + 1) / kCdfSize); it rises from
// ≥ 0 to 1. All entries are a linear ramp when no value lies in range. With stride > 1 only
// data[0], data[stride], ... are counted (an even sample of a big slice).
std::vector<float> equalisationCdf(const float* data, size_t count, float low, float high,
                                   size_t stride = 1);
// The stride that samples about kCdfSampleTarget values of count (1 for small slices).
inline constexpr size_t kCdfSampleTarget = size_t(1) << 20;
inline size_t cdfStride(size_t count) {
  return count > 2 * kCdfSampleTarget ? count / kCdfSampleTarget : 1;
}

}  // namespace stacklens::render
