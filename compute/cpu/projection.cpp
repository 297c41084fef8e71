// Projections and spectral moments along z on the CPU (semantics in compute/params.h). Each
// thread takes whole rows and walks the slices in order with a row of double accumulators, so
// the input is read along x; sums are in double, in slice order, as the CUDA kernels add them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "compute/cpu/operations.h"
#include "compute/projection.h"

namespace stacklens::compute::cpu {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Image flatImage(const Image& in) {
  Image out = Image::hostUninitialized({1, in.shape().y, in.shape().x});
  out.spacing = in.spacing;
  return out;
}

// Rows of the output in parallel; body(y, outRow) fills one.
template <class Body>
void eachRow(const Image& in, Image& out, const Job& job, ThreadPool& pool, Body body) {
  const Shape s = in.shape();
  pool.parallelFor(
      s.y,
      [&](int64_t y0, int64_t y1) {
        for (int64_t y = y0; y < y1; ++y) {
          job.checkCancelled();
          body(y, out.data() + y * s.x);
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(1, s.x)));
}

// The median of the finite values of v (moved about), NaN when there are none.
float medianOf(std::vector<float>& v) {
  auto end = std::remove_if(v.begin(), v.end(), [](float a) { return std::isnan(a); });
  const size_t n = static_cast<size_t>(end - v.begin());
  if (n == 0) return kNaN;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, end);
  if (n % 2) return *mid;
  const float upper = *mid;
  const float lower = *std::max_element(v.begin(), mid);
  return static_cast<float>((double(lower) + double(upper)) / 2.0);
}

}  // namespace

Image project(const Image& in, const ProjectParams& p, const Job& job, ThreadPool& pool) {
  const Shape s = in.shape();
  const SliceRange r = sliceRange(s.z, p.first, p.last);
  Image out = flatImage(in);
  const int64_t plane = s.y * s.x;
  const float* data = in.data();
  eachRow(in, out, job, pool, [&](int64_t y, float* o) {
    auto row = [&](int64_t z) { return data + z * plane + y * s.x; };
    if (p.op == Projection::Median) {
      std::vector<float> column(static_cast<size_t>(r.count()));
      for (int64_t x = 0; x < s.x; ++x) {
        for (int64_t z = r.begin; z < r.end; ++z) column[size_t(z - r.begin)] = row(z)[x];
        o[x] = medianOf(column);
      }
      return;
    }
    std::vector<double> acc(size_t(s.x), 0.0), second(size_t(s.x), 0.0);
    std::vector<int64_t> count(size_t(s.x), 0);
    const bool extreme = p.op == Projection::Max || p.op == Projection::Min;
    if (extreme)
      std::fill(acc.begin(), acc.end(),
                p.op == Projection::Max ? -std::numeric_limits<double>::infinity()
                                        : std::numeric_limits<double>::infinity());
    for (int64_t z = r.begin; z < r.end; ++z) {
      const float* v = row(z);
      for (int64_t x = 0; x < s.x; ++x) {
        if (std::isnan(v[x])) continue;
        ++count[size_t(x)];
        double& a = acc[size_t(x)];
        a = p.op == Projection::Max   ? std::max(a, double(v[x]))
            : p.op == Projection::Min ? std::min(a, double(v[x]))
                                      : a + double(v[x]);
      }
    }
    if (p.op == Projection::Std)  // a second pass about the mean: no cancellation
      for (int64_t z = r.begin; z < r.end; ++z) {
        const float* v = row(z);
        for (int64_t x = 0; x < s.x; ++x) {
          if (std::isnan(v[x])) continue;
          const double d = double(v[x]) - acc[size_t(x)] / double(count[size_t(x)]);
          second[size_t(x)] += d * d;
        }
      }
    for (int64_t x = 0; x < s.x; ++x) {
      const double n = double(count[size_t(x)]), a = acc[size_t(x)];
      o[x] = n == 0                               ? kNaN
             : extreme || p.op == Projection::Sum ? float(a)
             : p.op == Projection::Mean           ? float(a / n)
                                                  : float(std::sqrt(second[size_t(x)] / n));
    }
  });
  return out;
}

Image moment(const Image& in, const MomentParams& p, const Job& job, ThreadPool& pool) {
  const Shape s = in.shape();
  const MomentAxis axis = momentAxis(s.z, p);
  const int64_t begin = sliceRange(s.z, p.first, p.last).begin;
  Image out = flatImage(in);
  const int64_t plane = s.y * s.x;
  const float* data = in.data();
  eachRow(in, out, job, pool, [&](int64_t y, float* o) {
    auto row = [&](size_t k) { return data + (begin + int64_t(k)) * plane + y * s.x; };
    auto kept = [&](float v) { return !std::isnan(v) && double(v) >= p.clip; };
    std::vector<double> weight(size_t(s.x), 0.0), first(size_t(s.x), 0.0), spread(size_t(s.x), 0.0);
    std::vector<int64_t> count(size_t(s.x), 0);
    for (size_t k = 0; k < axis.value.size(); ++k) {
      const float* v = row(k);
      const double w = p.order == 0 ? axis.width[k] : 1.0, c = axis.value[k];
      for (int64_t x = 0; x < s.x; ++x)
        if (kept(v[x])) {
          ++count[size_t(x)];
          weight[size_t(x)] += double(v[x]) * w;
          first[size_t(x)] += double(v[x]) * c;
        }
    }
    if (p.order == 2)
      for (size_t k = 0; k < axis.value.size(); ++k) {
        const float* v = row(k);
        for (int64_t x = 0; x < s.x; ++x)
          if (kept(v[x]) && weight[size_t(x)] != 0) {
            const double d = axis.value[k] - first[size_t(x)] / weight[size_t(x)];
            spread[size_t(x)] += double(v[x]) * d * d;
          }
      }
    for (int64_t x = 0; x < s.x; ++x) {
      const double w = weight[size_t(x)];
      if (count[size_t(x)] == 0 || (p.order > 0 && w == 0)) {
        o[x] = kNaN;
      } else if (p.order == 0) {
        o[x] = float(w);
      } else if (p.order == 1) {
        o[x] = float(first[size_t(x)] / w);
      } else {
        const double variance = spread[size_t(x)] / w;
        o[x] = variance >= 0 ? float(std::sqrt(variance)) : kNaN;
      }
    }
  });
  return out;
}

}  // namespace stacklens::compute::cpu
