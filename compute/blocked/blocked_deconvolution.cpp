// Block by block: a reader thread fills frames, the backend deconvolves them, a writer thread
// keeps their interiors.
#include "compute/blocked/blocked_deconvolution.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <thread>
#include <vector>

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Runs work(from, to) over [0, count) split among a few threads; rethrows the first failure.
void parallelSlices(int64_t count, const std::function<void(int64_t, int64_t)>& work) {
  const int64_t threads =
      std::clamp<int64_t>(std::min<int64_t>(count, std::thread::hardware_concurrency()), 1, 8);
  if (threads == 1) return work(0, count);
  std::vector<std::future<void>> parts;
  for (int64_t t = 0; t < threads; ++t)
    parts.push_back(
        std::async(std::launch::async, work, count * t / threads, count * (t + 1) / threads));
  std::exception_ptr failure;
  for (auto& part : parts) try {
      part.get();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

BlockedRunReport deconvolveBlocked(Backend& backend, const BoxReader& read, const BoxWriter& write,
                                   const Image& psf, const DeconvolveParams& p,
                                   const BlockPlan& plan, const Job& job) {
  if (!p.threeD) throw InvalidArgument("blocked deconvolution is 3D: set threeD");
  if (plan.blocks.empty()) throw InvalidArgument("blocked deconvolution: the plan has no blocks");
  if (plan.slabSlices < 1)
    throw InvalidArgument("blocked deconvolution: the plan has no slab size (planSlabs)");
  // Each frame already holds what lies past the volume's faces by the run's rule.
  DeconvolveParams blockParams = p;
  blockParams.boundary = Boundary::Periodic;
  std::unique_ptr<BlockTransfers> transfers = backend.blockTransfers();
  const Shape f = plan.frame;
  const int64_t slab = plan.slabSlices;
  const size_t n = plan.blocks.size();
  Image frames[2];
  frames[0] = transfers->allocate(f);
  if (n > 1) frames[1] = transfers->allocate(f);
  // Set when the run stops early, so that the reader and the writer stop too.
  std::atomic<bool> stop{false};
  auto stopping = [&] { return stop.load() || job.cancelled(); };

  auto fill = [&](size_t k) {
    const auto t = Clock::now();
    const Block& b = plan.blocks[k];
    float* staging = transfers->staging(0, size_t(slab * f.y * f.x));
    for (int64_t z = 0; z < f.z; z += slab) {
      if (stopping()) throw Cancelled();
      const int64_t count = std::min(slab, f.z - z);
      // Decoding a file's samples takes a core per few hundred MB/s: the slab's slices are read
      // by several threads.
      parallelSlices(count, [&](int64_t from, int64_t to) {
        Box part = b.frame;
        part.z0 = b.frame.z0 + z + from;
        part.z1 = b.frame.z0 + z + to;
        readWithBoundary(read, plan.volume, plan.boundary, part, staging + from * f.y * f.x);
      });
      transfers->put(frames[k % 2], z, count, staging);
    }
    return secondsSince(t);
  };
  auto empty = [&](size_t k, const Image& result) {
    const auto t = Clock::now();
    const Block& b = plan.blocks[k];
    const Shape in = b.interior.shape();
    float* staging = transfers->staging(2, size_t(slab * in.y * in.x));
    for (int64_t z = 0; z < in.z; z += slab) {
      if (stopping()) throw Cancelled();
      const int64_t count = std::min(slab, in.z - z);
      transfers->get(
          result,
          {b.interior.z0 - b.frame.z0 + z, b.interior.y0 - b.frame.y0, b.interior.x0 - b.frame.x0},
          {count, in.y, in.x}, staging);
      Box part = b.interior;
      part.z0 = b.interior.z0 + z;
      part.z1 = part.z0 + count;
      write(part, staging);
    }
    return secondsSince(t);
  };

  BlockedRunReport report;
  std::future<double> filling = std::async(std::launch::async, fill, size_t(0)), emptying;
  Image written;  // the result the writer is emptying, kept alive until it is done
  auto waitFor = [&](std::future<double>& work, double& seconds) {
    const auto t = Clock::now();
    seconds += work.get();
    report.waitSeconds += secondsSince(t);
  };
  try {
    for (size_t k = 0; k < n; ++k) {
      waitFor(filling, report.readSeconds);
      job.checkCancelled();
      // The other frame was the last block's: the backend is done with it.
      if (k + 1 < n) filling = std::async(std::launch::async, fill, k + 1);
      const auto t = Clock::now();
      const Job blockJob(job.cancelFlag(), [&](double fr) { job.report((double(k) + fr) / n); });
      Image result = backend.richardsonLucy(frames[k % 2], psf, blockParams, blockJob);
      report.computeSeconds += secondsSince(t);
      if (emptying.valid()) {
        waitFor(emptying, report.writeSeconds);
        ++report.blocks;
      }
      written = std::move(result);
      emptying = std::async(std::launch::async, empty, k, std::cref(written));
      job.report(double(k + 1) / n);
    }
    waitFor(emptying, report.writeSeconds);
    ++report.blocks;
  } catch (...) {
    stop = true;
    if (filling.valid()) filling.wait();
    if (emptying.valid()) emptying.wait();
    throw;
  }
  return report;
}

BoxReader boxReader(const Image& volume) {
  if (!volume.onHost())
    throw InvalidArgument("blocked deconvolution: the volume must be on the host");
  return [&volume](const Box& box, float* out) {
    const Shape s = volume.shape(), b = box.shape();
    for (int64_t z = 0; z < b.z; ++z)
      for (int64_t y = 0; y < b.y; ++y)
        std::memcpy(out + (z * b.y + y) * b.x,
                    volume.data() + ((box.z0 + z) * s.y + box.y0 + y) * s.x + box.x0,
                    static_cast<size_t>(b.x) * sizeof(float));
  };
}

BoxWriter boxWriter(Image& volume) {
  if (!volume.onHost())
    throw InvalidArgument("blocked deconvolution: the volume must be on the host");
  return [&volume](const Box& box, const float* data) {
    const Shape s = volume.shape(), b = box.shape();
    for (int64_t z = 0; z < b.z; ++z)
      for (int64_t y = 0; y < b.y; ++y)
        std::memcpy(volume.data() + ((box.z0 + z) * s.y + box.y0 + y) * s.x + box.x0,
                    data + (z * b.y + y) * b.x, static_cast<size_t>(b.x) * sizeof(float));
  };
}

Image deconvolveBlocked(Backend& backend, const Image& volume, const Image& psf,
                        const DeconvolveParams& p, const BlockPlan& plan, const Job& job,
                        BlockedRunReport* report) {
  if (!volume.onHost())
    throw InvalidArgument("blocked deconvolution: the volume must be on the host");
  if (!(volume.shape() == plan.volume))
    throw InvalidArgument("blocked deconvolution: the plan is for another volume");
  Image out = Image::hostUninitialized(volume.shape());
  out.spacing = volume.spacing;
  const BlockedRunReport r =
      deconvolveBlocked(backend, boxReader(volume), boxWriter(out), psf, p, plan, job);
  if (report) *report = r;
  return out;
}

}  // namespace stacklens::compute
