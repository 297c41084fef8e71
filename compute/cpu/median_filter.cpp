// 2D median filter per slice on the CPU, matching scipy.ndimage.median_filter(size=k,
// mode='reflect').
//
// Semantics (the CUDA backend must match these bit for bit):
// - Window: k×k, k odd ≥ 1, centred on the pixel; the result is the element of rank k²/2
//   (0-based) of the window sorted ascending — the true median, since k² is odd.
// - Boundary: SciPy 'reflect' (half-sample symmetric, d c b a | a b c d | d c b a), repeated as
//   often as needed when the window is larger than the image.
// - Ordering: values are ranked by the IEEE total order on a canonical bit pattern: every NaN
//   becomes the positive quiet NaN 0x7FC00000, which ranks above +Inf; -0 ranks just below +0.
//   So NaN behaves as a value larger than +Inf: a window with more than k²/2 NaN gives NaN,
//   fewer NaN act as the largest values. The result is always one of the window's values
//   (NaN as the canonical quiet NaN), never an average.
// Implementation: floats are mapped once per slice to int32 keys whose signed order is that
// total order (a reflect-padded key slice), so every comparison is an integer min/max that the
// compiler vectorises across x. 3×3 uses sorted columns shared by neighbouring pixels; 5×5 runs
// a pruned Batcher odd–even merge network unrolled at compile time on 8 pixels at once (wires in
// vector registers); other sizes up to 15×15 interpret the same kind of network on blocks of 64
// pixels; larger windows use std::nth_element per pixel.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "compute/cpu/operations.h"
#include "compute/cpu/reflect_index.h"

namespace stacklens::compute::cpu {
namespace {

// Maps float bits to an int32 whose signed order is the IEEE total order (an involution).
inline int32_t flipNegative(int32_t bits) { return bits ^ ((bits >> 31) & 0x7FFFFFFF); }

inline int32_t toKey(float v) {
  int32_t bits = std::bit_cast<int32_t>(v);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) bits = 0x7FC00000;  // any NaN → canonical +qNaN
  return flipNegative(bits);
}

__attribute__((target_clones("avx2", "default"))) void floatsToKeys(const float* __restrict in,
                                                                    int64_t n,
                                                                    int32_t* __restrict keys) {
  for (int64_t i = 0; i < n; ++i) keys[i] = toKey(in[i]);
}

__attribute__((target_clones("avx2", "default"))) void keysToFloats(const int32_t* __restrict keys,
                                                                    int64_t n,
                                                                    float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(flipNegative(keys[i]));
}

// The slice as keys, padded by r on every side with reflected values.
class PaddedKeys {
 public:
  PaddedKeys(int64_t height, int64_t width, int radius)
      : height_(height),
        width_(width),
        radius_(radius),
        stride_(width + 2 * radius),
        keys_(Buffer<int32_t>::hostUninitialized({1, height + 2 * radius, stride_})) {}

  void fill(const float* slice, const Job& job, ThreadPool& pool) {
    pool.parallelFor(height_ + 2 * radius_, [&](int64_t begin, int64_t end) {
      for (int64_t py = begin; py < end; ++py) {
        job.checkCancelled();
        const float* src = slice + reflectIndex(py - radius_, height_) * width_;
        int32_t* dst = row(py);
        floatsToKeys(src, width_, dst + radius_);
        for (int i = 0; i < radius_; ++i) {
          dst[i] = dst[radius_ + reflectIndex(i - radius_, width_)];
          dst[radius_ + width_ + i] = dst[radius_ + reflectIndex(width_ + i, width_)];
        }
      }
    });
  }

  const int32_t* row(int64_t paddedY) const { return keys_.data() + paddedY * stride_; }
  int32_t* row(int64_t paddedY) { return keys_.data() + paddedY * stride_; }
  int64_t stride() const { return stride_; }

 private:
  int64_t height_, width_;
  int radius_;
  int64_t stride_;
  Buffer<int32_t> keys_;  // every element is written by fill()
};

// 3×3: sort each padded column of three (lo ≤ mid ≤ hi), then the median of the nine is
// med3(max of the three lo, med3 of the three mid, min of the three hi).
__attribute__((target_clones("avx2", "default"))) void median3Row(
    const int32_t* __restrict r0, const int32_t* __restrict r1, const int32_t* __restrict r2,
    int64_t width, int32_t* __restrict lo, int32_t* __restrict mid, int32_t* __restrict hi,
    int32_t* __restrict out) {
  for (int64_t c = 0; c < width + 2; ++c) {
    const int32_t a = r0[c], b = r1[c], d = r2[c];
    const int32_t ab0 = std::min(a, b), ab1 = std::max(a, b);
    lo[c] = std::min(ab0, d);
    const int32_t t = std::max(ab0, d);
    mid[c] = std::min(ab1, t);
    hi[c] = std::max(ab1, t);
  }
  for (int64_t x = 0; x < width; ++x) {
    const int32_t l = std::max(std::max(lo[x], lo[x + 1]), lo[x + 2]);
    const int32_t h = std::min(std::min(hi[x], hi[x + 1]), hi[x + 2]);
    const int32_t m0 = mid[x], m1 = mid[x + 1], m2 = mid[x + 2];
    const int32_t m = std::max(std::min(m0, m1), std::min(std::max(m0, m1), m2));
    out[x] = std::max(std::min(l, m), std::min(std::max(l, m), h));
  }
}

// A comparator of the pruned network: lo ← min(lo, hi) and/or hi ← max(lo, hi).
struct Comparator {
  int32_t lo, hi;
  bool keepMin, keepMax;
};

struct SelectionNetwork {
  std::vector<Comparator> comparators;
  int32_t outputWire = 0;
};

// Batcher's odd–even merge sort on the next power of two ≥ n wires, with the padding wires
// (+∞) removed and only the comparators that the rank-(n/2) output depends on kept.
SelectionNetwork medianNetwork(int n) {
  int wires = 1;
  while (wires < n) wires *= 2;
  std::vector<std::pair<int, int>> sorter;
  for (int p = 1; p < wires; p *= 2)
    for (int k = p; k >= 1; k /= 2)
      for (int j = k % p; j + k < wires; j += 2 * k)
        for (int i = 0; i < std::min(k, wires - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) sorter.emplace_back(i + j, i + j + k);

  // Forward: logical wire → storage slot, or -1 while it holds a padding +∞.
  std::vector<int> slot(wires);
  for (int w = 0; w < wires; ++w) slot[w] = w < n ? w : -1;
  std::vector<Comparator> forward;
  for (auto [a, b] : sorter) {
    if (slot[b] < 0) continue;  // max(x, +∞) = +∞ stays on b, a keeps x: nothing to do
    if (slot[a] < 0) {          // a holds +∞: the comparator just moves b's value to a
      std::swap(slot[a], slot[b]);
      continue;
    }
    forward.push_back({slot[a], slot[b], true, true});
  }
  // Backward liveness from the median's slot.
  SelectionNetwork net;
  net.outputWire = slot[n / 2];
  std::vector<bool> live(n, false);
  live[net.outputWire] = true;
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    Comparator c = *it;
    c.keepMin = live[c.lo];
    c.keepMax = live[c.hi];
    if (!c.keepMin && !c.keepMax) continue;
    live[c.lo] = live[c.hi] = true;
    net.comparators.push_back(c);
  }
  std::reverse(net.comparators.begin(), net.comparators.end());
  return net;
}

constexpr int kBlock = 64;  // pixels pushed through the network together

// values[wire * kBlock + t] for t < count; runs the network on every t at once.
__attribute__((target_clones("avx2", "default"))) void runNetwork(const Comparator* comparators,
                                                                  size_t n, int32_t* values) {
  for (size_t c = 0; c < n; ++c) {
    int32_t* a = values + comparators[c].lo * kBlock;
    int32_t* b = values + comparators[c].hi * kBlock;
    if (comparators[c].keepMin && comparators[c].keepMax) {
      for (int t = 0; t < kBlock; ++t) {
        const int32_t x = a[t], y = b[t];
        a[t] = std::min(x, y);
        b[t] = std::max(x, y);
      }
    } else if (comparators[c].keepMin) {
      for (int t = 0; t < kBlock; ++t) a[t] = std::min(a[t], b[t]);
    } else {
      for (int t = 0; t < kBlock; ++t) b[t] = std::max(a[t], b[t]);
    }
  }
}

void medianRowNetwork(const PaddedKeys& keys, int64_t y, int64_t width, int size,
                      const SelectionNetwork& net, std::vector<int32_t>& values, int32_t* out) {
  for (int64_t x0 = 0; x0 < width; x0 += kBlock) {
    const int count = static_cast<int>(std::min<int64_t>(kBlock, width - x0));
    for (int dy = 0; dy < size; ++dy) {
      const int32_t* row = keys.row(y + dy) + x0;
      for (int dx = 0; dx < size; ++dx) {
        int32_t* v = values.data() + (dy * size + dx) * kBlock;
        std::copy(row + dx, row + dx + count, v);
        std::fill(v + count, v + kBlock, 0);  // lanes past the row end: computed, not used
      }
    }
    runNetwork(net.comparators.data(), net.comparators.size(), values.data());
    std::copy_n(values.data() + net.outputWire * kBlock, count, out + x0);
  }
}

void medianRowSelect(const PaddedKeys& keys, int64_t y, int64_t width, int size,
                     std::vector<int32_t>& window, int32_t* out) {
  const size_t n = static_cast<size_t>(size) * size;
  for (int64_t x = 0; x < width; ++x) {
    for (int dy = 0; dy < size; ++dy)
      std::copy_n(keys.row(y + dy) + x, size, window.data() + dy * size);
    std::nth_element(window.begin(), window.begin() + n / 2, window.begin() + n);
    out[x] = window[n / 2];
  }
}

// The same pruned network built at compile time, so that a small window's network can be
// unrolled with every wire in a vector register (the 5×5 case: 25 wires, 113 comparators).
template <int Wires, int Capacity>
struct StaticNetwork {
  std::array<Comparator, Capacity> comparators{};
  int count = 0;
  int outputWire = 0;
};

template <int Wires, int Capacity>
constexpr StaticNetwork<Wires, Capacity> staticMedianNetwork(int n) {
  std::array<std::pair<int, int>, Capacity * 2> sorter{};
  int sorterCount = 0;
  for (int p = 1; p < Wires; p *= 2)
    for (int k = p; k >= 1; k /= 2)
      for (int j = k % p; j + k < Wires; j += 2 * k)
        for (int i = 0; i < std::min(k, Wires - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p))
            sorter[sorterCount++] = {i + j, i + j + k};
  std::array<int, Wires> slot{};
  for (int w = 0; w < Wires; ++w) slot[w] = w < n ? w : -1;
  std::array<Comparator, Capacity * 2> forward{};
  int forwardCount = 0;
  for (int c = 0; c < sorterCount; ++c) {
    const auto [a, b] = sorter[c];
    if (slot[b] < 0) continue;
    if (slot[a] < 0) {
      std::swap(slot[a], slot[b]);
      continue;
    }
    forward[forwardCount++] = {slot[a], slot[b], true, true};
  }
  StaticNetwork<Wires, Capacity> net;
  net.outputWire = slot[n / 2];
  std::array<bool, Wires> live{};
  live[net.outputWire] = true;
  std::array<Comparator, Capacity> reversed{};
  for (int c = forwardCount - 1; c >= 0; --c) {
    Comparator cmp = forward[c];
    cmp.keepMin = live[cmp.lo];
    cmp.keepMax = live[cmp.hi];
    if (!cmp.keepMin && !cmp.keepMax) continue;
    live[cmp.lo] = live[cmp.hi] = true;
    reversed[net.count++] = cmp;
  }
  for (int c = 0; c < net.count; ++c) net.comparators[c] = reversed[net.count - 1 - c];
  return net;
}

constexpr auto kMedian25 = staticMedianNetwork<32, 128>(25);
static_assert(kMedian25.count == 113);

using Lanes = int32_t __attribute__((vector_size(32)));  // 8 keys, one per pixel
constexpr int kLanes = 8;

template <size_t I>
__attribute__((always_inline)) inline void compareExchange(Lanes* v) {
  constexpr Comparator c = kMedian25.comparators[I];
  const Lanes a = v[c.lo], b = v[c.hi];
  if constexpr (c.keepMin) v[c.lo] = a < b ? a : b;
  if constexpr (c.keepMax) v[c.hi] = a < b ? b : a;
}

template <size_t... I>
__attribute__((always_inline)) inline void runMedian25(Lanes* v, std::index_sequence<I...>) {
  (compareExchange<I>(v), ...);
}

// 5×5 medians of one row, 8 pixels per network pass; needs width ≥ 8 (the last pass overlaps).
__attribute__((target_clones("avx2", "default"))) void median5Row(const int32_t* const* rows,
                                                                  int64_t width, int32_t* out) {
  for (int64_t x0 = 0; x0 < width; x0 += kLanes) {
    const int64_t x = std::min(x0, width - kLanes);
    Lanes v[25];
    for (int dy = 0; dy < 5; ++dy)
      for (int dx = 0; dx < 5; ++dx) std::memcpy(&v[dy * 5 + dx], rows[dy] + x + dx, sizeof(Lanes));
    runMedian25(v, std::make_index_sequence<kMedian25.count>{});
    std::memcpy(out + x, &v[kMedian25.outputWire], sizeof(Lanes));
  }
}

constexpr int kLargestNetwork = 15;

}  // namespace

Image medianFilter(const Image& in, int size, const Job& job, ThreadPool& pool) {
  if (in.empty()) throw InvalidArgument("median_filter: the image is empty");
  validateMedianSize(size);
  const Shape s = in.shape();
  Image out = Image::hostUninitialized(s);
  out.spacing = in.spacing;
  if (size == 1) {
    std::copy(in.data(), in.data() + s.count(), out.data());
    return out;
  }
  const int radius = size / 2;
  PaddedKeys keys(s.y, s.x, radius);
  const SelectionNetwork net =
      size > 3 && size <= kLargestNetwork ? medianNetwork(size * size) : SelectionNetwork{};
  const std::thread::id caller = std::this_thread::get_id();
  for (int64_t z = 0; z < s.z; ++z) {
    job.checkCancelled();
    keys.fill(in.slice(z), job, pool);
    float* dst = out.slice(z);
    pool.parallelFor(s.y, [&](int64_t begin, int64_t end) {
      // Per-chunk scratch, sized once: nothing is allocated per row.
      std::vector<int32_t> result(static_cast<size_t>(s.x));
      std::vector<int32_t> scratch;
      if (size == 3)
        scratch.resize(3 * static_cast<size_t>(s.x + 2));
      else if (size <= kLargestNetwork)
        scratch.resize(static_cast<size_t>(size) * size * kBlock);
      else
        scratch.resize(static_cast<size_t>(size) * size);
      for (int64_t y = begin; y < end; ++y) {
        job.checkCancelled();
        if (size == 3) {
          int32_t* lo = scratch.data();
          median3Row(keys.row(y), keys.row(y + 1), keys.row(y + 2), s.x, lo, lo + s.x + 2,
                     lo + 2 * (s.x + 2), result.data());
        } else if (size == 5 && s.x >= kLanes) {
          const int32_t* rows[5] = {keys.row(y), keys.row(y + 1), keys.row(y + 2), keys.row(y + 3),
                                    keys.row(y + 4)};
          median5Row(rows, s.x, result.data());
        } else if (size <= kLargestNetwork) {
          medianRowNetwork(keys, y, s.x, size, net, scratch, result.data());
        } else {
          medianRowSelect(keys, y, s.x, size, scratch, result.data());
        }
        keysToFloats(result.data(), s.x, dst + y * s.x);
        // Progress within a slice, from the calling thread only (the callback need not be
        // thread-safe); large windows on one big image take seconds.
        if ((y - begin) % 16 == 0 && std::this_thread::get_id() == caller)
          job.report((double(z) + double(y) / double(s.y)) / double(s.z));
      }
    });
    job.report(double(z + 1) / double(s.z));
  }
  return out;
}

}  // namespace stacklens::compute::cpu
