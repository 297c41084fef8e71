// The rules of the operations' parameters (compute/params.h), in one place for every caller.
#include "compute/params.h"

#include <charconv>
#include <cmath>

namespace stacklens::compute {
namespace {

// The shortest text that reads back as the same number ("0.1", "nan", "-inf").
std::string number(double v) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}

[[noreturn]] void reject(const char* parameter, const std::string& what, const std::string& rule,
                         double value) {
  throw InvalidParameter(parameter, what + " must be " + rule + ", got " + number(value));
}

bool finite(double v) { return std::isfinite(v); }

std::string oddWindow() { return "odd, from 1 to " + std::to_string(kLargestMedianWindow); }

}  // namespace

void validate(const BlurParams& p) {
  if (!finite(p.sigmaZ) || p.sigmaZ < 0)
    reject("sigmaZ", "blur sigma on z", "finite and ≥ 0 (0: each slice in 2D)", p.sigmaZ);
  if (!finite(p.sigmaY) || !(p.sigmaY > 0))
    reject("sigmaY", "blur sigma on y", "finite and > 0", p.sigmaY);
  if (!finite(p.sigmaX) || !(p.sigmaX > 0))
    reject("sigmaX", "blur sigma on x", "finite and > 0", p.sigmaX);
  if (!finite(p.truncate) || !(p.truncate > 0))
    reject("truncate", "blur truncate", "finite and > 0", p.truncate);
  // A radius this large means billions of taps (and more than an int holds on the GPU): refused
  // instead of running for hours.
  for (const double sigma : {p.sigmaZ, p.sigmaY, p.sigmaX})
    if (!(blurRadius(sigma, p.truncate) < 1000000))
      reject("truncate", "blur truncate · sigma (the kernel radius)", "below 10^6 pixels",
             p.truncate * sigma);
}

int64_t blurRadius(double sigma, double truncate) {
  const double reach = truncate * sigma + 0.5;
  // Saturated below 2^63 (and for NaN) so that the conversion is always defined.
  if (!(reach < 9.0e18)) return std::numeric_limits<int64_t>::max();
  return reach > 0 ? static_cast<int64_t>(reach) : 0;
}

Sigmas sigmasFromList(const std::vector<double>& values, OneSigma one) {
  if (values.size() == 1) {
    const double s = values[0];
    return {one == OneSigma::EveryAxis ? s : 0.0, s, s};
  }
  if (values.size() == 3) return {values[0], values[1], values[2]};
  throw InvalidArgument("expected S or SZ,SY,SX, got " + std::to_string(values.size()) + " values");
}

void validateMedianSize(int size) {
  if (size < 1 || size % 2 == 0 || size > kLargestMedianWindow)
    reject("size", "median size", oddWindow(), size);
}

void validate(const DeconvolveParams& p) {
  if (p.iterations < 1) reject("iterations", "deconvolution iterations", "≥ 1", p.iterations);
  if (!finite(p.tvLambda) || p.tvLambda < 0)
    reject("tvLambda", "deconvolution TV weight", "finite and ≥ 0", p.tvLambda);
  if (!std::isfinite(p.epsilon) || !(p.epsilon > 0))
    reject("epsilon", "deconvolution epsilon", "finite and > 0", p.epsilon);
  if (p.boundary != Boundary::Reflect && p.boundary != Boundary::Periodic &&
      p.boundary != Boundary::Zero && p.boundary != Boundary::ReflectExact)
    reject("boundary", "deconvolution boundary",
           "reflect (0), periodic (1), zero (2) or reflect-exact (3)",
           static_cast<int>(p.boundary));
  // The exact reflection keeps the estimate in a permuted order (the DCT's), where the TV term's
  // neighbours are not neighbours.
  if (p.boundary == Boundary::ReflectExact && p.tvLambda > 0)
    reject("tvLambda", "deconvolution TV weight with the reflect-exact boundary", "0", p.tvLambda);
}

void validate(const ClipParams& p) {
  if (!finite(p.kappaLower) || p.kappaLower < 0)
    reject("kappaLower", "clipping kappa lower", "finite and ≥ 0", p.kappaLower);
  if (!finite(p.kappaUpper) || p.kappaUpper < 0)
    reject("kappaUpper", "clipping kappa upper", "finite and ≥ 0", p.kappaUpper);
}

void validate(const SegmentParams& p) {
  if (p.connectivity != 4 && p.connectivity != 8)
    reject("connectivity", "segmentation connectivity", "4 or 8", p.connectivity);
  if (p.minPixels < 1)
    reject("minPixels", "segmentation minimum pixels", "≥ 1", static_cast<double>(p.minPixels));
  if (p.absoluteThreshold && !finite(*p.absoluteThreshold))
    reject("absoluteThreshold", "segmentation threshold", "finite", *p.absoluteThreshold);
  if (!p.absoluteThreshold && (!finite(p.nSigma) || !(p.nSigma > 0)))
    reject("nSigma", "segmentation nsigma", "finite and > 0", p.nSigma);
  if (p.background) return;
  try {
    validate(p.clip);
  } catch (const InvalidParameter& e) {
    throw InvalidParameter("clip." + e.parameter(),
                           std::string("segmentation background ") + e.what());
  }
}

void validate(const OutlierParams& p) {
  if (p.size < 1 || p.size % 2 == 0 || p.size > kLargestMedianWindow)
    reject("size", "outlier window size", oddWindow(), p.size);
  if (!finite(p.threshold) || p.threshold < 0)
    reject("threshold", "outlier threshold", "finite and ≥ 0", p.threshold);
  if (p.mode != OutlierMode::Bright && p.mode != OutlierMode::Dark && p.mode != OutlierMode::Both)
    reject("mode", "outlier mode", "bright (0), dark (1) or both (2)", static_cast<int>(p.mode));
}

void validate(const ResampleParams& p) {
  if (!finite(p.zoomZ) || !(p.zoomZ > 0))
    reject("zoomZ", "resample zoom on z", "finite and > 0", p.zoomZ);
  if (!finite(p.zoomY) || !(p.zoomY > 0))
    reject("zoomY", "resample zoom on y", "finite and > 0", p.zoomY);
  if (!finite(p.zoomX) || !(p.zoomX > 0))
    reject("zoomX", "resample zoom on x", "finite and > 0", p.zoomX);
  if (p.order != 1 && p.order != 3)
    reject("order", "resample order", "1 (linear) or 3 (cubic)", p.order);
}

void validate(const MomentParams& p) {
  if (p.order < 0 || p.order > 2) reject("order", "moment order", "0, 1 or 2", p.order);
  if (std::isnan(p.clip)) reject("clip", "moment clip level", "a number", p.clip);
}

Shape resampledShape(Shape in, const ResampleParams& p) {
  validate(p);
  const double zoom[3] = {p.zoomZ, p.zoomY, p.zoomX};
  const int64_t n[3] = {in.z, in.y, in.x};
  const char* axis[3] = {"z", "y", "x"};
  int64_t out[3];
  for (int a = 0; a < 3; ++a) {
    const double length = std::nearbyint(double(n[a]) * zoom[a]);  // ties to even
    if (length < 1 || length > 1.0e9)
      throw InvalidArgument("resample: zoom " + number(zoom[a]) + " on " + axis[a] +
                            " gives an output length of " +
                            (length < 1 ? std::string("0") : std::string("over 10^9")) +
                            " (input " + std::to_string(n[a]) + ")");
    out[a] = static_cast<int64_t>(length);
  }
  return {out[0], out[1], out[2]};
}

}  // namespace stacklens::compute
