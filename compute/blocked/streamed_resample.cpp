// streamResample: zoomed input slices kept in a sliding window, z interpolated per output slab.
#include "compute/blocked/streamed_resample.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "compute/cpu/spline_axis.h"
#include "compute/cpu/thread_pool.h"

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Input slices [first, last] that output slices [o0, o1) read, before any margin.
std::pair<int64_t, int64_t> tapRange(const std::vector<cpu::Taps>& taps, int64_t o0, int64_t o1,
                                     int order) {
  int64_t lo = INT64_MAX, hi = -1;
  for (int64_t o = o0; o < o1; ++o)
    for (int j = 0; j <= order; ++j) {
      lo = std::min(lo, taps[size_t(o)].index[size_t(j)]);
      hi = std::max(hi, taps[size_t(o)].index[size_t(j)]);
    }
  return {lo, hi};
}

// Slices the z window holds for one output slice at most: its taps, the margins, one more for
// the rounding of the slab's span.
int64_t windowSlices(Shape in, Shape out, int order, int64_t outSlab) {
  const double step = out.z > 1 ? double(in.z - 1) / double(out.z - 1) : 0.0;
  const int64_t margin = order == 3 ? 2 * kSplineWindowMargin : 0;
  return std::min<int64_t>(in.z, int64_t(std::ceil(double(outSlab) * step)) + 5 + margin);
}

// Output slices [o0, o1) from the zoomed input slices window[w0 …] (all of the taps' range and
// the margins): prefilter along z over the window (order 3), then the taps.
void interpolateZ(const std::map<int64_t, Image>& window, int64_t w0, int64_t w1,
                  const std::vector<cpu::Taps>& taps, int order, int64_t o0, int64_t o1,
                  int64_t plane, float* out, cpu::ThreadPool& pool) {
  constexpr int64_t kColumns = 64;
  const int64_t n = w1 - w0 + 1;
  const int64_t blocks = (plane + kColumns - 1) / kColumns;
  pool.parallelFor(blocks, [&](int64_t begin, int64_t end) {
    std::vector<double> block(size_t(n * kColumns));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b0 = task * kColumns, width = std::min(kColumns, plane - b0);
      for (int64_t i = 0; i < n; ++i) {
        const float* src = window.at(w0 + i).data() + b0;
        std::copy_n(src, width, block.data() + i * width);
      }
      // Inside the stack the window's edges start the recursion with the mirror rule too: the
      // margins make that start forgotten by the samples the slab reads.
      if (order == 3) cpu::prefilterBlock(block.data(), n, width);
      for (int64_t o = o0; o < o1; ++o) {
        float* dst = out + (o - o0) * plane + b0;
        for (int64_t b = 0; b < width; ++b) {
          double sum = 0;
          for (int j = 0; j <= order; ++j)
            sum += taps[size_t(o)].weight[size_t(j)] *
                   block[size_t((taps[size_t(o)].index[size_t(j)] - w0) * width + b)];
          dst[b] = static_cast<float>(sum);
        }
      }
    }
  });
}

}  // namespace

Shape resampledShape(Shape in, const ResampleParams& p) {
  const double zoom[3] = {p.zoomZ, p.zoomY, p.zoomX};
  const int64_t n[3] = {in.z, in.y, in.x};
  int64_t out[3];
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(zoom[a]) || zoom[a] <= 0)
      throw InvalidArgument("resample: zoom factors must be finite and > 0");
    const double length = std::nearbyint(double(n[a]) * zoom[a]);
    if (length < 1 || length > 1.0e9)
      throw InvalidArgument("resample: zoom " + std::to_string(zoom[a]) +
                            " gives an output length of " + std::to_string(length));
    out[a] = static_cast<int64_t>(length);
  }
  return {out[0], out[1], out[2]};
}

int64_t resampleSlabSlicesFor(Shape in, const ResampleParams& p, size_t hostBudget) {
  const Shape out = resampledShape(in, p);
  const size_t outSlice = size_t(out.y * out.x) * sizeof(float);
  const size_t raw = size_t(in.y * in.x) * sizeof(float) * 3;  // read, backend copies
  for (int64_t slab = out.z; slab >= 1; slab = slab > 1 ? slab / 2 : 0) {
    const size_t need = raw + outSlice * size_t(slab + windowSlices(in, out, p.order, slab));
    if (need <= hostBudget) return slab;
  }
  throw InvalidArgument("a host memory budget of " + std::to_string(hostBudget >> 20) +
                        " MiB cannot hold the slices one resampled slice needs");
}

StreamedResampleReport streamResample(Backend& backend, const BoxReader& read,
                                      const BoxWriter& write, Shape in, const ResampleParams& p,
                                      int64_t outSlabSlices, const Job& job) {
  if (p.order != 1 && p.order != 3)
    throw InvalidArgument("resample: order must be 1 (linear) or 3 (cubic), got " +
                          std::to_string(p.order));
  if (outSlabSlices < 1) throw InvalidArgument("resample: bad slab size");
  const Shape out = resampledShape(in, p);
  const int64_t plane = out.y * out.x;
  const bool lateral = out.y != in.y || out.x != in.x;
  const bool alongZ = out.z != in.z;
  const std::vector<cpu::Taps> taps = cpu::makeTaps(in.z, out.z, p.order);
  cpu::ThreadPool pool;
  StreamedResampleReport report;
  std::map<int64_t, Image> window;  // zoomed input slices by index
  Image raw = Image::hostUninitialized({1, in.y, in.x});
  auto zoomed = [&](int64_t z) -> const Image& {
    if (auto it = window.find(z); it != window.end()) return it->second;
    job.checkCancelled();
    auto t = Clock::now();
    read(Box{z, z + 1, 0, in.y, 0, in.x}, raw.data());
    report.readSeconds += secondsSince(t);
    t = Clock::now();
    Image slice = lateral ? backend.download(backend.resample(backend.upload(raw),
                                                              {1.0, p.zoomY, p.zoomX, p.order}))
                          : cloneHost(raw);
    report.computeSeconds += secondsSince(t);
    return window.emplace(z, std::move(slice)).first->second;
  };
  Image slab = Image::hostUninitialized({std::min(outSlabSlices, out.z), out.y, out.x});
  for (int64_t o0 = 0; o0 < out.z; o0 += outSlabSlices) {
    const int64_t o1 = std::min(out.z, o0 + outSlabSlices);
    if (!alongZ) {
      for (int64_t o = o0; o < o1; ++o) {
        std::copy_n(zoomed(o).data(), plane, slab.slice(o - o0));
        window.erase(o);
      }
    } else {
      auto [lo, hi] = tapRange(taps, o0, o1, p.order);
      const int64_t margin = p.order == 3 ? kSplineWindowMargin : 0;
      const int64_t w0 = std::max<int64_t>(0, lo - margin);
      const int64_t w1 = std::min<int64_t>(in.z - 1, hi + margin);
      window.erase(window.begin(), window.lower_bound(w0));
      for (int64_t z = w0; z <= w1; ++z) zoomed(z);
      job.checkCancelled();
      const auto t = Clock::now();
      interpolateZ(window, w0, w1, taps, p.order, o0, o1, plane, slab.data(), pool);
      report.computeSeconds += secondsSince(t);
    }
    const auto t = Clock::now();
    write(Box{o0, o1, 0, out.y, 0, out.x}, slab.data());
    report.writeSeconds += secondsSince(t);
    ++report.slabs;
    job.report(double(o1) / double(out.z));
  }
  return report;
}

}  // namespace stacklens::compute
