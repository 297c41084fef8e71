// DS9 display scales and the histogram-equalisation CDF, on the CPU.
#include "render/scale.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace stacklens::render {

const char* scaleName(Scale s) {
  switch (s) {
    case Scale::Linear:
      return "linear";
    case Scale::Log:
      return "log";
    case Scale::Sqrt:
      return "sqrt";
    case Scale::Squared:
      return "squared";
    case Scale::Asinh:
      return "asinh";
    case Scale::Power:
      return "power";
    case Scale::HistEq:
      return "histequ";
  }
  return "linear";
}

Scale scaleFromName(const std::string& name) {
  for (Scale s : kAllScales)
    if (name == scaleName(s)) return s;
  throw std::invalid_argument("unknown scale '" + name +
                              "' (linear, log, sqrt, squared, asinh, power, histequ)");
}

float applyScale(Scale s, float x, float exponent, const std::vector<float>* cdf) {
  x = std::clamp(x, 0.f, 1.f);
  switch (s) {
    case Scale::Linear:
      return x;
    case Scale::Log:
      return std::log10(exponent * x + 1.f) / std::log10(exponent);
    case Scale::Sqrt:
      return std::sqrt(x);
    case Scale::Squared:
      return x * x;
    case Scale::Asinh:
      return std::asinh(10.f * x) / 3.f;
    case Scale::Power:
      return (std::pow(exponent, x) - 1.f) / exponent;
    case Scale::HistEq: {
      if (!cdf || cdf->empty()) return x;
      auto i = std::min(static_cast<size_t>(x * cdf->size()), cdf->size() - 1);
      return (*cdf)[i];
    }
  }
  return x;
}

std::vector<float> equalisationCdf(const float* data, size_t count, float low, float high,
                                   size_t stride) {
  stride = std::max<size_t>(1, stride);
  std::vector<double> histogram(kCdfSize, 0.0);
  const double width = static_cast<double>(high) - low;
  double total = 0;
  if (width > 0) {
    for (size_t i = 0; i < count; i += stride) {
      const float v = data[i];
      if (!(v >= low && v <= high)) continue;  // also skips NaN
      auto bin = static_cast<int>((v - low) / width * kCdfSize);
      histogram[std::min(bin, kCdfSize - 1)] += 1;
      total += 1;
    }
  }
  std::vector<float> cdf(kCdfSize);
  double running = 0;
  for (int i = 0; i < kCdfSize; ++i) {
    running += histogram[i];
    cdf[i] = total > 0 ? static_cast<float>(running / total) : float(i + 1) / kCdfSize;
  }
  return cdf;
}

}  // namespace stacklens::render
