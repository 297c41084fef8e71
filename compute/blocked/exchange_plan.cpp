// planExchange: per axis the domain cut into even pieces, each framed by its halo; of the cuts
// that fit the budget, the one with the fewest frame voxels.
#include "compute/blocked/exchange_plan.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "compute/rl_frame.h"

namespace stacklens::compute {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One axis of the domain [start, start + length) cut into `count` pieces.
struct ExchangeAxis {
  int64_t count = 1, frame = 0;         // every frame on the axis has this length
  std::vector<int64_t> bounds, starts;  // interiors [bounds[i], bounds[i + 1]), frames' starts
};

// A whole axis that wraps (the torus of the unblocked run's FFT) is its own frame, with no halo;
// otherwise each interior gets the halo on both sides, and what the frame's smooth length leaves
// beyond that widens both halos alike.
// lengthFor: the frame length the backend takes for at least n samples (0: none).
ExchangeAxis cutAxis(int64_t start, int64_t length, int64_t halo, int64_t count, bool wraps,
                     int64_t (*lengthFor)(int64_t) = nextSmoothLength) {
  ExchangeAxis a;
  a.count = count;
  a.frame = count == 1 && wraps ? length : lengthFor(ceilDiv(length, count) + 2 * halo);
  if (a.frame == 0) return a;
  for (int64_t i = 0; i <= count; ++i) a.bounds.push_back(start + length * i / count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t interior = a.bounds[size_t(i + 1)] - a.bounds[size_t(i)];
    a.starts.push_back(count == 1 && wraps ? start
                                           : a.bounds[size_t(i)] - (a.frame - interior) / 2);
  }
  return a;
}

// The domain: the unblocked run's frame (compute/cpu/rl_deconvolver.cpp), with the volume after
// half the PSF, for the boundaries that pad it; the volume for the others (periodic wraps round
// it, reflect-exact mirrors at its faces at every convolution).
Box domainOf(Shape volume, Shape psf, const DeconvolveParams& p) {
  const bool padded = p.boundary == Boundary::Reflect || p.boundary == Boundary::Zero;
  if (!padded) return {0, volume.z, 0, volume.y, 0, volume.x};
  const Shape frame =
      rlFrame({volume.z + psf.z / 2 * 2, volume.y + psf.y / 2 * 2, volume.x + psf.x / 2 * 2},
              {true, true, true});
  return {-(psf.z / 2),        frame.z - psf.z / 2, -(psf.y / 2),
          frame.y - psf.y / 2, -(psf.x / 2),        frame.x - psf.x / 2};
}

// Resident frames' memory: on CUDA their observed images and estimates and the shared transform
// arrays (about as much again); on the CPU each frame is a deconvolver with all its arrays.
size_t residentBytes(Shape frame, int64_t blocks, bool cuda, const DeconvolveParams& p) {
  return cuda ? size_t(blocks + 1) * size_t(frame.count()) * kResidentBytesPerVoxel
              : size_t(blocks) * size_t(frame.count()) * exchangeFrameBytesPerVoxel(p);
}

// A cut of the domain: per axis its pieces and frames.
struct Cut {
  Box domain;
  int64_t halos[3] = {};
  ExchangeAxis axes[3];
};

// Of the cuts whose frames have lengthFor's lengths, the one with the least expected compute that
// fits accepts (frame shape, blocks); between equals, fewer blocks. A frame's halo on each side is
// what one iteration reads: the PSF's extent less one (blurred, then correlated), which also
// holds TV's one voxel.
std::optional<Cut> cheapestCut(Shape volume, Shape psf, const DeconvolveParams& p,
                               const FrameCosts& costs, Shape maxInterior,
                               int64_t (*lengthFor)(int64_t),
                               const std::function<bool(Shape, int64_t)>& fits) {
  const bool wraps = p.boundary != Boundary::ReflectExact;
  Cut cut;
  cut.domain = domainOf(volume, psf, p);
  const Box& d = cut.domain;
  const int64_t k[3] = {psf.z, psf.y, psf.x},
                most[3] = {maxInterior.z, maxInterior.y, maxInterior.x},
                start[3] = {d.z0, d.y0, d.x0}, length[3] = {d.z1 - d.z0, d.y1 - d.y0, d.x1 - d.x0};
  std::vector<ExchangeAxis> options[3];
  for (int a = 0; a < 3; ++a) {
    cut.halos[a] = std::max(k[a] - 1, int64_t(1));
    const int64_t first = most[a] > 0 ? ceilDiv(length[a], most[a]) : 1;
    for (int64_t c = first; c <= std::min(length[a], first + 63); ++c) {
      ExchangeAxis axis = cutAxis(start[a], length[a], cut.halos[a], c, wraps, lengthFor);
      if (axis.frame > 0) options[a].push_back(std::move(axis));
    }
  }
  double best = std::numeric_limits<double>::infinity();
  const ExchangeAxis* chosen[3] = {};
  for (const ExchangeAxis& az : options[0])
    for (const ExchangeAxis& ay : options[1])
      for (const ExchangeAxis& ax : options[2]) {
        const Shape f{az.frame, ay.frame, ax.frame};
        const int64_t blocks = az.count * ay.count * ax.count;
        if (!fits(f, blocks)) continue;
        const double cost =
            double(blocks) * costs.secondsPerIteration(f) * (1 + 1e-9 * double(blocks));
        if (cost < best) {
          best = cost;
          chosen[0] = &az;
          chosen[1] = &ay;
          chosen[2] = &ax;
        }
      }
  if (!chosen[0]) return std::nullopt;
  for (int a = 0; a < 3; ++a) cut.axes[a] = *chosen[a];
  return cut;
}

// The exchanging plan of a cut (the caller sets its costs).
BlockPlan exchangePlanOf(Shape volume, Shape psf, const DeconvolveParams& p, const Cut& cut) {
  const ExchangeAxis &cz = cut.axes[0], &cy = cut.axes[1], &cx = cut.axes[2];
  BlockPlan plan;
  plan.scheme = BlockScheme::Exchange;
  plan.volume = volume;
  plan.psf = psf;
  plan.halo = {cut.halos[0], cut.halos[1], cut.halos[2]};
  plan.counts = {cz.count, cy.count, cx.count};
  plan.frame = {cz.frame, cy.frame, cx.frame};
  plan.boundary = p.boundary;
  plan.domain = cut.domain;
  for (int64_t i = 0; i < cz.count; ++i)
    for (int64_t j = 0; j < cy.count; ++j)
      for (int64_t l = 0; l < cx.count; ++l) {
        Block b;
        b.interior = {cz.bounds[size_t(i)],     cz.bounds[size_t(i + 1)], cy.bounds[size_t(j)],
                      cy.bounds[size_t(j + 1)], cx.bounds[size_t(l)],     cx.bounds[size_t(l + 1)]};
        b.frame = {cz.starts[size_t(i)], cz.starts[size_t(i)] + cz.frame,
                   cy.starts[size_t(j)], cy.starts[size_t(j)] + cy.frame,
                   cx.starts[size_t(l)], cx.starts[size_t(l)] + cx.frame};
        const Shape in = b.interior.shape();
        plan.interior = {std::max(plan.interior.z, in.z), std::max(plan.interior.y, in.y),
                         std::max(plan.interior.x, in.x)};
        plan.blocks.push_back(b);
      }
  return plan;
}

}  // namespace

size_t exchangeDomainBytesPerVoxel(const DeconvolveParams& p) {
  return 3 * sizeof(float) + (p.accelerate ? 3 * sizeof(float) : 0);
}

// image, estimate and work (4 B each), spectrum and OTF (about 4 B each); TV's divergence;
// acceleration's three arrays, which the frame keeps although only the change is used.
size_t exchangeFrameBytesPerVoxel(const DeconvolveParams& p) {
  return 20 + (p.tvLambda > 0 ? 4 : 0) + (p.accelerate ? 12 : 0);
}

size_t exchangeDomainBytes(Shape volume, Shape psf, const DeconvolveParams& p) {
  return size_t(domainOf(volume, psf, p).shape().count()) * exchangeDomainBytesPerVoxel(p);
}

std::optional<BlockPlan> planExchange(Shape volume, Shape psf, const DeconvolveParams& p,
                                      const FrameCosts& costs, size_t budgetBytes,
                                      Shape maxInterior) {
  if (volume.empty() || psf.empty()) return std::nullopt;
  const size_t domainBytes = exchangeDomainBytes(volume, psf, p);
  const std::optional<Cut> cut =
      cheapestCut(volume, psf, p, costs, maxInterior, nextSmoothLength, [&](Shape f, int64_t) {
        return domainBytes + size_t(f.count()) * exchangeFrameBytesPerVoxel(p) <= budgetBytes;
      });
  if (!cut) return std::nullopt;
  BlockPlan plan = exchangePlanOf(volume, psf, p, *cut);
  plan.bytesPerBlock = size_t(plan.frame.count()) * exchangeFrameBytesPerVoxel(p);
  plan.budget = budgetBytes;
  plan.secondsPerIteration = double(plan.count()) * costs.secondsPerIteration(plan.frame);
  plan.domainBytes = domainBytes;
  return plan;
}

std::optional<BlockPlan> planResident(Shape volume, Shape psf, const DeconvolveParams& p,
                                      const FrameCosts& costs, size_t budgetBytes,
                                      Shape maxInterior) {
  if (volume.empty() || psf.empty() || p.accelerate || p.tvLambda > 0) return std::nullopt;
  const bool cuda = costs.backend == "cuda";
  const std::optional<Cut> cut =
      cheapestCut(volume, psf, p, costs, maxInterior, cuda ? nextFastFrameLength : nextSmoothLength,
                  [&](Shape f, int64_t blocks) {
                    // One block is the unblocked run, planned as such; the GPU's resident frames
                    // are fused ones.
                    return blocks >= 2 && (!cuda || costs.fast(f)) &&
                           residentBytes(f, blocks, cuda, p) <= budgetBytes;
                  });
  if (!cut) return std::nullopt;
  BlockPlan plan = exchangePlanOf(volume, psf, p, *cut);
  plan.scheme = BlockScheme::Resident;
  plan.bytesPerBlock = residentBytes(plan.frame, 1, cuda, p);
  plan.domainBytes = 0;
  plan.budget = budgetBytes;
  plan.fastFrame = costs.fast(plan.frame);
  plan.secondsPerIteration =
      double(plan.count()) * costs.secondsPerIteration(plan.frame) * kResidentStepOverhead;
  return plan;
}

}  // namespace stacklens::compute
