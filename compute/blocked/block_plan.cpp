// planBlocks: frames from the PSF and the backend's fast FFT lengths, block counts from the
// memory budget and the expected compute; planSlabs: host memory for filling and emptying them.
#include "compute/blocked/block_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "compute/params_text.h"
#include "compute/rl_frame.h"

namespace stacklens::compute {
namespace {

std::string shapeText(Shape s) {
  return std::to_string(s.z) + " x " + std::to_string(s.y) + " x " + std::to_string(s.x);
}

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

// The lengths a frame axis may take: smooth (frameLength) or the fast path's (powers of two and
// the mixed lengths of compute/rl_frame.h).
int64_t nextLength(int64_t need, bool fast, const FrameCosts& costs) {
  if (!fast) return frameLength(need, costs);
  const int64_t mixed = nextFastFrameLength(need);
  return std::min(nextPowerOfTwo(need), mixed > 0 ? mixed : std::numeric_limits<int64_t>::max());
}
// The longest such length below `below`, or 0.
int64_t previousLength(int64_t below, bool fast, const FrameCosts& costs) {
  for (int64_t m = below - 1; m >= 1; --m)
    if (nextLength(m, fast, costs) == m) return m;
  return 0;
}

// One axis cut into pieces, for frames of one kind of length: piece i's interior is
// [bounds[i], bounds[i + 1]) and its frame [starts[i], starts[i] + lengths[i]). Empty: no frame.
struct AxisPieces {
  std::vector<int64_t> bounds, starts, lengths;
  bool empty() const { return lengths.empty(); }
  int64_t totalLength() const {
    int64_t sum = 0;
    for (int64_t l : lengths) sum += l;
    return sum;
  }
  int64_t longestInterior() const {
    int64_t most = 0;
    for (size_t i = 0; i + 1 < bounds.size(); ++i) most = std::max(most, bounds[i + 1] - bounds[i]);
    return most;
  }
};

// One axis cut into `count` pieces, with frames of smooth lengths and of fast lengths.
struct AxisCut {
  int64_t count = 1;
  AxisPieces smooth, fast;
  const AxisPieces& pieces(bool f) const { return f ? fast : smooth; }
};

// Boundary::ReflectExact: a frame never reaches past the volume, since each block's own faces are
// reflected exactly; one piece is the whole axis, and with more the blocks at the volume's faces
// start there. Those frames need interior + halo, the ones between interior + 2 halos. Frames may
// differ in length: starting from the shortest length every piece can take, pieces step down to
// the next shorter length while the frames still cover the axis, so that 950 voxels with halos of
// 64 take frames of 576 and 512 instead of two of 576.
AxisPieces exactPieces(int64_t n, int64_t halo, int64_t count, int64_t most, bool fast,
                       const FrameCosts& costs) {
  AxisPieces p;
  if (count == 1) {
    if (fast && nextLength(n, true, costs) != n) return p;
    p.bounds = {0, n};
    p.starts = {0};
    p.lengths = {n};
    return p;
  }
  auto halos = [&](int64_t i) { return i == 0 || i == count - 1 ? halo : 2 * halo; };
  const int64_t need = ceilDiv(n, count) + (count == 2 ? halo : 2 * halo);
  if (need > n) return p;
  const int64_t uniform =
      fast ? nextLength(need, true, costs) : std::min(nextLength(need, false, costs), n);
  if (uniform > n) return p;
  p.lengths.assign(size_t(count), uniform);
  // What piece i's frame leaves for its interior (no more than `most` when that is set); the
  // interiors must add up to at least n.
  auto capacity = [&](int64_t i) {
    const int64_t v = p.lengths[size_t(i)] - halos(i);
    return most > 0 ? std::min(v, most) : v;
  };
  auto room = [&] {
    int64_t sum = 0;
    for (int64_t i = 0; i < count; ++i) sum += capacity(i);
    return sum - n;
  };
  if (room() < 0) return AxisPieces{};
  // The last pieces step down first: the longest frames come first, so the device's memory pool,
  // grown for the first block, holds every later one.
  for (int64_t i = count - 1; i >= 0; --i) {
    const int64_t kept = p.lengths[size_t(i)];
    const int64_t shorter = previousLength(kept, fast, costs);
    if (shorter <= halos(i)) continue;
    p.lengths[size_t(i)] = shorter;
    if (room() < 0) p.lengths[size_t(i)] = kept;
  }
  // What the frames hold beyond n is taken from the interiors evenly, none below one voxel: every
  // halo grows a little. (Every interior has a voxel or more and they add up to n + spare, so with
  // count ≤ n there is always a voxel to take.)
  std::vector<int64_t> interiors;
  int64_t spare = -n;
  for (int64_t i = 0; i < count; ++i) {
    interiors.push_back(capacity(i));
    spare += interiors.back();
  }
  while (spare > 0) {
    const int64_t able =
        std::count_if(interiors.begin(), interiors.end(), [](int64_t v) { return v > 1; });
    const int64_t each = std::max<int64_t>(1, spare / able);
    for (int64_t& v : interiors) {
      const int64_t take = std::min({each, v - 1, spare});
      v -= take;
      spare -= take;
    }
  }
  p.bounds = {0};
  for (int64_t v : interiors) p.bounds.push_back(p.bounds.back() + v);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t b0 = p.bounds[size_t(i)], b1 = p.bounds[size_t(i + 1)],
                  length = p.lengths[size_t(i)];
    if (b1 <= b0) return AxisPieces{};
    p.starts.push_back(i == 0 ? 0
                       : i == count - 1
                           ? n - length
                           : std::clamp(b0 - (length - (b1 - b0)) / 2, int64_t(0), n - length));
  }
  return p;
}

AxisCut exactAxisCut(int64_t n, int64_t halo, int64_t count, int64_t most,
                     const FrameCosts& costs) {
  AxisCut c;
  c.count = count;
  c.smooth = exactPieces(n, halo, count, most, false, costs);
  c.fast = exactPieces(n, halo, count, most, true, costs);
  return c;
}

// Frames of one length around even interiors. One piece is the unblocked run's frame (half the
// PSF of padding before, the rest after; its length is rlFrame's, given by the planner); more
// have the halo on both sides, and what the frame's length leaves beyond interior + halo is
// shared by both sides: a wider halo is free accuracy.
AxisPieces evenPieces(int64_t n, int64_t psf, int64_t halo, int64_t count, int64_t length,
                      bool wraps) {
  AxisPieces p;
  const int64_t interior = ceilDiv(n, count);
  const int64_t lo = count == 1 ? (wraps ? 0 : psf / 2) : halo + (length - interior - 2 * halo) / 2;
  for (int64_t i = 0; i <= count; ++i) p.bounds.push_back(n * i / count);
  for (int64_t i = 0; i < count; ++i) {
    p.starts.push_back(p.bounds[size_t(i)] - lo);
    p.lengths.push_back(length);
  }
  return p;
}

AxisCut axisCut(int64_t n, int64_t psf, int64_t halo, int64_t count, bool periodic,
                const FrameCosts& costs) {
  AxisCut c;
  c.count = count;
  if (count == 1 && periodic) {  // the whole axis wraps onto itself: no padding
    c.smooth = c.fast = evenPieces(n, psf, halo, 1, n, true);
    return c;
  }
  const int64_t need = count == 1 ? n + 2 * (psf / 2) : ceilDiv(n, count) + 2 * halo;
  c.smooth = evenPieces(n, psf, halo, count, nextLength(need, false, costs), false);
  c.fast = evenPieces(n, psf, halo, count, nextLength(need, true, costs), false);
  return c;
}

// The frames of one cut of the volume and what they cost.
struct FrameSet {
  bool valid = true;  // every frame is of the kind asked for (fast: the fast path takes it)
  bool fits = true;   // every block fits the budget
  int64_t blocks = 0;
  Shape largest;       // the longest frame on each axis
  bool fast = true;    // the fast path takes every frame
  size_t bytes = 0;    // the most one block needs
  double seconds = 0;  // expected compute per iteration on all the devices
};

// Expected compute per iteration when `devices` workers take the blocks in order, each the next
// block when it is free; equal blocks run in rounds.
double scheduledSeconds(const std::vector<double>& blocks, int devices) {
  std::vector<double> busy(size_t(devices), 0.0);
  for (double b : blocks) *std::min_element(busy.begin(), busy.end()) += b;
  return *std::max_element(busy.begin(), busy.end());
}

FrameSet frameSet(const AxisPieces* const pieces[3], const FrameCosts& costs, bool fast,
                  size_t budget, int devices) {
  // Each axis has few distinct lengths: costs go by them.
  std::map<int64_t, int64_t> lengths[3];
  for (int a = 0; a < 3; ++a)
    for (int64_t length : pieces[a]->lengths) ++lengths[a][length];
  FrameSet s;
  s.largest = {lengths[0].rbegin()->first, lengths[1].rbegin()->first, lengths[2].rbegin()->first};
  double total = 0, longest = 0;
  for (const auto& [z, nz] : lengths[0])
    for (const auto& [y, ny] : lengths[1])
      for (const auto& [x, nx] : lengths[2]) {
        const Shape f{z, y, x};
        const bool takesFast = costs.fast(f);
        if (fast && !takesFast) s.valid = false;
        s.fast = s.fast && takesFast;
        s.bytes = std::max(s.bytes, costs.bytes(f));
        s.blocks += nz * ny * nx;
        total += double(nz * ny * nx) * costs.secondsPerIteration(f);
        longest = std::max(longest, costs.secondsPerIteration(f));
      }
  s.fits = s.bytes <= budget;
  const bool equal = lengths[0].size() == 1 && lengths[1].size() == 1 && lengths[2].size() == 1;
  if (equal || devices == 1) {
    s.seconds = equal ? double((s.blocks + devices - 1) / devices) * longest : total;
  } else if (s.blocks > 64 * int64_t(devices)) {
    s.seconds = std::max(total / devices, longest);  // many rounds: nearly even
  } else {
    std::vector<double> blocks;
    for (int64_t z : pieces[0]->lengths)
      for (int64_t y : pieces[1]->lengths)
        for (int64_t x : pieces[2]->lengths) blocks.push_back(costs.secondsPerIteration({z, y, x}));
    s.seconds = scheduledSeconds(blocks, devices);
  }
  return s;
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
  double frames = 0;
  for (const Block& b : blocks) frames += double(b.frame.shape().count());
  return frames /
         (unblocked(volume.z, psf.z) * unblocked(volume.y, psf.y) * unblocked(volume.x, psf.x));
}

std::string BlockPlan::frames() const {
  std::map<std::tuple<int64_t, int64_t, int64_t>, int> shapes;
  for (const Block& b : blocks) {
    const Shape s = b.frame.shape();
    ++shapes[{s.z, s.y, s.x}];
  }
  if (shapes.size() <= 1) return "frame " + shapeText(frame);
  std::string text = "frames";
  for (const auto& [s, count] : shapes)
    text += (text == "frames" ? " " : ", ") +
            shapeText({std::get<0>(s), std::get<1>(s), std::get<2>(s)}) + " (" +
            std::to_string(count) + ")";
  return text;
}

std::string BlockPlan::describe(int iterations) const {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(2);
  o << "volume " << volume.z << " x " << volume.y << " x " << volume.x << ", PSF " << psf.z << " x "
    << psf.y << " x " << psf.x << ", halo " << halo.z << " x " << halo.y << " x " << halo.x
    << ", boundary " << boundaryName(boundary) << "\n"
    << "blocks " << count() << " (" << counts.z << " x " << counts.y << " x " << counts.x
    << "), interior up to " << interior.z << " x " << interior.y << " x " << interior.x << ", "
    << frames() << (fastFrame ? " (fast transforms)" : "") << "\n"
    << "memory per block about " << (bytesPerBlock >> 20) << " MiB";
  if (scheme == BlockScheme::Exchange)
    o << ", whole-domain arrays about " << (domainBytes >> 20) << " MiB";
  o << " of a budget of " << (budget >> 20) << " MiB\n";
  if (slabSlices > 0)
    o << "host memory for filling and emptying frames about " << (hostBytes >> 20) << " MiB ("
      << slabSlices << " slices at a time)\n";
  o << "work " << work() << " x the unblocked run's frame\n";
  if (scheme == BlockScheme::Exchange)
    o << "scheme: the blocks exchange halos every iteration (whole-domain arrays in host memory): "
         "the result is the unblocked run's, up to float rounding\n";
  else if (scheme == BlockScheme::Resident)
    o << "scheme: every block's frame stays on the device and the blocks exchange halos there "
         "every iteration: the result is the unblocked run's, up to float rounding\n";
  else if (count() > 1)
    o << "scheme: overlapping blocks, each iterating on its own: near the seams the result may "
         "differ from an unblocked run's\n";
  if (exchangeBudget > 0)
    o << "(blocks that exchange halos every iteration, whose result is the unblocked run's, need "
         "a budget of more than "
      << (exchangeBudget >> 20) << " MiB for their whole-domain arrays)\n";
  o.precision(1);
  o << "expected compute about " << secondsPerIteration * iterations << " s (" << iterations
    << " iterations";
  if (devices > 1) o << ", " << devices << " devices at once";
  o << ")\n";
  return o.str();
}

std::string BlockPlan::provenance() const {
  if (count() <= 1) return "";
  const std::string blocks = "blocks=" + std::to_string(count());
  if (scheme == BlockScheme::Exchange || scheme == BlockScheme::Resident)
    return blocks + " exchanging halos";
  return blocks + " overlapping halo=" + std::to_string(halo.z) + "," + std::to_string(halo.y) +
         "," + std::to_string(halo.x) + " (seams may differ from an unblocked run)";
}

BlockPlan planBlocks(Shape volume, Shape psf, const DeconvolveParams& p, const FrameCosts& costs,
                     size_t budgetBytes, Shape halo, Shape maxInterior, int devices,
                     bool oneBlock) {
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
    const int64_t first = oneBlock ? 1 : most[a] > 0 ? ceilDiv(n[a], most[a]) : 1;
    const int64_t last = oneBlock ? 1 : std::min(n[a], first + 63);
    for (int64_t c = first; c <= last; ++c)
      options[a].push_back(exact ? exactAxisCut(n[a], h[a], c, most[a], costs)
                                 : axisCut(n[a], k[a], h[a], c, periodic, costs));
  }
  // One block is the unblocked run: its frame (compute/rl_frame.h), whichever kind that is.
  const bool padded = !periodic && !exact;
  const Shape unblockedFrame =
      rlFrame({n[0] + (padded ? k[0] / 2 * 2 : 0), n[1] + (padded ? k[1] / 2 * 2 : 0),
               n[2] + (padded ? k[2] / 2 * 2 : 0)},
              {padded, padded, padded});
  // One block: every axis is one piece of the unblocked run's frame.
  AxisCut whole[3];
  for (int a = 0; a < 3; ++a) {
    const int64_t length = a == 0 ? unblockedFrame.z : a == 1 ? unblockedFrame.y : unblockedFrame.x;
    whole[a].smooth = evenPieces(n[a], k[a], h[a], 1, length, !padded);
  }
  double best = std::numeric_limits<double>::infinity();
  size_t smallestBytes = std::numeric_limits<size_t>::max();
  const AxisPieces* chosen[3] = {};
  for (const AxisCut& oz : options[0])
    for (const AxisCut& oy : options[1])
      for (const AxisCut& ox : options[2])
        for (bool fast : {false, true}) {
          const bool one = oz.count == 1 && oy.count == 1 && ox.count == 1;
          if (one && fast) continue;
          const AxisPieces* pieces[3] = {&(one ? whole[0] : oz).pieces(fast),
                                         &(one ? whole[1] : oy).pieces(fast),
                                         &(one ? whole[2] : ox).pieces(fast)};
          if (pieces[0]->empty() || pieces[1]->empty() || pieces[2]->empty())
            continue;  // no reflect-exact frame of this cut
          // Cuts whose frames hold too many voxels to win at the cheapest rate are not costed:
          // the planner weighs up to half a million cuts.
          const double leastSeconds =
              double(pieces[0]->totalLength()) * double(pieces[1]->totalLength()) *
              double(pieces[2]->totalLength()) * costs.leastSecondsPerVoxel() / devices;
          if (leastSeconds > best) continue;
          const FrameSet frames = frameSet(pieces, costs, fast, budgetBytes, devices);
          if (!frames.valid) continue;
          smallestBytes = std::min(smallestBytes, frames.bytes);
          if (!frames.fits) continue;
          // The least compute; between equals, fewer blocks.
          const double cost = frames.seconds * (1 + 1e-9 * double(frames.blocks));
          if (cost < best) {
            best = cost;
            std::copy(pieces, pieces + 3, chosen);
            plan.frame = frames.largest;
            plan.fastFrame = frames.fast;
            plan.bytesPerBlock = frames.bytes;
            plan.secondsPerIteration = frames.seconds;
          }
        }
  if (smallestBytes == std::numeric_limits<size_t>::max())
    throw InvalidArgument(
        "blocked deconvolution: no blocks of these sizes hold their interiors and halos inside "
        "the volume (reflect-exact); allow longer blocks");
  if (!std::isfinite(best))
    throw InvalidArgument("blocked deconvolution: a memory budget of " +
                          std::to_string(budgetBytes >> 20) +
                          " MiB cannot hold one block (the smallest, with its halo and the PSF, "
                          "needs " +
                          std::to_string(smallestBytes >> 20) + " MiB)");
  const AxisPieces &pz = *chosen[0], &py = *chosen[1], &px = *chosen[2];
  plan.counts = {int64_t(pz.lengths.size()), int64_t(py.lengths.size()),
                 int64_t(px.lengths.size())};
  plan.interior = {pz.longestInterior(), py.longestInterior(), px.longestInterior()};
  plan.devices = devices;
  for (size_t i = 0; i < pz.lengths.size(); ++i)
    for (size_t j = 0; j < py.lengths.size(); ++j)
      for (size_t l = 0; l < px.lengths.size(); ++l) {
        Block b;
        b.interior = {pz.bounds[i],     pz.bounds[i + 1], py.bounds[j],
                      py.bounds[j + 1], px.bounds[l],     px.bounds[l + 1]};
        b.frame = {pz.starts[i], pz.starts[i] + pz.lengths[i],
                   py.starts[j], py.starts[j] + py.lengths[j],
                   px.starts[l], px.starts[l] + px.lengths[l]};
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
  // Up to 64 slices, and staging of at most kMostStaging: page-locking it takes the driver about
  // a second per 2–4 GiB, before the first frame can go to its device (on several devices at
  // once, all the more). Reader threads share a slab's slices by row bands, so a few slices keep
  // them busy.
  constexpr size_t kMostStaging = size_t(256) << 20;
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
