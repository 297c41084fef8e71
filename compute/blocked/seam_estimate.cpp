// estimateSeamError: the unblocked and the blocked run of a small synthetic trial, compared near
// the seams.
#include "compute/blocked/seam_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "compute/blocked/blocked_deconvolution.h"
#include "compute/rl_frame.h"

namespace stacklens::compute {
namespace {

int64_t& along(Shape& s, int axis) { return axis == 0 ? s.z : axis == 1 ? s.y : s.x; }
int64_t along(const Shape& s, int axis) { return axis == 0 ? s.z : axis == 1 ? s.y : s.x; }
int64_t start(const Box& b, int axis) { return axis == 0 ? b.z0 : axis == 1 ? b.y0 : b.x0; }

// What the run's frames really hold past an interior face at a seam, per axis: the halo asked
// for and what rounding the frame up to a fast FFT length added (the least over the seams), or
// the halo on axes the plan does not cut.
Shape reachedHalo(const BlockPlan& plan) {
  Shape h = plan.halo;
  for (int a = 0; a < 3; ++a) {
    if (along(plan.counts, a) <= 1) continue;
    int64_t least = -1;
    for (const Block& b : plan.blocks) {
      const int64_t i0 = start(b.interior, a), f0 = start(b.frame, a);
      const int64_t i1 = i0 + along(b.interior.shape(), a), f1 = f0 + along(b.frame.shape(), a);
      if (i0 > 0) least = least < 0 ? i0 - f0 : std::min(least, i0 - f0);
      if (i1 < along(plan.volume, a)) least = least < 0 ? f1 - i1 : std::min(least, f1 - i1);
    }
    if (least >= 0) along(h, a) = std::max(along(h, a), least);
  }
  return h;
}

// A trial volume cut as the plan is: two interiors of at least twice the halo along each axis
// the plan cuts (seams far enough from the faces and from each other), and on the others twice
// the PSF's length, so that the seams lie mostly away from the faces, as in a run's volume.
Shape trialShape(const BlockPlan& plan, Shape halo) {
  Shape trial;
  for (int a = 0; a < 3; ++a) {
    const int64_t n = along(plan.volume, a);
    const int64_t cut = 2 * std::max<int64_t>(2 * along(halo, a), 8);
    const int64_t whole = std::max<int64_t>(2 * along(plan.psf, a), 32);
    along(trial, a) = std::min(n, along(plan.counts, a) > 1 ? cut : whole);
  }
  return trial;
}

// Fixed pseudo-random numbers in [0, 1) (splitmix64): the same scene on every machine.
struct Numbers {
  uint64_t state;
  double next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
};

// Whether voxel (z, y, x) lies within one halo of a seam (an interior's start inside the volume).
class NearSeams {
 public:
  NearSeams(const BlockPlan& trialPlan, Shape halo) {
    for (int a = 0; a < 3; ++a) {
      const int64_t n = along(trialPlan.volume, a), h = std::max<int64_t>(1, along(halo, a));
      near_[a].assign(size_t(n), false);
      for (const Block& b : trialPlan.blocks)
        if (const int64_t s = start(b.interior, a); s > 0) {
          any_ = true;
          for (int64_t i = std::max<int64_t>(0, s - h + 1); i < std::min(n, s + h); ++i)
            near_[a][size_t(i)] = true;
        }
    }
  }
  bool operator()(int64_t z, int64_t y, int64_t x) const {
    return near_[0][size_t(z)] || near_[1][size_t(y)] || near_[2][size_t(x)];
  }
  bool any() const { return any_; }

 private:
  std::vector<bool> near_[3];  // per axis: the coordinates within a halo of a seam
  bool any_ = false;
};

// Whether a frame covers a whole axis the plan cuts: its blocks would then be the unblocked run.
bool framesSpanTheTrial(const BlockPlan& plan) {
  for (const Block& b : plan.blocks)
    for (int a = 0; a < 3; ++a)
      if (along(plan.counts, a) > 1 && start(b.frame, a) <= 0 &&
          start(b.frame, a) + along(b.frame.shape(), a) >= along(plan.volume, a))
        return true;
  return false;
}

// The unblocked run's frame (compute/rl_frame.h).
Shape unblockedFrame(Shape volume, Shape psf, const DeconvolveParams& p) {
  const bool padded = p.boundary == Boundary::Reflect || p.boundary == Boundary::Zero;
  const int64_t k = padded ? 1 : 0;
  return rlFrame({volume.z + k * (psf.z / 2 * 2), volume.y + k * (psf.y / 2 * 2),
                  volume.x + k * (psf.x / 2 * 2)},
                 {padded, padded, padded});
}

}  // namespace

std::string SeamEstimate::describe() const {
  if (!estimated) return "seam error not estimated: " + reason;
  char text[256];
  std::snprintf(text, sizeof text,
                "expected seam error %.1e relative L2 (at most %.1e of the peak) within a halo of "
                "the seams: a synthetic trial of %lld x %lld x %lld with this PSF, halo and "
                "iterations",
                relativeL2, maxRelative, static_cast<long long>(trial.z),
                static_cast<long long>(trial.y), static_cast<long long>(trial.x));
  return text;
}

std::string SeamEstimate::provenance() const {
  if (!estimated) return "seam error not estimated (" + reason + ")";
  char text[128];
  std::snprintf(text, sizeof text,
                "expected seam error %.1e relative L2 near the seams (synthetic trial)",
                relativeL2);
  return text;
}

Image seamTrialScene(Shape volume, const Image& psf) {
  const Shape k = psf.shape();
  double sum = 0;
  for (int64_t i = 0; i < k.count(); ++i) sum += psf.data()[i];
  if (!(sum > 0)) throw InvalidArgument("seam estimate: the PSF does not sum to more than 0");
  Image scene = Image::host(volume);
  for (int64_t i = 0; i < volume.count(); ++i) scene.data()[i] = 10.0f;
  // About one source per 20000 voxels, fewer for a large PSF (each adds a whole PSF).
  const int64_t sources = std::clamp<int64_t>(
      std::min<int64_t>(volume.count() / 20000, int64_t(200'000'000) / k.count()), 4, 256);
  Numbers numbers{0x5EA3'5EA3ull + static_cast<uint64_t>(volume.count())};
  for (int64_t s = 0; s < sources; ++s) {
    const int64_t sz = static_cast<int64_t>(numbers.next() * volume.z);
    const int64_t sy = static_cast<int64_t>(numbers.next() * volume.y);
    const int64_t sx = static_cast<int64_t>(numbers.next() * volume.x);
    const float flux = static_cast<float>((1000 + 9000 * numbers.next()) / sum);
    for (int64_t z = std::max<int64_t>(0, sz - k.z / 2); z < std::min(volume.z, sz - k.z / 2 + k.z);
         ++z)
      for (int64_t y = std::max<int64_t>(0, sy - k.y / 2);
           y < std::min(volume.y, sy - k.y / 2 + k.y); ++y)
        for (int64_t x = std::max<int64_t>(0, sx - k.x / 2);
             x < std::min(volume.x, sx - k.x / 2 + k.x); ++x)
          scene.at(z, y, x) += flux * psf.at(z - sz + k.z / 2, y - sy + k.y / 2, x - sx + k.x / 2);
  }
  return scene;
}

SeamEstimate estimateSeamError(Backend& backend, const BlockPlan& plan, const Image& psf,
                               const DeconvolveParams& p, double maxSeconds, const Job& job) {
  SeamEstimate e;
  if (plan.count() <= 1 || plan.scheme != BlockScheme::Overlap) {
    e.reason = "the run is not cut into overlapping blocks";
    return e;
  }
  // The trial's frames hold what the run's do past each seam and no more: planned on the CPU's
  // lengths (any smooth length) with the run's reached halo, so that a fast length the trial's
  // small volume happened to allow cannot let its frames see more than the run's.
  const Shape halo = reachedHalo(plan);
  e.trial = trialShape(plan, halo);
  Shape maxInterior{0, 0, 0};
  for (int a = 0; a < 3; ++a)
    if (along(plan.counts, a) > 1) along(maxInterior, a) = along(e.trial, a) / 2;
  BlockPlan trialPlan =
      planBlocks(e.trial, plan.psf, p, frameCosts("cpu", p), size_t(1) << 50, halo, maxInterior);
  const NearSeams nearSeams(trialPlan, plan.halo);
  if (trialPlan.count() <= 1 || !nearSeams.any() || framesSpanTheTrial(trialPlan)) {
    e.reason = "the trial volume could not be cut as the run is";
    return e;
  }
  // The blocks and the unblocked run, at this backend's rates.
  const FrameCosts costs = frameCosts(backend.name(), p);
  double perIteration = costs.secondsPerIteration(unblockedFrame(e.trial, plan.psf, p));
  for (const Block& b : trialPlan.blocks)
    perIteration += costs.secondsPerIteration(b.frame.shape());
  const double seconds = perIteration * p.iterations;
  if (seconds > maxSeconds) {
    char text[128];
    std::snprintf(text, sizeof text, "the trial would take about %.0f s", seconds);
    e.reason = text;
    return e;
  }
  planSlabs(trialPlan, size_t(1) << 40, true);
  const Image scene = seamTrialScene(e.trial, psf);
  const Image whole = backend.download(backend.richardsonLucy(scene, psf, p, job));
  const Image blocked = deconvolveBlocked(backend, scene, psf, p, trialPlan, job);
  for (const Image* result : {&whole, &blocked})
    for (int64_t i = 0; i < e.trial.count(); ++i)
      if (!std::isfinite(result->data()[i])) {
        e.reason = std::string("the trial's ") + (result == &whole ? "unblocked" : "blocked") +
                   " run gave values that are not finite";
        return e;
      }
  double difference = 0, norm = 0, largest = 0, peak = 0;
  for (int64_t z = 0; z < e.trial.z; ++z)
    for (int64_t y = 0; y < e.trial.y; ++y)
      for (int64_t x = 0; x < e.trial.x; ++x) {
        if (!nearSeams(z, y, x)) continue;
        const double w = whole.at(z, y, x), d = blocked.at(z, y, x) - w;
        difference += d * d;
        norm += w * w;
        largest = std::max(largest, std::abs(d));
        peak = std::max(peak, std::abs(w));
      }
  e.relativeL2 = norm > 0 ? std::sqrt(difference / norm) : 0;
  e.maxRelative = peak > 0 ? largest / peak : 0;
  e.estimated = true;
  return e;
}

}  // namespace stacklens::compute
