// Volumes, parameters and plans the blocked-deconvolution tests share.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "compute/backend.h"
#include "compute/blocked/block_plan.h"

namespace stacklens::testing {

using compute::BlockPlan;
using compute::Boundary;
using compute::DeconvolveParams;
using compute::Image;
using compute::Shape;

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

}  // namespace stacklens::testing
