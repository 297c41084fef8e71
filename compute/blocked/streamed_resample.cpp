// streamResample: zoomed input slices kept in a sliding window, z interpolated per output slab.
#include "compute/blocked/streamed_resample.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
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

// Reads and zooms input slices in y and x, spread over the backends still working (one thread
// each, taking the next slice as they finish one). A backend that throws anything but Cancelled
// is struck off and its slice goes to the others; a read error stops everything.
class SliceZoomer {
 public:
  SliceZoomer(const std::vector<Backend*>& backends, const BoxReader& read, Shape in,
              const ResampleParams& p, const Job& job, StreamedResampleReport& report)
      : backends_(backends),
        read_(read),
        in_(in),
        p_(p),
        job_(job),
        report_(report),
        alive_(backends.size(), true) {}

  // The zoomed slices zs, in their order.
  std::vector<Image> zoom(const std::vector<int64_t>& zs) {
    std::vector<Image> out(zs.size());
    std::vector<size_t> left(zs.size());
    for (size_t i = 0; i < zs.size(); ++i) left[i] = i;
    while (!left.empty()) {
      std::vector<size_t> workers;
      for (size_t b = 0; b < backends_.size(); ++b)
        if (alive_[b]) workers.push_back(b);
      if (workers.empty()) std::rethrow_exception(firstFailure_);
      std::atomic<size_t> next{0};
      std::mutex mutex;
      std::exception_ptr fatal;
      auto work = [&](size_t b) {
        Backend& backend = *backends_[b];
        Image raw = Image::hostUninitialized({1, in_.y, in_.x});
        try {
          backend.device().bindToThisThread();
        } catch (const std::exception& e) {
          return strike(b, e, mutex);
        }
        for (size_t k; (k = next++) < left.size();) {
          const size_t i = left[k];
          auto t = Clock::now();
          try {
            job_.checkCancelled();
            read_(Box{zs[i], zs[i] + 1, 0, in_.y, 0, in_.x}, raw.data());
          } catch (...) {  // a read error or a cancel: everything stops
            std::lock_guard lock(mutex);
            if (!fatal) fatal = std::current_exception();
            next = left.size();
            return;
          }
          const double readSeconds = secondsSince(t);
          t = Clock::now();
          try {
            out[i] = backend.download(
                backend.resample(backend.upload(raw), {1.0, p_.zoomY, p_.zoomX, p_.order}));
          } catch (const Cancelled&) {
            std::lock_guard lock(mutex);
            if (!fatal) fatal = std::current_exception();
            next = left.size();
            return;
          } catch (const std::exception& e) {  // the device failed: others take its slices
            return strike(b, e, mutex);
          }
          std::lock_guard lock(mutex);
          report_.readSeconds += readSeconds;
          report_.computeSeconds += secondsSince(t);
        }
      };
      if (workers.size() == 1) {
        work(workers.front());
      } else {
        std::vector<std::thread> threads;
        for (size_t b : workers) threads.emplace_back(work, b);
        for (std::thread& t : threads) t.join();
      }
      if (fatal) std::rethrow_exception(fatal);
      // What is not zoomed yet: the failed slices and any a struck-off backend did not reach.
      std::vector<size_t> again;
      for (size_t i : left)
        if (out[i].empty()) again.push_back(i);
      left = std::move(again);
    }
    return out;
  }

 private:
  // Called in the catch block of the backend's failure.
  void strike(size_t b, const std::exception& e, std::mutex& mutex) {
    std::lock_guard lock(mutex);
    alive_[b] = false;
    report_.failures.push_back(backends_[b]->deviceName() + ": " + e.what());
    if (!firstFailure_) firstFailure_ = std::current_exception();
  }

  const std::vector<Backend*>& backends_;
  const BoxReader& read_;
  Shape in_;
  ResampleParams p_;
  const Job& job_;
  StreamedResampleReport& report_;
  std::vector<bool> alive_;
  std::exception_ptr firstFailure_;
};

}  // namespace

int64_t resampleSlabSlicesFor(Shape in, const ResampleParams& p, size_t hostBudget, int devices) {
  const Shape out = resampledShape(in, p);
  const size_t outSlice = size_t(out.y * out.x) * sizeof(float);
  // Read, and the backend's copies, on every device's thread.
  const size_t raw = size_t(in.y * in.x) * sizeof(float) * 3 * size_t(std::max(devices, 1));
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
  return streamResample(std::vector<Backend*>{&backend}, read, write, in, p, outSlabSlices, job);
}

StreamedResampleReport streamResample(const std::vector<Backend*>& backends, const BoxReader& read,
                                      const BoxWriter& write, Shape in, const ResampleParams& p,
                                      int64_t outSlabSlices, const Job& job) {
  if (backends.empty()) throw InvalidArgument("resample: no backend to run on");
  validate(p);
  if (outSlabSlices < 1) throw InvalidArgument("resample: bad slab size");
  const Shape out = resampledShape(in, p);
  const int64_t plane = out.y * out.x;
  const bool lateral = out.y != in.y || out.x != in.x;
  const bool alongZ = out.z != in.z;
  const std::vector<cpu::Taps> taps = cpu::makeTaps(in.z, out.z, p.order);
  cpu::ThreadPool pool;
  StreamedResampleReport report;
  SliceZoomer zoomer(backends, read, in, p, job, report);
  std::map<int64_t, Image> window;  // zoomed input slices by index
  // The window holds input slices [from, to] after this (zoomed in y and x when they change).
  auto fill = [&](int64_t from, int64_t to) {
    std::vector<int64_t> missing;
    for (int64_t z = from; z <= to; ++z)
      if (!window.count(z)) missing.push_back(z);
    if (lateral) {
      std::vector<Image> zoomed = zoomer.zoom(missing);
      for (size_t i = 0; i < missing.size(); ++i) window.emplace(missing[i], std::move(zoomed[i]));
      return;
    }
    for (int64_t z : missing) {
      job.checkCancelled();
      const auto t = Clock::now();
      Image slice = Image::hostUninitialized({1, in.y, in.x});
      read(Box{z, z + 1, 0, in.y, 0, in.x}, slice.data());
      report.readSeconds += secondsSince(t);
      window.emplace(z, std::move(slice));
    }
  };
  Image slab = Image::hostUninitialized({std::min(outSlabSlices, out.z), out.y, out.x});
  for (int64_t o0 = 0; o0 < out.z; o0 += outSlabSlices) {
    const int64_t o1 = std::min(out.z, o0 + outSlabSlices);
    if (!alongZ) {
      fill(o0, o1 - 1);
      for (int64_t o = o0; o < o1; ++o) {
        std::copy_n(window.at(o).data(), plane, slab.slice(o - o0));
        window.erase(o);
      }
    } else {
      auto [lo, hi] = tapRange(taps, o0, o1, p.order);
      const int64_t margin = p.order == 3 ? kSplineWindowMargin : 0;
      const int64_t w0 = std::max<int64_t>(0, lo - margin);
      const int64_t w1 = std::min<int64_t>(in.z - 1, hi + margin);
      window.erase(window.begin(), window.lower_bound(w0));
      fill(w0, w1);
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
