// copyParallel: a memcpy cut into page-aligned parts, one per copy thread.
#include "compute/cuda/host/host_copy.cuh"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>

#include "compute/cpu/thread_pool.h"
#include "compute/cuda/tuning/transfers.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr size_t kMaxThreads = tuning::TransferPolicy::parallelCopyMaxThreads;

// Two sets of copy threads, started on the first parallel copies and kept: starting threads for
// each staged piece would cost more than copying it. Two, so that an upload's copies and a
// download's (the stack pipeline runs both at once) do not wait for each other. Never destroyed,
// as copies may run from other static objects' destructors at exit.
struct CopyThreads {
  std::mutex busy;
  cpu::ThreadPool pool{static_cast<int>(
      std::min<size_t>(kMaxThreads, std::max(1u, std::thread::hardware_concurrency())))};
};
constexpr int kCopyThreadSets = 2;

CopyThreads& copyThreads(int set) {
  static CopyThreads* sets = new CopyThreads[kCopyThreadSets];
  return sets[set];
}

// Runs body on a set of copy threads that no other copy is using, waiting for the first set
// when both are.
template <class Body>
void onFreeCopyThreads(Body body) {
  for (int set = 0; set < kCopyThreadSets; ++set) {
    std::unique_lock<std::mutex> lock(copyThreads(set).busy, std::try_to_lock);
    if (lock.owns_lock()) return body(copyThreads(set).pool);
  }
  std::lock_guard<std::mutex> lock(copyThreads(0).busy);
  body(copyThreads(0).pool);
}

// memcpy with streaming (non-temporal) stores of 16 bytes where the host has them (SSE2: every
// x86-64); the unaligned head and the tail by memcpy.
void copyStreaming(char* d, const char* s, size_t bytes) {
#if defined(__SSE2__)
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + i, s + i, bytes - i);
  _mm_sfence();  // the streamed stores are visible before the DMA that follows is queued
#else
  std::memcpy(d, s, bytes);
#endif
}

// Cuts the copy into page-aligned parts, one per copy thread, each copied by `copy`.
template <class Copy>
void copyInParts(void* dst, const void* src, size_t bytes, Copy copy) {
  constexpr size_t kPiece = tuning::TransferPolicy::parallelCopyPieceBytes;
  const size_t parts = std::min<size_t>(
      {kMaxThreads, std::max<size_t>(1, std::thread::hardware_concurrency()), bytes / kPiece});
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (parts <= 1) {
    copy(d, s, bytes);
    return;
  }
  const size_t part = (bytes / parts + 4095) / 4096 * 4096;
  const int64_t count = static_cast<int64_t>((bytes + part - 1) / part);
  onFreeCopyThreads([&](cpu::ThreadPool& pool) {
    pool.parallelFor(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const size_t at = size_t(i) * part;
        copy(d + at, s + at, std::min(part, bytes - at));
      }
    });
  });
}

}  // namespace

void copyParallel(void* dst, const void* src, size_t bytes) {
  copyInParts(dst, src, bytes, [](char* d, const char* s, size_t n) { std::memcpy(d, s, n); });
}

void copyParallelForDma(void* dst, const void* src, size_t bytes) {
  copyInParts(dst, src, bytes, copyStreaming);
}

}  // namespace stacklens::compute::cuda
