#include "compute/volume_render.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace stacklens::compute {
namespace {

double positiveOr1(double v) { return std::isfinite(v) && v > 0 ? v : 1.0; }

// a · b for row-major 3 × 3 matrices.
void multiply(const double* a, const double* b, double* out) {
  double r[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  std::copy(r, r + 9, out);
}

void aboutX(double degrees, double* out) {
  const double a = degrees * std::numbers::pi / 180, c = std::cos(a), s = std::sin(a);
  const double r[9] = {1, 0, 0, 0, c, -s, 0, s, c};
  std::copy(r, r + 9, out);
}

void aboutY(double degrees, double* out) {
  const double a = degrees * std::numbers::pi / 180, c = std::cos(a), s = std::sin(a);
  const double r[9] = {c, 0, s, 0, 1, 0, -s, 0, c};
  std::copy(r, r + 9, out);
}

}  // namespace

const char* volumeModeName(VolumeMode mode) {
  switch (mode) {
    case VolumeMode::Mip:
      return "mip";
    case VolumeMode::AttenuatedMip:
      return "attenuated-mip";
    case VolumeMode::Average:
      return "average";
    case VolumeMode::IsoSurface:
      return "iso";
  }
  return "?";
}

VolumeMode parseVolumeMode(const std::string& name) {
  for (VolumeMode m :
       {VolumeMode::Mip, VolumeMode::AttenuatedMip, VolumeMode::Average, VolumeMode::IsoSurface})
    if (name == volumeModeName(m)) return m;
  throw InvalidArgument("unknown volume rendering mode '" + name +
                        "' (mip, attenuated-mip, average, iso)");
}

VolumeGeometry volumeGeometry(const Shape& shape, const Spacing& spacing,
                              const VolumeRenderParams& p) {
  if (shape.empty()) throw InvalidArgument("volume rendering needs a non-empty volume");
  if (p.width < 1 || p.height < 1 || p.width > 16384 || p.height > 16384)
    throw InvalidArgument("the volume view's size must be 1..16384 pixels a side");
  if (!(p.zoom > 0) || !std::isfinite(p.zoom))
    throw InvalidArgument("the volume view's zoom must be a positive number");
  if (!(p.stepScale > 0) || !std::isfinite(p.stepScale))
    throw InvalidArgument("the volume view's step scale must be a positive number");
  for (double r : p.rotation)
    if (!std::isfinite(r)) throw InvalidArgument("the volume view's rotation is not finite");

  const double side[3] = {positiveOr1(spacing.x), positiveOr1(spacing.y), positiveOr1(spacing.z)};
  const int64_t n[3] = {shape.x, shape.y, shape.z};
  double extent[3], longest = 0;
  for (int a = 0; a < 3; ++a) longest = std::max(longest, extent[a] = double(n[a]) * side[a]);
  VolumeGeometry g{};
  for (int i = 0; i < 9; ++i) g.rotation[i] = float(p.rotation[i]);
  double radius2 = 0;
  for (int a = 0; a < 3; ++a) {
    const double half = extent[a] / longest / 2;
    g.half[a] = float(half);
    g.toIndex[a] = float(longest / side[a]);
    g.size[a] = int(n[a]);
    radius2 += half * half;
  }
  g.width = p.width, g.height = p.height;
  g.pixel = float(2 * std::sqrt(radius2) / (p.zoom * std::min(p.width, p.height)));
  g.voxelStep = float(std::min({side[0], side[1], side[2]}) / longest);
  g.step = float(g.voxelStep * p.stepScale);
  g.mode = int(p.mode);
  g.low = float(p.low);
  g.high = float(p.high > p.low ? p.high : p.low + 1);
  g.attenuation = float(p.attenuation);
  g.isoLevel = float(p.isoLevel);
  return g;
}

void turnView(const double* rotation, double tiltDegrees, double turnDegrees, double* out) {
  double x[9], y[9], xy[9];
  aboutX(tiltDegrees, x);
  aboutY(turnDegrees, y);
  multiply(x, y, xy);
  multiply(xy, rotation, out);
}

void orbitRotation(double azimuthDegrees, double elevationDegrees, double* out) {
  const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  turnView(identity, elevationDegrees, azimuthDegrees, out);
}

}  // namespace stacklens::compute
