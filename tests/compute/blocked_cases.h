// Volumes, parameters and plans the blocked-deconvolution tests share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "compute/backend.h"
#include "compute/blocked/block_plan.h"
#include "compute/blocked/blocked_deconvolution.h"

namespace stacklens::testing {

using compute::Block;
using compute::BlockPlan;
using compute::Boundary;
using compute::DeconvolveParams;
using compute::Image;
using compute::Shape;

// How close blocks that exchange halos (on the CPU, or resident on the GPU) come to the unblocked
// run. Float rounding is all that separates the two: each convolution rounds to about 1e-6 of the
// largest values on either FFT length (frames and the whole domain differ), and Richardson–Lucy's
// multiplicative steps do not amplify it over these iterations, so the runs agree to about 1e-6
// (the figures printed). 1e-4 leaves that a hundredfold while the overlapping blocks miss by
// more than 1e-3 on the same data (OverlappingBlocksMissTheTails).
inline constexpr double kExactBlocksTolerance = 1e-4;

// Beads blurred over a smooth background with a little noise: positive, like microscopy data.
inline Image beads(Shape s, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> pos(0.0, 1.0);
  std::normal_distribution<float> noise(0.f, 0.5f);
  Image im = Image::host(s);
  std::vector<std::array<double, 4>> b;
  for (int i = 0; i < 40; ++i)
    b.push_back({pos(rng) * s.z, pos(rng) * s.y, pos(rng) * s.x, 50 + 100 * pos(rng)});
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        double v = 10.0 + 0.1 * x + 0.05 * y;
        for (const auto& c : b) {
          const double d2 =
              (z - c[0]) * (z - c[0]) + (y - c[1]) * (y - c[1]) + (x - c[2]) * (x - c[2]);
          v += c[3] * std::exp(-d2 / 4.0);
        }
        im.data()[(z * s.y + y) * s.x + x] = static_cast<float>(std::max(0.0, v + noise(rng)));
      }
  return im;
}

inline DeconvolveParams params3d(int iterations, Boundary boundary = Boundary::Reflect) {
  DeconvolveParams p;
  p.iterations = iterations;
  p.threeD = true;
  p.boundary = boundary;
  return p;
}

// A budget that makes the plan cut the volume into several blocks: a fraction of what the
// unblocked run's frame would need.
inline size_t budgetFor(Shape volume, Shape psf, const DeconvolveParams& p, double fraction) {
  const double frame = double(volume.z + psf.z) * double(volume.y + psf.y) * (volume.x + psf.x);
  return static_cast<size_t>(fraction * frame *
                             double(compute::frameCosts("cpu", p).bytesPerVoxel));
}

// A CPU plan with slabs for a generous host budget.
inline BlockPlan cpuPlan(Shape volume, Shape psf, const DeconvolveParams& p, size_t budget,
                         Shape halo = {-1, -1, -1}, Shape maxInterior = {0, 0, 0}) {
  BlockPlan plan =
      compute::planBlocks(volume, psf, p, compute::frameCosts("cpu", p), budget, halo, maxInterior);
  compute::planSlabs(plan, size_t(1) << 30, true);
  return plan;
}

// A PSF that is zero beyond two voxels of its centre.
inline Image compactPsf() {
  Image psf = Image::host({5, 5, 5});
  for (int64_t z = 0; z < 5; ++z)
    for (int64_t y = 0; y < 5; ++y)
      for (int64_t x = 0; x < 5; ++x)
        psf.at(z, y, x) =
            float(1.0 / (1 + (z - 2) * (z - 2) + (y - 2) * (y - 2) + (x - 2) * (x - 2)));
  return psf;
}

// Like a bead imaged on a microscope: a Gaussian core, longer along z and a little off centre,
// on a broad power-law (Moffat-like) halo that fills the whole array and leans along z, with
// faint noise. symmetric: its mirror-symmetric part on odd sides (for reflect-exact).
inline Image measuredLikePsf(Shape s, bool symmetric, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 2e-4);
  Image psf = Image::host(s);
  const double cz = s.z / 2 + (symmetric ? 0.0 : 0.4), cy = s.y / 2 + (symmetric ? 0.0 : -0.3),
               cx = s.x / 2 + (symmetric ? 0.0 : 0.2);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        const double dz = z - cz, dy = y - cy, dx = x - cx;
        const double core = std::exp(-0.5 * (dz * dz / 9.0 + (dy * dy + dx * dx) / 2.25));
        const double r2 = dz * dz / 16.0 + (dy * dy + dx * dx) / 4.0;
        const double lean = symmetric ? 1.0 : 1.0 + 0.3 * dz / s.z;
        const double halo = 0.03 * lean / std::pow(1.0 + r2, 1.2);
        psf.at(z, y, x) = float(std::max(0.0, core + halo + noise(rng)));
      }
  if (!symmetric) return psf;
  Image mirrored = Image::host(s);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        double sum = 0;
        for (int m = 0; m < 8; ++m)
          sum += psf.at(m & 1 ? s.z - 1 - z : z, m & 2 ? s.y - 1 - y : y, m & 4 ? s.x - 1 - x : x);
        mirrored.at(z, y, x) = float(sum / 8);
      }
  return mirrored;
}

// The largest difference within `margin` of a seam between interiors, against the largest
// value there: what a seam looks like.
inline double worstAtSeams(const Image& a, const Image& b, const BlockPlan& plan, Shape margin) {
  const Shape s = a.shape();
  std::vector<bool> near[3] = {std::vector<bool>(size_t(s.z)), std::vector<bool>(size_t(s.y)),
                               std::vector<bool>(size_t(s.x))};
  const int64_t n[3] = {s.z, s.y, s.x}, m[3] = {margin.z, margin.y, margin.x};
  for (const Block& block : plan.blocks) {
    const int64_t starts[3] = {block.interior.z0, block.interior.y0, block.interior.x0};
    for (int axis = 0; axis < 3; ++axis)
      for (int64_t i = starts[axis] - m[axis]; i < starts[axis] + m[axis]; ++i)
        if (starts[axis] > 0 && starts[axis] < n[axis] && i >= 0 && i < n[axis])
          near[axis][size_t(i)] = true;
  }
  double worst = 0, largest = 0;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        if (!near[0][size_t(z)] && !near[1][size_t(y)] && !near[2][size_t(x)]) continue;
        const int64_t i = (z * s.y + y) * s.x + x;
        worst = std::max(worst, double(std::fabs(a.data()[i] - b.data()[i])));
        largest = std::max(largest, double(std::fabs(b.data()[i])));
      }
  return worst / largest;
}

// The non-finite case both exchanging schemes share: a volume with a NaN and an infinity,
// deconvolved in the blocks planFor makes (at least four) and unblocked. Non-finite input values
// count as 0 while iterating and come back unchanged; every other voxel is within tolerance of the
// unblocked result's largest value.
inline void expectNonFiniteValuesComeBack(
    const std::function<BlockPlan(Shape, Shape, const DeconvolveParams&, Shape)>& planFor,
    double tolerance) {
  auto cpu = compute::makeCpuBackend(2);
  const Shape shape{24, 32, 32};
  Image volume = beads(shape, 29);
  volume.at(3, 15, 16) = std::numeric_limits<float>::quiet_NaN();
  volume.at(12, 16, 2) = std::numeric_limits<float>::infinity();
  const Image psf = measuredLikePsf({9, 8, 8}, false, 7);
  const DeconvolveParams p = params3d(5);
  const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
  const BlockPlan plan = planFor(shape, psf.shape(), p, {12, 16, 0});
  ASSERT_GE(plan.count(), 4);
  const Image blocked = compute::deconvolveBlocked(*cpu, volume, psf, p, plan);
  EXPECT_TRUE(std::isnan(blocked.at(3, 15, 16)));
  EXPECT_EQ(blocked.at(12, 16, 2), std::numeric_limits<float>::infinity());
  double worst = 0, largest = 0;
  for (int64_t i = 0; i < shape.count(); ++i) {
    if (!std::isfinite(volume.data()[i])) continue;
    worst = std::max(worst, double(std::fabs(blocked.data()[i] - whole.data()[i])));
    largest = std::max(largest, double(whole.data()[i]));
  }
  EXPECT_LT(worst, tolerance * largest);
}

}  // namespace stacklens::testing
