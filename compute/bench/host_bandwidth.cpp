// The host's copy bandwidth (see host_bandwidth.h).
#include "compute/bench/host_bandwidth.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <chrono>
#include <cstring>
#include <vector>

#include "compute/bench/timing_summary.h"
#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/thread_pool.h"

namespace stacklens::compute::bench {
namespace {

// A copy whose stores bypass the caches where the CPU has them (SSE2), so that the destination
// is not read before it is written: the memory's own rate, whichever way the C library's memcpy
// would copy a piece of this size. `to` and `from` are 16-byte aligned.
void streamCopy(float* to, const float* from, size_t n) {
#if defined(__SSE2__)
  size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_stream_ps(to + i, _mm_load_ps(from + i));
  for (; i < n; ++i) to[i] = from[i];
  _mm_sfence();
#else
  std::memcpy(to, from, n * sizeof(float));
#endif
}

}  // namespace

double hostCopyBandwidth(int threads) {
  // Past the last-level caches of current servers (a few hundred MiB), so the copy streams DRAM.
  constexpr size_t kBytes = size_t{1} << 30;
  // Pieces handed out one by one, so that a thread held up by another process costs little.
  constexpr size_t kPiece = size_t{4} << 20;
  cpu::ThreadPool pool(threads);
  const size_t n = kBytes / sizeof(float), piece = kPiece / sizeof(float);
  cpu::FftwFloats from = cpu::allocFloats(n), to = cpu::allocFloats(n);
  std::memset(from.get(), 1, kBytes);
  auto copy = [&] {
    const auto start = std::chrono::steady_clock::now();
    pool.parallelFor(int64_t(n / piece), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        streamCopy(to.get() + size_t(p) * piece, from.get() + size_t(p) * piece, piece);
    });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  copy();
  std::vector<double> seconds;
  for (int i = 0; i < 5; ++i) seconds.push_back(copy());
  return 2.0 * double(kBytes) / summarize(seconds).median;
}

}  // namespace stacklens::compute::bench
