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

Image probeInput(Shape shape = kProbe) {
  Image im = Image::hostUninitialized(shape);
  std::fill(im.data(), im.data() + shape.count(), 1.f);  // touched: no first-touch faults timed
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
  double best = 0;
  // Images of 4, 16 and 64 MiB: the rate depends on the size (staging, the driver's paths), and
  // the sweep's images span these.
  for (const int64_t side : {1024, 2048, 4096}) {
    const Shape shape{1, side, side};
    const Image host = probeInput(shape);
    // Back into a touched buffer, as the sweep's downloads: a new one's page faults are not the
    // link's time.
    Image back = probeInput(shape);
    b.device().downloadInto(b.upload(host), back);  // warm-up: device allocation, staging
    double up = 1e300, down = 1e300;
    for (int i = 0; i < kTries; ++i) {
      auto t0 = Clock::now();
      const Image onDevice = b.upload(host);
      b.synchronize();
      up = std::min(up, since(t0));
      t0 = Clock::now();
      b.device().downloadInto(onDevice, back);
      b.synchronize();
      down = std::min(down, since(t0));
    }
    best = std::max(best, double(host.bytes()) / std::min(up, down));
  }
  // The fastest rate seen, in either direction and at any size, for every byte: the floor stays
  // below the time whichever way an op's bytes go and whatever its size.
  return best;
}

}  // namespace stacklens::compute::lab
