// Sigma-clipped statistics on the CPU with astropy's sigma_clip semantics, O(n) per iteration.
//
// Semantics (the CUDA backend must match them):
//  * Only finite values take part; NaN and ±Inf are ignored (astropy drops them first).
//  * Iteration (astropy SigmaClip._sigmaclip_noaxis, cenfunc="median", stdfunc="std"):
//      med = median(kept), σ = population std(kept) (ddof 0, about the mean),
//      kept ← {x ∈ kept : med − κ_lower·σ ≤ x ≤ med + κ_upper·σ}  (inclusive bounds);
//    repeated while the last step removed something and fewer than maxIterations iterations ran.
//    `iterations` counts as astropy's _niterations does: the final step that removed nothing
//    counts too, so a constant image reports 1 iteration. maxIterations ≤ 0 means no limit
//    (astropy takes maxiters=0 as None too: `maxiters or np.inf`).
//  * The median of an even count is the mean of the two middle values (NumPy).
//  * `all` describes the finite values before clipping, `clipped` the values finally kept;
//    an empty set has n = 0 and NaN statistics.
//
// How: the kept set is always "finite values inside [lo, hi]" (each step intersects the
// interval), so the data are never copied or compacted. Each iteration makes one parallel pass
// that counts, sums (double, shifted by a reference value against cancellation) and builds a
// histogram of the values inside the interval, then one pass that gathers the values of the
// histogram bin holding the median rank, and nth_element on those few values only.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {
namespace {

constexpr int kBins = 16384;
constexpr int64_t kBlock = 1 << 16;  // elements per parallel work item

struct Moments {
  int64_t n = 0;
  double sum = 0, sumSq = 0;  // of (x − shift)
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
};

// Bins [lo, hi] linearly. Only monotonicity matters for correctness (the gather pass uses the
// same function), so float arithmetic is fine.
struct Binning {
  float lo = 0, scale = 0;
  int index(float v) const {
    // v ≥ lo, so t ≥ 0; clamp before converting (float → int overflow is undefined).
    const float t = std::min((v - lo) * scale, static_cast<float>(kBins - 1));
    return static_cast<int>(t);
  }
};

struct SetStats {
  Moments m;
  double median = std::numeric_limits<double>::quiet_NaN();
};

class Clipper {
 public:
  Clipper(const float* data, int64_t n, ThreadPool& pool) : data_(data), n_(n), pool_(pool) {
    blocks_ = (n_ + kBlock - 1) / kBlock;
  }

  // Count, moments and median of the finite values in [lo, hi]. With rangeKnown the histogram
  // spans [lo, hi] and is built in the same pass as the moments; otherwise a first pass finds
  // the set's exact min/max (which bound the histogram) and a second builds it.
  SetStats stats(float lo, float hi, double shift, bool rangeKnown) {
    SetStats s;
    const int64_t slots = std::min<int64_t>(blocks_, pool_.size() * 4);
    std::vector<Moments> moments(slots);
    hist_.assign(static_cast<size_t>(slots) * kBins, 0);
    Binning bin = binning(lo, hi);
    parallelSlots(slots, [&](int64_t slot, int64_t b0, int64_t b1) {
      int64_t* h = rangeKnown ? hist_.data() + slot * kBins : nullptr;
      for (int64_t b = b0; b < b1; ++b) accumulate(b, lo, hi, shift, bin, h, moments[slot]);
    });
    for (const Moments& m : moments) {
      s.m.n += m.n;
      s.m.sum += m.sum;
      s.m.sumSq += m.sumSq;
      s.m.min = std::min(s.m.min, m.min);
      s.m.max = std::max(s.m.max, m.max);
    }
    if (s.m.n == 0) return s;
    if (s.m.min == s.m.max) {
      s.median = s.m.min;
      return s;
    }
    if (!rangeKnown) {
      lo = s.m.min;
      hi = s.m.max;
      bin = binning(lo, hi);
      parallelSlots(slots, [&](int64_t slot, int64_t b0, int64_t b1) {
        int64_t* h = hist_.data() + slot * kBins;
        for (int64_t b = b0; b < b1; ++b) {
          const float* p = data_ + b * kBlock;
          const int64_t e = std::min(kBlock, n_ - b * kBlock);
          for (int64_t i = 0; i < e; ++i)
            if (p[i] >= lo && p[i] <= hi) ++h[bin.index(p[i])];
        }
      });
    }
    std::vector<int64_t> counts(kBins, 0);
    for (int64_t slot = 0; slot < slots; ++slot)
      for (int j = 0; j < kBins; ++j) counts[j] += hist_[slot * kBins + j];
    // Bins holding the two middle ranks k0 ≤ k1 (equal for an odd count), and how many values
    // lie in the bins before them.
    const int64_t k0 = (s.m.n - 1) / 2, k1 = s.m.n / 2;
    int64_t before = 0;
    int first = 0;
    while (before + counts[first] <= k0) before += counts[first++];
    int last = first;
    int64_t through = before + counts[first];
    while (through <= k1) through += counts[++last];
    // Gather the values of bins first..last (usually one bin; two when the middle pair
    // straddles a bin edge) and select within them only.
    std::vector<std::vector<float>> parts(slots);
    parallelSlots(slots, [&](int64_t slot, int64_t c0, int64_t c1) {
      auto& out = parts[slot];
      for (int64_t b = c0; b < c1; ++b) {
        const float* p = data_ + b * kBlock;
        const int64_t e = std::min(kBlock, n_ - b * kBlock);
        for (int64_t i = 0; i < e; ++i) {
          const float v = p[i];
          if (v >= lo && v <= hi) {
            const int k = bin.index(v);
            if (k >= first && k <= last) out.push_back(v);
          }
        }
      }
    });
    gathered_.clear();
    for (auto& part : parts) gathered_.insert(gathered_.end(), part.begin(), part.end());
    const int64_t r0 = k0 - before, r1 = k1 - before;
    std::nth_element(gathered_.begin(), gathered_.begin() + r0, gathered_.end());
    const double v0 = gathered_[r0];
    if (r1 == r0) {
      s.median = v0;
    } else {  // the next rank is the smallest value after the selected one
      const double v1 = *std::min_element(gathered_.begin() + r1, gathered_.end());
      s.median = 0.5 * (v0 + v1);
    }
    return s;
  }

 private:
  template <class Body>
  void parallelSlots(int64_t slots, const Body& body) {
    // Slot s owns blocks [s·blocks/slots, (s+1)·blocks/slots): results per slot, no locking.
    pool_.parallelFor(slots, [&](int64_t s0, int64_t s1) {
      for (int64_t s = s0; s < s1; ++s) body(s, s * blocks_ / slots, (s + 1) * blocks_ / slots);
    });
  }

  static Binning binning(float lo, float hi) {
    Binning bin{lo, static_cast<float>(kBins / (static_cast<double>(hi) - lo))};
    if (!(bin.scale < std::numeric_limits<float>::infinity()))
      bin.scale = std::numeric_limits<float>::max();
    return bin;
  }

  // Moments (and, when hist is given, the histogram) of the values of one block inside [lo, hi].
  void accumulate(int64_t block, float lo, float hi, double shift, const Binning& bin,
                  int64_t* hist, Moments& m) const {
    const float* p = data_ + block * kBlock;
    const int64_t e = std::min(kBlock, n_ - block * kBlock);
    // Branch-free, vectorisable inner loop over 64-element runs; double accumulators.
    int64_t count = 0;
    double sum = 0, sumSq = 0;
    float mn = m.min, mx = m.max;
    const float fshift = static_cast<float>(shift);
    for (int64_t i0 = 0; i0 < e; i0 += 64) {
      const int64_t i1 = std::min<int64_t>(e, i0 + 64);
      double s1 = 0, s2 = 0;
      for (int64_t i = i0; i < i1; ++i) {
        const float v = p[i];
        const bool in = v >= lo && v <= hi;  // false for NaN; ±Inf lie outside finite bounds
        const double d = in ? static_cast<double>(v) - fshift : 0.0;
        s1 += d;
        s2 += d * d;
        count += in;
        mn = in ? std::min(mn, v) : mn;
        mx = in ? std::max(mx, v) : mx;
      }
      sum += s1;
      sumSq += s2;
      if (hist)
        for (int64_t i = i0; i < i1; ++i)
          if (p[i] >= lo && p[i] <= hi) ++hist[bin.index(p[i])];
    }
    m.n += count;
    m.sum += sum;
    m.sumSq += sumSq;
    m.min = mn;
    m.max = mx;
  }

  const float* data_;
  int64_t n_, blocks_;
  ThreadPool& pool_;
  std::vector<int64_t> hist_;
  std::vector<float> gathered_;
};

SummaryStats summarise(const SetStats& s, double shift) {
  SummaryStats out;
  out.n = s.m.n;
  if (s.m.n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out.mean = out.median = out.std = out.min = out.max = nan;
    return out;
  }
  const double n = static_cast<double>(s.m.n);
  const double meanDev = s.m.sum / n;
  out.mean = shift + meanDev;
  out.std = std::sqrt(std::max(0.0, s.m.sumSq / n - meanDev * meanDev));
  out.median = s.median;
  out.min = s.m.min;
  out.max = s.m.max;
  return out;
}

}  // namespace

ClipStats sigmaClip(const Image& in, const ClipParams& p, const Job& job, ThreadPool& pool) {
  if (!(p.kappaLower >= 0) || !(p.kappaUpper >= 0) || !std::isfinite(p.kappaLower) ||
      !std::isfinite(p.kappaUpper))
    throw InvalidArgument("sigma_clip: kappa must be finite and ≥ 0 (got lower " +
                          std::to_string(p.kappaLower) + ", upper " + std::to_string(p.kappaUpper) +
                          ")");
  if (in.empty()) throw InvalidArgument("sigma_clip: the image is empty");
  Clipper clipper(in.data(), in.shape().count(), pool);
  // Moments are accumulated about a shift (first the first finite value, later the last
  // median) so that Σ(x − shift)² suffers no cancellation when the data sit far from zero.
  double shift = 0;
  for (int64_t i = 0; i < in.shape().count(); ++i)
    if (std::isfinite(in.data()[i])) {
      shift = in.data()[i];
      break;
    }
  const float inf = std::numeric_limits<float>::infinity();
  SetStats current = clipper.stats(-std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::max(), shift, false);
  ClipStats out;
  out.all = summarise(current, shift);
  job.checkCancelled();

  float lo = current.m.n > 0 ? current.m.min : 0.f, hi = current.m.n > 0 ? current.m.max : 0.f;
  int iterations = 0;
  const int64_t maxIter = p.maxIterations <= 0 ? std::numeric_limits<int64_t>::max()
                                               : static_cast<int64_t>(p.maxIterations);
  while (iterations < maxIter) {
    ++iterations;
    if (current.m.n == 0) break;  // astropy: NaN bounds keep nothing, nothing changes
    const SummaryStats s = summarise(current, shift);
    // Bounds in double as astropy computes them; a float x is kept when lo ≤ x ≤ hi in double.
    // The tightest float interval with the same membership: round lo up, hi down.
    // Clamped to the float range first (the data are finite floats; an out-of-range cast is UB).
    const double fmax = std::numeric_limits<float>::max();
    const double dlo = std::clamp(s.median - p.kappaLower * s.std, -fmax, fmax);
    const double dhi = std::clamp(s.median + p.kappaUpper * s.std, -fmax, fmax);
    float flo = static_cast<float>(dlo), fhi = static_cast<float>(dhi);
    if (static_cast<double>(flo) < dlo) flo = std::nextafter(flo, inf);
    if (static_cast<double>(fhi) > dhi) fhi = std::nextafter(fhi, -inf);
    lo = std::max(lo, flo);
    hi = std::min(hi, fhi);
    shift = s.median;
    // lo > hi: nothing can be kept (κ < 1 on two values, say).
    SetStats next = lo <= hi ? clipper.stats(lo, hi, shift, true) : SetStats{};
    const bool changed = next.m.n != current.m.n;
    current = next;
    job.report(std::min(1.0, iterations / 10.0));
    job.checkCancelled();
    if (!changed) break;
  }
  out.clipped = summarise(current, shift);
  out.iterations = iterations;
  return out;
}

}  // namespace stacklens::compute::cpu
