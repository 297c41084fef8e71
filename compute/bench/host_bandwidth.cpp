// The host's copy bandwidth (see host_bandwidth.h).
#include "compute/bench/host_bandwidth.h"

#include <chrono>
#include <cstring>
#include <vector>

#include "compute/bench/timing_summary.h"
#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/thread_pool.h"

namespace stacklens::compute::bench {

double hostCopyBandwidth(int threads) {
  constexpr size_t kBytes = size_t{256} << 20;  // far past any last-level cache
  constexpr size_t kPiece = size_t{1} << 20;    // per work item: large enough to stream
  cpu::ThreadPool pool(threads);
  const size_t n = kBytes / sizeof(float);
  cpu::FftwFloats from = cpu::allocFloats(n), to = cpu::allocFloats(n);
  std::memset(from.get(), 1, kBytes);
  auto copy = [&] {
    const auto start = std::chrono::steady_clock::now();
    pool.parallelFor(int64_t(kBytes / kPiece), [&](int64_t p0, int64_t p1) {
      std::memcpy(reinterpret_cast<char*>(to.get()) + p0 * kPiece,
                  reinterpret_cast<const char*>(from.get()) + p0 * kPiece,
                  size_t(p1 - p0) * kPiece);
    });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  copy();
  std::vector<double> seconds;
  for (int i = 0; i < 5; ++i) seconds.push_back(copy());
  return 2.0 * double(kBytes) / summarize(seconds).median;
}

}  // namespace stacklens::compute::bench
