// The operations' parameters as text (compute/params_text.h).
#include "compute/params_text.h"

#include <charconv>
#include <sstream>

#include "compute/projection.h"

namespace stacklens::compute {
namespace {

std::string shortest(float v) {
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}

}  // namespace

const char* outlierModeName(OutlierMode m) {
  return m == OutlierMode::Bright ? "bright" : m == OutlierMode::Dark ? "dark" : "both";
}

std::optional<Boundary> boundaryNamed(const std::string& word) {
  for (Boundary b : {Boundary::Reflect, Boundary::Periodic, Boundary::Zero, Boundary::ReflectExact})
    if (word == boundaryName(b)) return b;
  return std::nullopt;
}

const char* boundaryName(Boundary b) {
  return b == Boundary::Periodic       ? "periodic"
         : b == Boundary::Zero         ? "zero"
         : b == Boundary::ReflectExact ? "reflect-exact"
                                       : "reflect";
}

std::string describeNumber(double v, Digits digits) {
  if (digits == Digits::Exact) {
    char buffer[64];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
    return std::string(buffer, end);
  }
  std::ostringstream out;
  out.precision(6);
  out << v;
  return out.str();
}

std::string describeMedianSize(int size) { return "size=" + std::to_string(size); }

std::string describe(const OutlierParams& p, Digits digits) {
  return "size=" + std::to_string(p.size) + " threshold=" + describeNumber(p.threshold, digits) +
         " mode=" + outlierModeName(p.mode);
}

std::string describe(const BlurParams& p, Digits digits) {
  return "sigma=" + describeNumber(p.sigmaZ, digits) + "," + describeNumber(p.sigmaY, digits) +
         "," + describeNumber(p.sigmaX, digits) +
         " truncate=" + describeNumber(p.truncate, digits) + (p.nanAware ? " nan-aware" : "");
}

std::string describe(const DeconvolveParams& p, Digits digits) {
  std::string out = std::string(p.threeD ? "3d" : "2d") +
                    " iterations=" + std::to_string(p.iterations) +
                    " boundary=" + boundaryName(p.boundary);
  if (p.tvLambda != 0) out += " tv=" + describeNumber(p.tvLambda, digits);
  if (p.accelerate) out += " accelerated";
  if (p.epsilon != DeconvolveParams{}.epsilon)
    out += " epsilon=" +
           (digits == Digits::Exact ? shortest(p.epsilon) : describeNumber(p.epsilon, digits));
  return out;
}

std::string describe(const ClipParams& p, Digits digits) {
  return "kappa=" + describeNumber(p.kappaLower, digits) + "," +
         describeNumber(p.kappaUpper, digits) +
         " max-iterations=" + std::to_string(p.maxIterations);
}

std::string describe(const SegmentParams& p, Digits digits) {
  std::string out = p.absoluteThreshold
                        ? "threshold=" + describeNumber(*p.absoluteThreshold, digits)
                        : "nsigma=" + describeNumber(p.nSigma, digits);
  return out + " connectivity=" + std::to_string(p.connectivity) +
         " min-pixels=" + std::to_string(p.minPixels) + " " + describe(p.clip, digits);
}

std::string describe(const ResampleParams& p, Digits digits) {
  return "zoom=" + describeNumber(p.zoomZ, digits) + "," + describeNumber(p.zoomY, digits) + "," +
         describeNumber(p.zoomX, digits) + " order=" + std::to_string(p.order);
}

std::string describe(const ProjectParams& p) {
  return std::string("op=") + projectionName(p.op) + " first=" + std::to_string(p.first) +
         " last=" + std::to_string(p.last);
}

std::string describe(const MomentParams& p, Digits digits) {
  std::string out = "order=" + std::to_string(p.order) + " first=" + std::to_string(p.first) +
                    " last=" + std::to_string(p.last);
  if (p.clip != MomentParams{}.clip) out += " clip=" + describeNumber(p.clip, digits);
  return out;
}

}  // namespace stacklens::compute
