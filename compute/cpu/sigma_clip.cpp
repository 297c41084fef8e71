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
// interval), so the data are never copied or compacted. Each iteration makes one vectorised
// parallel pass over the data that counts and sums (double accumulators, shifted by the last
// median against cancellation) the values inside the interval, and counts those below a narrow
// window [wlo, whi] whose values were gathered once. Since the intervals nest, the gathered
// values only need filtering by the new interval; the median ranks almost always fall inside
// the window, and nth_element runs on those few values only. The first window comes from a
// strided sample (inputs of 2^20 values or more). When the ranks miss the window (and for small
// inputs' first call) a histogram pass finds the bin(s) holding the median ranks, a gather pass
// collects them, and a new window is gathered around the new median: still O(n), never a sort.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "compute/cpu/operations.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STACKLENS_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STACKLENS_CLONES
#endif

namespace stacklens::compute::cpu::clip_kernels {

struct RangeMoments {
  double sum = 0, sumSq = 0;  // of (x − shift) over the values in [lo, hi]
  int64_t n = 0;
  int64_t below = 0;  // values in [lo, windowLo)
  float min = 0, max = 0;
};

// One vectorised pass (omp simd reductions: -fopenmp-simd, no OpenMP runtime) over n values:
// moments of those in [lo, hi] (false for NaN; ±Inf lie outside finite bounds) and the count of
// those in [lo, windowLo). The per-value deviation is taken in float: exact when x and the shift
// are within a factor 2 (Sterbenz), else off by half an ulp of a value far from the centre.
STACKLENS_CLONES RangeMoments rangeMoments(const float* __restrict p, int64_t n, float lo, float hi,
                                           float shift, float windowLo) {
  double s1 = 0, s2 = 0;
  int64_t count = 0, below = 0;
  float mn = std::numeric_limits<float>::infinity(), mx = -mn;
#pragma omp simd reduction(+ : s1, s2, count, below) reduction(min : mn) reduction(max : mx)
  for (int64_t i = 0; i < n; ++i) {
    const float v = p[i];
    const bool in = (v >= lo) & (v <= hi);
    const float d = in ? v - shift : 0.f;
    s1 += d;
    s2 += static_cast<double>(d) * d;
    count += in;
    below += in & (v < windowLo);
    mn = std::min(mn, in ? v : mn);
    mx = std::max(mx, in ? v : mx);
  }
  return {s1, s2, count, below, mn, mx};
}

// Appends the values in [a, b] to out (room for n values), branch-free; returns how many.
int64_t gatherRange(const float* __restrict p, int64_t n, float a, float b, float* __restrict out) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[k] = p[i];
    k += (p[i] >= a) & (p[i] <= b);
  }
  return k;
}

}  // namespace stacklens::compute::cpu::clip_kernels

namespace stacklens::compute::cpu {
namespace {

constexpr int kBins = 16384;
constexpr int64_t kBlock = 1 << 16;             // elements per parallel work item
constexpr int64_t kSampledWindowMin = 1 << 20;  // inputs this large start from a sampled window

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
    slots_ = std::min<int64_t>(blocks_, pool_.size() * 4);
    moments_.resize(slots_);
    below_.resize(slots_);
    parts_.resize(slots_);
    scratch_.assign(slots_, std::vector<float>(static_cast<size_t>(std::min(kBlock, n_))));
  }

  // Count, moments and median of the finite values in [lo, hi]. Successive calls must pass
  // nested intervals (each inside the previous one), as the clipping loop does: the values kept
  // from the window of an earlier call stay valid once filtered by the new interval.
  SetStats stats(float lo, float hi, double shift) {
    SetStats s;
    if (!haveWindow_ && n_ >= kSampledWindowMin) sampleWindow(lo, hi);
    const float a = haveWindow_ ? std::max(lo, windowLo_) : lo;
    parallelSlots([&](int64_t slot, int64_t b0, int64_t b1) {
      Moments& m = moments_[slot];
      m = Moments{};
      below_[slot] = 0;
      for (int64_t block = b0; block < b1; ++block) {
        const float* p = data_ + block * kBlock;
        const int64_t e = std::min(kBlock, n_ - block * kBlock);
        const auto r = clip_kernels::rangeMoments(p, e, lo, hi, static_cast<float>(shift), a);
        m.n += r.n;
        m.sum += r.sum;
        m.sumSq += r.sumSq;
        below_[slot] += r.below;
        if (r.n > 0) {
          m.min = std::min(m.min, r.min);
          m.max = std::max(m.max, r.max);
        }
      }
    });
    int64_t below = 0;
    for (int64_t slot = 0; slot < slots_; ++slot) {
      const Moments& m = moments_[slot];
      s.m.n += m.n;
      s.m.sum += m.sum;
      s.m.sumSq += m.sumSq;
      s.m.min = std::min(s.m.min, m.min);
      s.m.max = std::max(s.m.max, m.max);
      below += below_[slot];
    }
    if (s.m.n == 0) return s;
    if (s.m.min == s.m.max) {
      s.median = s.m.min;
      return s;
    }
    const int64_t k0 = (s.m.n - 1) / 2, k1 = s.m.n / 2;  // the middle ranks (equal if odd)
    if (haveWindow_) {
      // The window's values still in the set; `below` counted those in [lo, window).
      window_.erase(std::remove_if(window_.begin(), window_.end(),
                                   [lo, hi](float v) { return !(v >= lo && v <= hi); }),
                    window_.end());
      const int64_t inside = static_cast<int64_t>(window_.size());
      if (below <= k0 && k1 < below + inside) {
        s.median = selectMiddle(window_, k0 - below, k1 - below);
        return s;
      }
    }
    s.median = histogramMedian(std::max(lo, s.m.min), std::min(hi, s.m.max), k0, k1);
    // Gather a new window around this median for the next calls: ±0.3 % of the current σ
    // (a few per cent of near-Gaussian data), which the later medians rarely leave.
    const double n = static_cast<double>(s.m.n), mean = s.m.sum / n;
    const double sigma = std::sqrt(std::max(0.0, s.m.sumSq / n - mean * mean));
    const double reach = std::max(0.003 * sigma, 1e-30);
    const double fmax = std::numeric_limits<float>::max();
    windowLo_ = static_cast<float>(std::clamp(s.median - reach, -fmax, fmax));
    windowHi_ = static_cast<float>(std::clamp(s.median + reach, -fmax, fmax));
    gatherWindow(lo, hi);
    return s;
  }

 private:
  template <class Body>
  void parallelSlots(const Body& body) {
    // Slot s owns blocks [s·blocks/slots, (s+1)·blocks/slots): results per slot, no locking.
    const int64_t slots = slots_, blocks = blocks_;
    pool_.parallelFor(slots, [&body, slots, blocks](int64_t s0, int64_t s1) {
      for (int64_t s = s0; s < s1; ++s) body(s, s * blocks / slots, (s + 1) * blocks / slots);
    });
  }

  // A first window for large inputs, from a strided sample of the set (about 65536 values):
  // between the sample's 48 % and 52 % quantiles, which hold the median with a margin of
  // many standard errors (a sample quantile's error is ~0.2 % of rank here), and later medians
  // of the clipping loop usually too. Costs one strided read and one gather pass.
  void sampleWindow(float lo, float hi) {
    const int64_t stride = std::max<int64_t>(1, n_ / 65536);
    std::vector<float>& sample = gathered_;
    sample.clear();
    for (int64_t i = 0; i < n_; i += stride)
      if (data_[i] >= lo && data_[i] <= hi) sample.push_back(data_[i]);
    if (sample.size() < 1000) return;
    const size_t q0 = sample.size() * 48 / 100, q1 = sample.size() * 52 / 100;
    std::nth_element(sample.begin(), sample.begin() + q0, sample.end());
    windowLo_ = sample[q0];
    std::nth_element(sample.begin() + q0, sample.begin() + q1, sample.end());
    windowHi_ = sample[q1];
    gatherWindow(lo, hi);
  }

  // Collects the values of [lo, hi] ∩ [windowLo_, windowHi_] into window_ (one pass).
  void gatherWindow(float lo, float hi) {
    const float a = std::max(lo, windowLo_), b = std::min(hi, windowHi_);
    parallelSlots([&](int64_t slot, int64_t b0, int64_t b1) {
      auto& part = parts_[slot];
      part.clear();
      float* scratch = scratch_[slot].data();
      for (int64_t block = b0; block < b1; ++block) {
        const float* p = data_ + block * kBlock;
        const int64_t e = std::min(kBlock, n_ - block * kBlock);
        const int64_t k = clip_kernels::gatherRange(p, e, a, b, scratch);
        part.insert(part.end(), scratch, scratch + k);
      }
    });
    collectParts(window_);
    haveWindow_ = true;
  }

  void collectParts(std::vector<float>& out) {
    out.clear();
    for (auto& part : parts_) out.insert(out.end(), part.begin(), part.end());
  }

  // The mean of the r0-th and r1-th smallest values (r1 = r0 or r0 + 1); reorders `values`.
  static double selectMiddle(std::vector<float>& values, int64_t r0, int64_t r1) {
    std::nth_element(values.begin(), values.begin() + r0, values.end());
    const double v0 = values[r0];
    if (r1 == r0) return v0;
    return 0.5 * (v0 + *std::min_element(values.begin() + r1, values.end()));
  }

  // The median of the values in [lo, hi] (lo < hi, their min and max) with ranks k0, k1: a
  // histogram pass finds the bins holding the ranks, a gather pass collects those bins.
  double histogramMedian(float lo, float hi, int64_t k0, int64_t k1) {
    Binning bin{lo, static_cast<float>(kBins / (static_cast<double>(hi) - lo))};
    if (!(bin.scale < std::numeric_limits<float>::infinity()))
      bin.scale = std::numeric_limits<float>::max();
    hist_.assign(static_cast<size_t>(slots_) * kBins, 0);
    parallelSlots([&](int64_t slot, int64_t b0, int64_t b1) {
      int64_t* h = hist_.data() + slot * kBins;
      for (int64_t b = b0; b < b1; ++b) {
        const float* p = data_ + b * kBlock;
        const int64_t e = std::min(kBlock, n_ - b * kBlock);
        for (int64_t i = 0; i < e; ++i)
          if (p[i] >= lo && p[i] <= hi) ++h[bin.index(p[i])];
      }
    });
    std::vector<int64_t> counts(kBins, 0);
    for (int64_t slot = 0; slot < slots_; ++slot)
      for (int j = 0; j < kBins; ++j) counts[j] += hist_[slot * kBins + j];
    int64_t before = 0;
    int first = 0;
    while (before + counts[first] <= k0) before += counts[first++];
    int last = first;
    int64_t through = before + counts[first];
    while (through <= k1) through += counts[++last];
    // Usually one bin; two when the middle pair straddles a bin edge.
    parallelSlots([&](int64_t slot, int64_t b0, int64_t b1) {
      auto& out = parts_[slot];
      out.clear();
      for (int64_t b = b0; b < b1; ++b) {
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
    collectParts(gathered_);
    return selectMiddle(gathered_, k0 - before, k1 - before);
  }

  const float* data_;
  int64_t n_, blocks_, slots_;
  ThreadPool& pool_;
  std::vector<Moments> moments_;
  std::vector<int64_t> below_;
  std::vector<std::vector<float>> parts_, scratch_;
  bool haveWindow_ = false;
  float windowLo_ = 0, windowHi_ = 0;
  std::vector<float> window_;  // the set's values in [windowLo_, windowHi_]
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
  SetStats current =
      clipper.stats(-std::numeric_limits<float>::max(), std::numeric_limits<float>::max(), shift);
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
    SetStats next = lo <= hi ? clipper.stats(lo, hi, shift) : SetStats{};
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
