// Sigma-clipped statistics on the CPU with astropy's sigma_clip semantics; iterations after the
// first cost O(buckets), not O(n).
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
// interval). The finite values are partitioned once, by a counting sort, into up to 512 buckets
// of consecutive value ranges holding similar counts:
//  * a key per value: the order-preserving bit pattern of the float, clamped to the range of a
//    strided sample (~32 K values; the end keys take whatever lies beyond), less its minimum and
//    shifted right to fit 2^16 keys; monotone in the value, so a key holds a value interval;
//  * pass 1 counts the keys per chunk of the input; runs of consecutive keys become buckets of
//    about n / 512 values; pass 2 scatters the values to their buckets (both passes compute the
//    keys of 512 values at a time in vector registers, and run over the thread pool);
//  * pass 3 gives every bucket its count, min, max and Σ(x − r), Σ(x − r)² about its first
//    value r (double).
// An iteration then adds up the whole buckets inside [lo, hi] (their sums moved to the new
// shift algebraically), scans only the two edge buckets, and selects a median rank with
// nth_element inside the one bucket that holds it (n / 512 values). Only the three passes touch
// all n values: on the 2048² benchmark sky the nine iterations together cost less than one pass.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "compute/cpu/operations.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STACKLENS_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STACKLENS_CLONES
#endif

namespace stacklens::compute::cpu::clip_kernels {

// Order-preserving map of a float to an unsigned integer: x < y ⇔ key(x) < key(y) for non-NaN
// floats. −0 is first turned into +0 (x + 0 does that) so that equal floats share a key, as the
// clipping bounds compare them.
inline uint32_t orderedBits(float x) {
  const uint32_t b = std::bit_cast<uint32_t>(x + 0.0f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

inline bool isFinite(float x) { return (std::bit_cast<uint32_t>(x) & 0x7f800000u) != 0x7f800000u; }

// The bucket key of a float: its ordered bits clamped to [base, base + range], less base, shifted
// right. Monotone in x, so each key holds an interval of values; the clamp sends values beyond
// the range that a sample found to the end keys.
struct KeyMap {
  uint32_t base = 0, range = ~0u;
  int shift = 0;
  uint32_t operator()(float x) const {
    return (std::clamp(orderedBits(x), base, base + range) - base) >> shift;
  }
};

constexpr int kKeyBlock = 512;

// Keys of n ≤ kKeyBlock values (vectorised); non-finite values get `invalid`.
STACKLENS_CLONES void blockKeys(const float* __restrict p, int n, KeyMap key, uint32_t invalid,
                                uint32_t* __restrict out) {
#pragma omp simd
  for (int i = 0; i < n; ++i) out[i] = isFinite(p[i]) ? key(p[i]) : invalid;
}

// Key counts; counts has keys + 1 entries, the last one counting the non-finite values.
void countKeys(const float* __restrict p, int64_t n, KeyMap key, uint32_t keys,
               uint32_t* __restrict counts) {
  uint32_t k[kKeyBlock];
  for (int64_t i = 0; i < n; i += kKeyBlock) {
    const int m = static_cast<int>(std::min<int64_t>(kKeyBlock, n - i));
    blockKeys(p + i, m, key, keys, k);
    for (int j = 0; j < m; ++j) ++counts[k[j]];
  }
}

// Writes each finite value to the next slot of its key's bucket (the offsets advance).
void scatterToBuckets(const float* __restrict p, int64_t n, KeyMap key, uint32_t keys,
                      const uint16_t* __restrict bucketOfKey, int64_t* __restrict offsets,
                      float* __restrict out) {
  uint32_t k[kKeyBlock];
  for (int64_t i = 0; i < n; i += kKeyBlock) {
    const int m = static_cast<int>(std::min<int64_t>(kKeyBlock, n - i));
    blockKeys(p + i, m, key, keys, k);
    for (int j = 0; j < m; ++j)
      if (k[j] != keys) out[offsets[bucketOfKey[k[j]]]++] = p[i + j];
  }
}

struct Part {
  int64_t n = 0;
  double sum = 0, sumSq = 0;  // of (x − ref)
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
};

// Moments about ref of the values in [lo, hi] (all of them for lo = −inf, hi = +inf).
STACKLENS_CLONES Part rangeMoments(const float* __restrict p, int64_t n, float lo, float hi,
                                   double ref) {
  double s1 = 0, s2 = 0;
  int64_t count = 0;
  float mn = std::numeric_limits<float>::infinity(), mx = -mn;
#pragma omp simd reduction(+ : s1, s2, count) reduction(min : mn) reduction(max : mx)
  for (int64_t i = 0; i < n; ++i) {
    const float v = p[i];
    const bool in = (v >= lo) & (v <= hi);
    const double d = in ? static_cast<double>(v) - ref : 0.0;
    s1 += d;
    s2 += d * d;
    count += in;
    mn = std::min(mn, in ? v : mn);
    mx = std::max(mx, in ? v : mx);
  }
  return {count, s1, s2, mn, mx};
}

// Moments about ref, min and max of all n ≥ 1 values (two vectorised loops: one float, one
// double, which GCC vectorises where one mixed loop stays scalar).
STACKLENS_CLONES Part bucketMoments(const float* __restrict p, int64_t n, double ref) {
  float mn = p[0], mx = p[0];
#pragma omp simd reduction(min : mn) reduction(max : mx)
  for (int64_t i = 0; i < n; ++i) {
    mn = std::min(mn, p[i]);
    mx = std::max(mx, p[i]);
  }
  double s1 = 0, s2 = 0;
#pragma omp simd reduction(+ : s1, s2)
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - ref;
    s1 += d;
    s2 += d * d;
  }
  return {n, s1, s2, mn, mx};
}

struct Totals {
  int64_t n = 0;
  double sum = 0, sumSq = 0;
};

// Σ over buckets of count, Σ(x − shift) and Σ(x − shift)², each bucket's sums moved from its
// own reference r: Σ(x − s) = S1 + n·δ, Σ(x − s)² = S2 + 2δ·S1 + n·δ², δ = r − s.
STACKLENS_CLONES Totals combineBuckets(const int64_t* __restrict count,
                                       const double* __restrict ref, const double* __restrict s1,
                                       const double* __restrict s2, int64_t n, double shift) {
  int64_t c = 0;
  double a = 0, b = 0;
#pragma omp simd reduction(+ : c, a, b)
  for (int64_t i = 0; i < n; ++i) {
    const double k = static_cast<double>(count[i]), d = ref[i] - shift;
    c += count[i];
    a += s1[i] + k * d;
    b += s2[i] + 2.0 * d * s1[i] + k * d * d;
  }
  return {c, a, b};
}

}  // namespace stacklens::compute::cpu::clip_kernels

namespace stacklens::compute::cpu {
namespace {

using clip_kernels::orderedBits;
using clip_kernels::Part;

constexpr int kMaxKeyBits = 16;         // at most 2^16 keys
constexpr int64_t kBuckets = 512;       // buckets (runs of keys) of similar value counts
constexpr int64_t kSample = 1 << 15;    // sample size that sets the key range
constexpr int64_t kChunkMin = 1 << 16;  // values per parallel chunk of the setup passes at least

// Scratch reused across calls: the first touch of fresh pages costs more than the whole
// computation (compute/BENCHMARKS.md), so the bucketed copy of the data and the histograms are
// kept for the next call. One workspace is cached; one over kCacheLimit values is freed.
struct Workspace {
  std::unique_ptr<float[]> values;  // the finite values, bucket by bucket (default-initialised)
  int64_t capacity = 0;
  std::vector<uint32_t> keyCounts;    // per chunk and key
  std::vector<int64_t> keyTotals;     // per key
  std::vector<uint16_t> bucketOfKey;  // per key
  std::vector<int64_t> offsets;       // per chunk and bucket: the next slot of the scatter
  std::vector<float> scratch;         // in-range values of a partial bucket, for nth_element
  void reserve(int64_t n) {
    if (capacity >= n) return;
    values.reset();
    values.reset(new float[static_cast<size_t>(n)]);
    capacity = n;
  }
};

constexpr int64_t kCacheLimit = int64_t{1} << 26;  // 256 MiB of floats

class WorkspaceCache {
 public:
  std::unique_ptr<Workspace> take() {
    std::lock_guard lock(mutex_);
    return cached_ ? std::move(cached_) : std::make_unique<Workspace>();
  }
  void give(std::unique_ptr<Workspace> w) {
    if (w->capacity > kCacheLimit) return;
    std::lock_guard lock(mutex_);
    cached_ = std::move(w);
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<Workspace> cached_;
};

WorkspaceCache& workspaceCache() {
  static WorkspaceCache cache;
  return cache;
}

struct SetStats {
  int64_t n = 0;
  double sum = 0, sumSq = 0;  // of (x − median)
  double median = std::numeric_limits<double>::quiet_NaN();
  float min = 0, max = 0;
};

// The finite values of an image partitioned into buckets of increasing key, with per-bucket
// statistics; answers "statistics of the values in [lo, hi]" without touching whole buckets.
class BucketedValues {
 public:
  BucketedValues(const float* data, int64_t n, ThreadPool& pool, const Job& job)
      : ws_(workspaceCache().take()) {
    // Chunks of under 2^31 values keep the 32-bit key counts exact.
    const int64_t chunks = std::max(std::clamp<int64_t>(n / kChunkMin, 1, pool.size() * 2),
                                    n / (int64_t{1} << 31) + 1);
    auto chunkBegin = [n, chunks](int64_t c) { return c * n / chunks; };

    // Keys from a strided sample of about kSample values (all of a small input): 2^bits keys
    // over the sample's range of ordered bits; values beyond it share the end keys.
    const int64_t stride = std::max<int64_t>(1, n / kSample);
    uint32_t lo = ~0u, hi = 0;
    for (int64_t i = 0; i < n; i += stride)
      if (clip_kernels::isFinite(data[i])) {
        lo = std::min(lo, orderedBits(data[i]));
        hi = std::max(hi, orderedBits(data[i]));
      }
    if (lo <= hi) {
      key_.base = lo;
      key_.range = hi - lo;
    }
    const int bits =
        std::clamp(static_cast<int>(std::bit_width(static_cast<uint64_t>(n))), 1, kMaxKeyBits);
    while ((static_cast<uint64_t>(key_.range) >> key_.shift) >= (uint64_t{1} << bits)) ++key_.shift;
    const int64_t keys = static_cast<int64_t>(key_.range >> key_.shift) + 1;

    // Pass 1: key counts per chunk.
    // Each chunk's counts take keys + 1 entries: the last counts the non-finite values.
    const int64_t perChunk = keys + 1;
    std::vector<uint32_t>& counts = ws_->keyCounts;
    counts.assign(static_cast<size_t>(chunks * perChunk), 0);
    pool.parallelFor(chunks, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        clip_kernels::countKeys(data + chunkBegin(c), chunkBegin(c + 1) - chunkBegin(c), key_,
                                static_cast<uint32_t>(keys), counts.data() + c * perChunk);
    });
    std::vector<int64_t>& total = ws_->keyTotals;
    total.assign(static_cast<size_t>(keys), 0);
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t k = 0; k < keys; ++k) total[k] += counts[c * perChunk + k];
    for (int64_t k = 0; k < keys; ++k) n_ += total[k];
    if (n_ == 0) return;
    job.checkCancelled();

    // Buckets: runs of consecutive keys holding about n / kBuckets values each (a key is never
    // split; every bucket holds at least one value).
    const int64_t target = std::max<int64_t>(1, n_ / std::clamp<int64_t>(n_ / 16, 1, kBuckets));
    std::vector<uint16_t>& bucketOfKey = ws_->bucketOfKey;
    bucketOfKey.resize(keys);
    int64_t inBucket = 0;
    firstKey_.push_back(0);
    begin_.push_back(0);
    for (int64_t k = 0; k < keys; ++k) {
      if (inBucket >= target && total[k] > 0) {
        count_.push_back(inBucket);
        firstKey_.push_back(static_cast<uint32_t>(k));
        begin_.push_back(begin_.back() + inBucket);
        inBucket = 0;
      }
      bucketOfKey[k] = static_cast<uint16_t>(firstKey_.size() - 1);
      inBucket += total[k];
    }
    count_.push_back(inBucket);
    const int64_t buckets = static_cast<int64_t>(count_.size());
    // Each chunk's first slot in each bucket.
    std::vector<int64_t>& offsets = ws_->offsets;
    offsets.assign(static_cast<size_t>(chunks * buckets), 0);
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t k = 0; k < keys; ++k)
        offsets[c * buckets + bucketOfKey[k]] += counts[c * perChunk + k];
    for (int64_t b = 0; b < buckets; ++b) {
      int64_t slot = begin_[b];
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t h = offsets[c * buckets + b];
        offsets[c * buckets + b] = slot;
        slot += h;
      }
    }

    // Pass 2: scatter.
    ws_->reserve(n_);
    values_ = ws_->values.get();
    pool.parallelFor(chunks, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        clip_kernels::scatterToBuckets(data + chunkBegin(c), chunkBegin(c + 1) - chunkBegin(c),
                                       key_, static_cast<uint32_t>(keys), bucketOfKey.data(),
                                       offsets.data() + c * buckets, values_);
    });
    job.checkCancelled();

    // Pass 3: per-bucket moments about the bucket's first value, min and max.
    ref_.resize(buckets);
    sum_.resize(buckets);
    sumSq_.resize(buckets);
    min_.resize(buckets);
    max_.resize(buckets);
    pool.parallelFor(buckets, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const float* p = values_ + begin_[b];
        ref_[b] = p[0];
        const Part m = clip_kernels::bucketMoments(p, count_[b], ref_[b]);
        sum_[b] = m.sum;
        sumSq_[b] = m.sumSq;
        min_[b] = m.min;
        max_[b] = m.max;
      }
    });
  }

  ~BucketedValues() { workspaceCache().give(std::move(ws_)); }
  BucketedValues(const BucketedValues&) = delete;
  BucketedValues& operator=(const BucketedValues&) = delete;

  // Count, moments about the median, median, min and max of the values in [lo, hi]; lo ≤ hi
  // must lie within the finite range (the clipping loop keeps them there).
  SetStats stats(float lo, float hi) {
    SetStats s;
    if (n_ == 0) return s;
    const int64_t i0 = bucketOf(lo), i1 = bucketOf(hi) + 1;
    // Only the first and last bucket can hold values outside [lo, hi].
    const Part first = part(i0, lo, hi);
    const Part last = i1 - 1 > i0 ? part(i1 - 1, lo, hi) : Part{};
    const int64_t innerBegin = i0 + 1, innerEnd = std::max(i0 + 1, i1 - 1);
    int64_t inner = 0;
    for (int64_t i = innerBegin; i < innerEnd; ++i) inner += count_[i];
    s.n = first.n + inner + last.n;
    if (s.n == 0) return s;

    s.min = first.n > 0 ? first.min : innerEnd > innerBegin ? min_[innerBegin] : last.min;
    s.max = last.n > 0 ? last.max : innerEnd > innerBegin ? max_[innerEnd - 1] : first.max;
    if (s.min == s.max) {
      s.median = s.min;
    } else {
      const int64_t k0 = (s.n - 1) / 2, k1 = s.n / 2;  // the middle ranks (equal if odd)
      const double v0 = valueAtRank(k0, i0, i1, first.n, last.n, lo, hi);
      s.median = k1 == k0 ? v0 : 0.5 * (v0 + valueAtRank(k1, i0, i1, first.n, last.n, lo, hi));
    }

    const double shift = s.median;
    const auto t = clip_kernels::combineBuckets(
        count_.data() + innerBegin, ref_.data() + innerBegin, sum_.data() + innerBegin,
        sumSq_.data() + innerBegin, innerEnd - innerBegin, shift);
    s.sum = t.sum;
    s.sumSq = t.sumSq;
    auto add = [&](const Part& p, int64_t i) {
      if (p.n == 0) return;
      if (!whole(i, lo, hi)) {
        // Moved sums are exact algebra, but Σ(x − r) loses the in-range values when the bucket's
        // reference r is an excluded value far from them (a bucket spanning 1 to 1e30, say):
        // rescan the in-range values about the shift instead. Whole buckets are safe: r is one
        // of their values, so the result is at least (r − shift)², the scale of the rounding.
        const Part q = clip_kernels::rangeMoments(values_ + begin_[i], count_[i], lo, hi, shift);
        s.sum += q.sum;
        s.sumSq += q.sumSq;
        return;
      }
      const double k = static_cast<double>(p.n), d = ref_[i] - shift;
      s.sum += p.sum + k * d;
      s.sumSq += p.sumSq + 2.0 * d * p.sum + k * d * d;
    };
    add(first, i0);
    if (i1 - 1 > i0) add(last, i1 - 1);
    return s;
  }

 private:
  // The bucket whose keys include x's key.
  int64_t bucketOf(float x) const {
    return std::upper_bound(firstKey_.begin(), firstKey_.end(), key_(x)) - firstKey_.begin() - 1;
  }

  bool whole(int64_t i, float lo, float hi) const { return min_[i] >= lo && max_[i] <= hi; }

  Part part(int64_t i, float lo, float hi) const {
    if (whole(i, lo, hi)) return {count_[i], sum_[i], sumSq_[i], min_[i], max_[i]};
    return clip_kernels::rangeMoments(values_ + begin_[i], count_[i], lo, hi, ref_[i]);
  }

  // The r-th smallest (0-based) value in [lo, hi], which holds firstN values of bucket i0,
  // lastN of bucket i1 − 1 (when that is another bucket) and all of those between.
  double valueAtRank(int64_t r, int64_t i0, int64_t i1, int64_t firstN, int64_t lastN, float lo,
                     float hi) {
    int64_t i = i0;
    for (;;) {
      const int64_t inRange = i == i0 ? firstN : i == i1 - 1 ? lastN : count_[i];
      if (r < inRange) break;
      r -= inRange;
      ++i;
    }
    float* p = values_ + begin_[i];
    if (whole(i, lo, hi)) {
      if (min_[i] == max_[i]) return min_[i];
      std::nth_element(p, p + r, p + count_[i]);  // reorders the bucket: its order is free
      return p[r];
    }
    std::vector<float>& in = ws_->scratch;
    in.clear();
    for (int64_t j = 0; j < count_[i]; ++j)
      if (p[j] >= lo && p[j] <= hi) in.push_back(p[j]);
    std::nth_element(in.begin(), in.begin() + r, in.end());
    return in[static_cast<size_t>(r)];
  }

  std::unique_ptr<Workspace> ws_;
  int64_t n_ = 0;
  clip_kernels::KeyMap key_;
  float* values_ = nullptr;
  std::vector<uint32_t> firstKey_;
  std::vector<int64_t> begin_, count_;
  std::vector<double> ref_, sum_, sumSq_;
  std::vector<float> min_, max_;
};

SummaryStats summarise(const SetStats& s) {
  SummaryStats out;
  out.n = s.n;
  if (s.n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out.mean = out.median = out.std = out.min = out.max = nan;
    return out;
  }
  const double n = static_cast<double>(s.n);
  const double meanDev = s.sum / n;
  out.mean = s.median + meanDev;
  out.std = std::sqrt(std::max(0.0, s.sumSq / n - meanDev * meanDev));
  out.median = s.median;
  out.min = s.min;
  out.max = s.max;
  return out;
}

}  // namespace

ClipStats sigmaClip(const Image& in, const ClipParams& p, const Job& job, ThreadPool& pool) {
  validate(p);
  if (in.empty()) throw InvalidArgument("sigma_clip: the image is empty");
  BucketedValues values(in.data(), in.shape().count(), pool, job);
  const float inf = std::numeric_limits<float>::infinity();
  const float fmax = std::numeric_limits<float>::max();
  SetStats current = values.stats(-fmax, fmax);
  ClipStats out;
  out.all = summarise(current);
  job.checkCancelled();

  float lo = current.n > 0 ? current.min : 0.f, hi = current.n > 0 ? current.max : 0.f;
  int iterations = 0;
  const int64_t maxIter = p.maxIterations <= 0 ? std::numeric_limits<int64_t>::max()
                                               : static_cast<int64_t>(p.maxIterations);
  while (iterations < maxIter) {
    ++iterations;
    if (current.n == 0) break;  // astropy: NaN bounds keep nothing, nothing changes
    const SummaryStats s = summarise(current);
    // Bounds in double as astropy computes them; a float x is kept when lo ≤ x ≤ hi in double.
    // The tightest float interval with the same membership: round lo up, hi down.
    // Clamped to the float range first (the data are finite floats; an out-of-range cast is UB).
    const double dlo = std::clamp(s.median - p.kappaLower * s.std, -double{fmax}, double{fmax});
    const double dhi = std::clamp(s.median + p.kappaUpper * s.std, -double{fmax}, double{fmax});
    float flo = static_cast<float>(dlo), fhi = static_cast<float>(dhi);
    if (static_cast<double>(flo) < dlo) flo = std::nextafter(flo, inf);
    if (static_cast<double>(fhi) > dhi) fhi = std::nextafter(fhi, -inf);
    lo = std::max(lo, flo);
    hi = std::min(hi, fhi);
    // lo > hi: nothing can be kept (κ < 1 on two values, say).
    SetStats next = lo <= hi ? values.stats(lo, hi) : SetStats{};
    const bool changed = next.n != current.n;
    current = next;
    job.report(std::min(1.0, iterations / 10.0));
    job.checkCancelled();
    if (!changed) break;
  }
  out.clipped = summarise(current);
  out.iterations = iterations;
  return out;
}

}  // namespace stacklens::compute::cpu
