// Memory and host-link bandwidth probes (see bandwidth.h).
#include "compute/lab/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace stacklens::compute::lab {
namespace {

using Clock = std::chrono::steady_clock;
constexpr Shape kProbe{16, 1024, 1024};
constexpr int kTries = 3;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Image probeInput() {
  Image im = Image::hostUninitialized(kProbe);
  std::fill(im.data(), im.data() + kProbe.count(), 1.f);  // touched: no first-touch faults timed
  return im;
}

// A 64 MiB copy in `threads` contiguous parts, one per thread.
double hostCopyBandwidth(int threads) {
  const size_t count = size_t(kProbe.count());
  std::vector<float> from(count, 1.f), to(count, 0.f);  // touched: no first-touch faults timed
  const int n = std::max(1, threads);
  auto copyOnce = [&] {
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t)
      pool.emplace_back([&, t] {
        const size_t begin = count * size_t(t) / size_t(n), end = count * size_t(t + 1) / size_t(n);
        std::memcpy(to.data() + begin, from.data() + begin, (end - begin) * sizeof(float));
      });
    for (auto& th : pool) th.join();
  };
  copyOnce();
  double best = 1e300;
  for (int i = 0; i < kTries; ++i) {
    const auto t0 = Clock::now();
    copyOnce();
    best = std::min(best, since(t0));
  }
  return 2.0 * double(count * sizeof(float)) / best;
}

}  // namespace

double measureMemoryBandwidth(Backend& b) {
  if (b.name() == "cpu") return hostCopyBandwidth(b.threads());
  const Image input = b.upload(probeInput());
  const ProjectParams sum{Projection::Sum};
  b.project(input, sum);  // warm-up: allocations, thread start-up
  b.synchronize();
  double best = 1e300;
  for (int i = 0; i < kTries; ++i) {
    const auto t0 = Clock::now();
    b.project(input, sum);
    b.synchronize();
    best = std::min(best, since(t0));
  }
  const double bytes = 4.0 * double(kProbe.count() + kProbe.sliceCount());
  return bytes / best;
}

double measureLinkBandwidth(Backend& b) {
  if (b.name() == "cpu") return 0;
  const Image host = probeInput();
  b.download(b.upload(host));  // warm-up: the device allocation and staging buffers
  double best = 1e300;
  for (int i = 0; i < kTries; ++i) {
    const auto t0 = Clock::now();
    const Image back = b.download(b.upload(host));
    b.synchronize();
    best = std::min(best, since(t0));
  }
  return 2.0 * double(host.bytes()) / best;
}

}  // namespace stacklens::compute::lab
