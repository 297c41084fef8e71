// planBlocks: frames from the PSF and the backend's fast FFT lengths, block counts from the
// memory budget and the expected compute; planSlabs: host memory for filling and emptying them.
#include "compute/blocked/block_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "compute/rl_frame.h"

namespace stacklens::compute {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool smooth(int64_t n, std::initializer_list<int64_t> primes) {
  for (int64_t f : primes)
    while (n % f == 0) n /= f;
  return n == 1;
}

int64_t nextPowerOfTwo(int64_t n) {
  int64_t m = 1;
  while (m < n) m *= 2;
  return m;
}

// The FFT length a frame axis gets: 2, 3, 5, 7-smooth as the unblocked run's frames; on CUDA
// only 2, 3-smooth, which cuFFT transforms markedly faster than lengths with factors of 5 or 7
// at these sizes (compute/BENCHMARKS.md).
int64_t frameLength(int64_t need, const FrameCosts& costs) {
  const bool cuda = costs.backend == "cuda";
  int64_t n = std::max<int64_t>(need, 1);
  while (!(cuda ? smooth(n, {2, 3}) : smooth(n, {2, 3, 5, 7}))) ++n;
  return n;
}

// The blocks along one axis: n pieces of ceil(length / n) or one less.
std::vector<std::pair<int64_t, int64_t>> cuts(int64_t length, int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < n; ++i) out.push_back({length * i / n, length * (i + 1) / n});
  return out;
}

// One axis cut into `count` pieces: the largest interior, where the frame starts before an
// interior (lo) and the frame's length for smooth and for fast (power-of-two) transforms.
struct AxisCut {
  int64_t count = 1, interior = 0, lo = 0, smoothFrame = 0, fastFrame = 0;
};

// Boundary::ReflectExact: a frame never reaches past the volume, since each block's own faces are
// reflected exactly; one piece is the whole axis, and with more the blocks at the volume's faces
// start there (frames need interior + halo, those between interior + 2 halos). 0: no such frame.
AxisCut exactAxisCut(int64_t n, int64_t halo, int64_t count, const FrameCosts& costs) {
  AxisCut c;
  c.count = count;
  c.interior = ceilDiv(n, count);
  if (count == 1) {
    c.smoothFrame = n;
    c.fastFrame = isFastFrameLength(n) || (n & (n - 1)) == 0 ? n : 0;
    return c;
  }
  const int64_t need = c.interior + (count == 2 ? halo : 2 * halo);
  if (need > n) return AxisCut{count, c.interior, 0, 0, 0};
  c.smoothFrame = std::min(frameLength(need, costs), n);
  const int64_t fast = std::min(nextPowerOfTwo(need), nextFastFrameLength(need) > 0
                                                          ? nextFastFrameLength(need)
                                                          : std::numeric_limits<int64_t>::max());
  c.fastFrame = fast <= n ? fast : 0;
  return c;
}

AxisCut axisCut(int64_t n, int64_t psf, int64_t halo, int64_t count, bool periodic,
                const FrameCosts& costs) {
  AxisCut c;
  c.count = count;
  c.interior = ceilDiv(n, count);
  if (count == 1 && periodic) {  // the whole axis wraps onto itself: no padding
    c.smoothFrame = c.fastFrame = n;
    return c;
  }
  // One piece: the unblocked run's frame (half the PSF of padding before, the rest after); more:
  // the halo on both sides.
  c.lo = count == 1 ? psf / 2 : halo;
  const int64_t need = count == 1 ? n + 2 * (psf / 2) : c.interior + 2 * halo;
  c.smoothFrame = frameLength(need, costs);
  c.fastFrame = std::min(nextPowerOfTwo(need), nextFastFrameLength(need) > 0
                                                   ? nextFastFrameLength(need)
                                                   : std::numeric_limits<int64_t>::max());
  return c;
}

}  // namespace

size_t defaultHostBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 2
                               : size_t(4) << 30;
}

double BlockPlan::work() const {
  auto unblocked = [&](int64_t n, int64_t k) {
    const bool padded = boundary != Boundary::Periodic && boundary != Boundary::ReflectExact;
    return padded ? double(n + 2 * (k / 2)) : double(n);
  };
  return double(count()) * double(frame.count()) /
         (unblocked(volume.z, psf.z) * unblocked(volume.y, psf.y) * unblocked(volume.x, psf.x));
}

std::string BlockPlan::describe(int iterations) const {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(2);
  o << "volume " << volume.z << " x " << volume.y << " x " << volume.x << ", PSF " << psf.z << " x "
    << psf.y << " x " << psf.x << ", halo " << halo.z << " x " << halo.y << " x " << halo.x << "\n"
    << "blocks " << count() << " (" << counts.z << " x " << counts.y << " x " << counts.x
    << "), interior up to " << interior.z << " x " << interior.y << " x " << interior.x
    << ", frame " << frame.z << " x " << frame.y << " x " << frame.x
    << (fastFrame ? " (fast transforms)" : "") << "\n"
    << "memory per block about " << (bytesPerBlock >> 20) << " MiB of a budget of "
    << (budget >> 20) << " MiB\n";
  if (slabSlices > 0)
    o << "host memory for filling and emptying frames about " << (hostBytes >> 20) << " MiB ("
      << slabSlices << " slices at a time)\n";
  o << "work " << work() << " x the unblocked run's frame\n";
  o.precision(1);
  o << "expected compute about " << secondsPerIteration * iterations << " s (" << iterations
    << " iterations";
  if (devices > 1) o << ", " << devices << " devices at once";
  o << ")\n";
  return o.str();
}

BlockPlan planBlocks(Shape volume, Shape psf, const DeconvolveParams& p, const FrameCosts& costs,
                     size_t budgetBytes, Shape halo, Shape maxInterior, int devices) {
  if (devices < 1) throw InvalidArgument("blocked deconvolution: no device to run on");
  if (volume.empty()) throw InvalidArgument("blocked deconvolution: the volume is empty");
  if (psf.empty()) throw InvalidArgument("blocked deconvolution: the PSF is empty");
  if (costs.bytesPerVoxel == 0) throw InvalidArgument("blocked deconvolution: no frame costs");
  BlockPlan plan;
  plan.volume = volume;
  plan.psf = psf;
  plan.budget = budgetBytes;
  plan.boundary = p.boundary;
  // At least half the PSF on each side by default: every interior voxel's blurred value then
  // comes from real data.
  plan.halo = {halo.z < 0 ? ceilDiv(psf.z, 2) : halo.z, halo.y < 0 ? ceilDiv(psf.y, 2) : halo.y,
               halo.x < 0 ? ceilDiv(psf.x, 2) : halo.x};
  // Less would let the frame's wrap-around reach the interior within one convolution.
  if (plan.halo.z < ceilDiv(psf.z, 2) || plan.halo.y < ceilDiv(psf.y, 2) ||
      plan.halo.x < ceilDiv(psf.x, 2))
    throw InvalidArgument("blocked deconvolution: the halo must be at least half the PSF (" +
                          std::to_string(ceilDiv(psf.z, 2)) + " x " +
                          std::to_string(ceilDiv(psf.y, 2)) + " x " +
                          std::to_string(ceilDiv(psf.x, 2)) + ")");
  const bool periodic = p.boundary == Boundary::Periodic;
  const bool exact = p.boundary == Boundary::ReflectExact;
  const int64_t n[3] = {volume.z, volume.y, volume.x}, k[3] = {psf.z, psf.y, psf.x},
                h[3] = {plan.halo.z, plan.halo.y, plan.halo.x},
                most[3] = {maxInterior.z, maxInterior.y, maxInterior.x};
  // The cuts worth trying on each axis: from the fewest pieces maxInterior allows, 64 more.
  std::vector<AxisCut> options[3];
  for (int a = 0; a < 3; ++a) {
    const int64_t first = most[a] > 0 ? ceilDiv(n[a], most[a]) : 1;
    for (int64_t c = first; c <= std::min(n[a], first + 63); ++c)
      options[a].push_back(exact ? exactAxisCut(n[a], h[a], c, costs)
                                 : axisCut(n[a], k[a], h[a], c, periodic, costs));
  }
  // One block is the unblocked run: its frame (compute/rl_frame.h), whichever kind that is.
  const bool padded = !periodic && !exact;
  const Shape unblockedFrame =
      rlFrame({n[0] + (padded ? k[0] / 2 * 2 : 0), n[1] + (padded ? k[1] / 2 * 2 : 0),
               n[2] + (padded ? k[2] / 2 * 2 : 0)},
              {padded, padded, padded});
  double best = std::numeric_limits<double>::infinity();
  size_t smallestBytes = std::numeric_limits<size_t>::max();
  AxisCut chosen[3];
  for (const AxisCut& cz : options[0])
    for (const AxisCut& cy : options[1])
      for (const AxisCut& cx : options[2])
        for (bool fast : {false, true}) {
          const bool one = cz.count == 1 && cy.count == 1 && cx.count == 1;
          if (one && fast) continue;
          const Shape f = one    ? unblockedFrame
                          : fast ? Shape{cz.fastFrame, cy.fastFrame, cx.fastFrame}
                                 : Shape{cz.smoothFrame, cy.smoothFrame, cx.smoothFrame};
          if (f.z == 0 || f.y == 0 || f.x == 0) continue;  // no reflect-exact frame of this cut
          if (fast && !costs.fast(f)) continue;
          const size_t bytes = costs.bytes(f);
          smallestBytes = std::min(smallestBytes, bytes);
          if (bytes > budgetBytes) continue;
          const int64_t blocks = cz.count * cy.count * cx.count;
          // The least compute, in rounds of `devices` blocks at once; between equals, fewer blocks.
          const int64_t rounds = (blocks + devices - 1) / devices;
          const double cost = double(rounds) * costs.secondsPerIteration(f) * (1 + 1e-9 * blocks);
          if (cost < best) {
            best = cost;
            chosen[0] = cz;
            chosen[1] = cy;
            chosen[2] = cx;
            plan.frame = f;
            plan.fastFrame = costs.fast(f);
            plan.bytesPerBlock = bytes;
          }
        }
  if (!std::isfinite(best))
    throw InvalidArgument("blocked deconvolution: a memory budget of " +
                          std::to_string(budgetBytes >> 20) +
                          " MiB cannot hold one block (the smallest, with its halo and the PSF, "
                          "needs " +
                          std::to_string(smallestBytes >> 20) + " MiB)");
  plan.counts = {chosen[0].count, chosen[1].count, chosen[2].count};
  plan.interior = {chosen[0].interior, chosen[1].interior, chosen[2].interior};
  plan.devices = devices;
  plan.secondsPerIteration =
      double((plan.count() + devices - 1) / devices) * costs.secondsPerIteration(plan.frame);
  const int64_t frame[3] = {plan.frame.z, plan.frame.y, plan.frame.x};
  // The frame starts lo before its interior. Between blocks, whatever the frame's length leaves
  // beyond interior + halo is shared by both sides: a wider halo is free accuracy.
  auto span = [&](int a, int64_t start, int64_t end) {
    const AxisCut& c = chosen[a];
    if (exact) {  // inside the volume; the blocks at its faces start there (exactAxisCut)
      const int64_t s = start == 0    ? 0
                        : end == n[a] ? n[a] - frame[a]
                                      : std::clamp(start - (frame[a] - (end - start)) / 2,
                                                   int64_t(0), n[a] - frame[a]);
      return std::pair<int64_t, int64_t>{s, s + frame[a]};
    }
    const int64_t lo = c.count == 1 ? c.lo : c.lo + (frame[a] - c.interior - 2 * c.lo) / 2;
    const int64_t s = start - lo;
    return std::pair<int64_t, int64_t>{s, s + frame[a]};
  };
  for (const auto& [z0, z1] : cuts(volume.z, plan.counts.z))
    for (const auto& [y0, y1] : cuts(volume.y, plan.counts.y))
      for (const auto& [x0, x1] : cuts(volume.x, plan.counts.x)) {
        Block b;
        b.interior = {z0, z1, y0, y1, x0, x1};
        const auto [fz0, fz1] = span(0, z0, z1);
        const auto [fy0, fy1] = span(1, y0, y1);
        const auto [fx0, fx1] = span(2, x0, x1);
        b.frame = {fz0, fz1, fy0, fy1, fx0, fx1};
        plan.blocks.push_back(b);
      }
  return plan;
}

void planSlabs(BlockPlan& plan, size_t hostBudget, bool wholeSlices) {
  const Shape f = plan.frame, in = plan.interior, v = plan.volume;
  auto staging = [&](int64_t slices) {
    return 2 * size_t(slices) * size_t(f.y * f.x + in.y * in.x) * sizeof(float);
  };
  auto need = [&](int64_t slices) {
    const size_t reading = wholeSlices ? size_t(slices) * size_t(v.y * v.x) * sizeof(float)
                                       : size_t(f.y * v.x) * sizeof(float);
    return staging(slices) + reading;
  };
  // Up to 64 slices, and staging of at most kMostStaging: a slab of a 2048² frame then still
  // has 24 slices for the reader threads, and the run's host memory stays small.
  constexpr size_t kMostStaging = size_t(3) << 29;  // 1.5 GiB
  int64_t slices = std::min<int64_t>(f.z, 64);
  while (slices > 1 && (need(slices) > hostBudget || staging(slices) > kMostStaging)) --slices;
  if (need(slices) > hostBudget)
    throw InvalidArgument("blocked deconvolution: " + std::to_string(hostBudget >> 20) +
                          " MiB of host memory cannot hold one slice of a frame in and out (" +
                          std::to_string(need(1) >> 20) + " MiB)");
  plan.slabSlices = slices;
  plan.hostBytes = need(slices);
}

}  // namespace stacklens::compute
