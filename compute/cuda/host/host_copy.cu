// copyParallel, a memcpy cut into page-aligned parts, one per copy thread; copyForDmaInPieces,
// the staging of pageable uploads, sent to the DMA piece by piece.
#include "compute/cuda/host/host_copy.cuh"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "compute/cuda/tuning/host_copies.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr size_t kMaxThreads = tuning::HostCopyPolicy::maxThreads;

void cpuRelax() {
#if defined(__SSE2__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Kept copy threads that, after a copy, poll for the next one for
// HostCopyPolicy::pollMicroseconds before they sleep (see there). run() returns as soon as the
// work is done: a thread that wakes after the calling thread's own share has run out does not
// join, so a late wake-up never delays the copy.
class CopyCrew {
 public:
  explicit CopyCrew(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { loop(); });
  }

  // Runs work on the calling thread and on up to `helpers` of the kept threads, and returns once
  // every call of it has returned. work takes its share from a common pool of tasks, so any
  // number of callers completes it.
  void run(int helpers, const std::function<void()>& work) { run(helpers, work, work); }

  // The same, the calling thread running `own` instead of work; own must see work done.
  void run(int helpers, const std::function<void()>& work, const std::function<void()>& own) {
    job_ = &work;
    helpers_.store(helpers, std::memory_order_relaxed);
    entered_.fetch_and(~kClosed, std::memory_order_acq_rel);  // publishes job_ and helpers_
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    if (sleepers_.load(std::memory_order_acquire) > 0) wake_.notify_all();
    own();
    entered_.fetch_or(kClosed, std::memory_order_acq_rel);
    while ((entered_.load(std::memory_order_acquire) & ~kClosed) != 0) cpuRelax();
  }

 private:
  // entered_'s flag bit: set while no job is open; its other bits count the threads inside one.
  static constexpr int kClosed = 1 << 30;

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::microseconds(tuning::HostCopyPolicy::pollMicroseconds);
      while (generation_.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() < until)
        cpuRelax();
      if (generation_.load(std::memory_order_acquire) == seen) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1, std::memory_order_acq_rel);
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        sleepers_.fetch_sub(1, std::memory_order_acq_rel);
      }
      seen = generation_.load(std::memory_order_acquire);
      // Joins the open job, if any, as one of its first `helpers` threads.
      const int before = entered_.fetch_add(1, std::memory_order_acq_rel);
      if ((before & kClosed) == 0 && before < helpers_.load(std::memory_order_relaxed)) (*job_)();
      entered_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> sleepers_{0}, entered_{kClosed}, helpers_{0};
  const std::function<void()>* job_ = nullptr;
};

// Two sets of copy threads, started on the first parallel copies and kept: starting threads for
// each staged piece would cost more than copying it. Two, so that an upload's copies and a
// download's (the stack pipeline runs both at once) do not wait for each other. Never destroyed,
// as copies may run from other static objects' destructors at exit.
struct CopyThreads {
  std::mutex busy;
  CopyCrew crew{static_cast<int>(
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
    if (lock.owns_lock()) return body(copyThreads(set).crew);
  }
  std::lock_guard<std::mutex> lock(copyThreads(0).busy);
  body(copyThreads(0).crew);
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

// copyForDmaInPieces' shared state: the copy threads take parts in input order, count each
// piece's copied parts, and whoever completes a piece sends every completed piece that is next in
// order.
class PieceSender {
 public:
  PieceSender(const char* src, size_t bytes, const DmaPieces& pieces)
      : src_(src),
        bytes_(bytes),
        p_(pieces),
        pieceCount_(int64_t((bytes + pieces.pieceBytes - 1) / pieces.pieceBytes)),
        partsDone_(new std::atomic<int64_t>[size_t(pieceCount_)]),
        ready_(size_t(pieceCount_), false) {
    for (int64_t k = 0; k < pieceCount_; ++k) partsDone_[size_t(k)] = 0;
  }

  int64_t parts() const { return int64_t((bytes_ + kPart - 1) / kPart); }

  // One copy thread's work: parts until none are left or a send failed.
  void work() {
    for (;;) {
      const int64_t part = nextPart_.fetch_add(1);
      if (part >= parts() || failed_) return;
      try {
        copyPart(part);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
    }
  }

  // The calling thread's work when pieces.afterSent is set: afterSent each time more pieces have
  // been sent, until every piece has been, and between its calls parts among the first
  // `ownParts`, as work(). With copy threads the calling thread takes parts of the first half
  // only (they may wake late), so that the last pieces' calls come as soon as they are sent, not
  // after a part's copy; alone it takes them all.
  void workAndFollow(int64_t ownParts) {
    int64_t seen = 0;
    auto follow = [&] {
      const int64_t sent = sent_.load();
      if (sent == seen) return false;
      seen = sent;
      p_.afterSent(sent);
      return true;
    };
    try {
      while (!failed_) {
        if (follow()) continue;
        const int64_t part = nextPart_.load() < ownParts ? nextPart_.fetch_add(1) : parts();
        if (part < parts()) {
          copyPart(part);
          continue;
        }
        while (seen < pieceCount_ && !failed_)
          if (!follow()) cpuRelax();
        return;
      }
    } catch (...) {
      fail(std::current_exception());
    }
  }

  void rethrowFailure() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Parts are small enough that the copy threads share each piece.
  static constexpr size_t kPart = tuning::HostCopyPolicy::dmaPartBytes;

  void copyPart(int64_t part) {
    const size_t at = size_t(part) * kPart;
    const int64_t piece = int64_t(at / p_.pieceBytes);
    const int64_t slot = slotOf(piece);
    // The slot's last DMA may be this call's (sent first, then waited for) or an earlier call's.
    if (piece >= p_.slots && !waitUntilSent(piece - p_.slots)) return;
    p_.waitUntilRead(slot);
    const size_t inPiece = at - size_t(piece) * p_.pieceBytes;
    copyStreaming(p_.staging(slot) + inPiece, src_ + at, std::min(kPart, bytes_ - at));
    if (partsDone_[size_t(piece)].fetch_add(1) + 1 == partsIn(piece)) sendCompleted(piece);
  }

  int64_t slotOf(int64_t piece) const { return (p_.firstSlot + piece) % p_.slots; }

  int64_t partsIn(int64_t piece) const {
    const size_t begin = size_t(piece) * p_.pieceBytes;
    const size_t end = std::min(begin + p_.pieceBytes, bytes_);
    return int64_t((end - 1) / kPart - begin / kPart + 1);
  }

  // Sends the piece and any completed ones after it, once those before it are sent.
  void sendCompleted(int64_t piece) {
    std::lock_guard<std::mutex> lock(sendMutex_);
    ready_[size_t(piece)] = true;
    for (int64_t k = sent_; k < pieceCount_ && ready_[size_t(k)]; k = sent_) {
      const size_t begin = size_t(k) * p_.pieceBytes;
      p_.send(k, slotOf(k), p_.staging(slotOf(k)), std::min(p_.pieceBytes, bytes_ - begin));
      sent_ = k + 1;
    }
  }

  // The slot's previous piece has to be sent before it can be waited for: false if a send failed
  // meanwhile.
  bool waitUntilSent(int64_t piece) {
    while (sent_ <= piece) {
      if (failed_) return false;
      std::this_thread::yield();
    }
    return true;
  }

  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(sendMutex_);
    if (!error_) error_ = e;
    failed_ = true;
  }

  const char* src_;
  size_t bytes_;
  const DmaPieces& p_;
  int64_t pieceCount_;
  std::unique_ptr<std::atomic<int64_t>[]> partsDone_;
  std::vector<bool> ready_;  // guarded by sendMutex_
  std::mutex sendMutex_;
  std::atomic<int64_t> nextPart_{0}, sent_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;  // guarded by sendMutex_
};

}  // namespace

void copyForDmaInPieces(const void* src, size_t bytes, const DmaPieces& pieces) {
  if (bytes == 0) return;
  PieceSender sender(static_cast<const char*>(src), bytes, pieces);
  const int64_t threads = std::min<int64_t>(
      {int64_t(kMaxThreads), int64_t(std::max(1u, std::thread::hardware_concurrency())),
       sender.parts()});
  const std::function<void()> work = [&] { sender.work(); };
  const std::function<void()> own = [&] {
    if (pieces.afterSent)
      sender.workAndFollow(threads <= 1 ? sender.parts() : sender.parts() / 2);
    else
      sender.work();
  };
  if (threads <= 1) {
    own();
  } else {
    onFreeCopyThreads([&](CopyCrew& crew) { crew.run(int(threads - 1), work, own); });
  }
  sender.rethrowFailure();
}

void copyParallel(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPiece = tuning::HostCopyPolicy::minPartBytes;
  const size_t parts = std::min<size_t>(
      {kMaxThreads, std::max<size_t>(1, std::thread::hardware_concurrency()), bytes / kPiece});
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (parts <= 1) {
    std::memcpy(d, s, bytes);
    return;
  }
  const size_t part = (bytes / parts + 4095) / 4096 * 4096;
  const int64_t count = static_cast<int64_t>((bytes + part - 1) / part);
  std::atomic<int64_t> next{0};
  onFreeCopyThreads([&](CopyCrew& crew) {
    crew.run(int(count - 1), [&] {
      for (int64_t i; (i = next.fetch_add(1)) < count;) {
        const size_t at = size_t(i) * part;
        std::memcpy(d + at, s + at, std::min(part, bytes - at));
      }
    });
  });
}

}  // namespace stacklens::compute::cuda
