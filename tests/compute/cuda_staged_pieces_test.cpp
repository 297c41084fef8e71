// copyForDmaInPieces (compute/cuda/host/host_copy.cuh), the staging of pageable uploads, against a
// simulated DMA engine that reads each sent piece from its staging slot some time later, as the
// link does: host code only, so it runs without a GPU wherever the CUDA backend is built.
#include <gtest/gtest.h>

#ifdef STACKLENS_HAVE_CUDA

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "compute/cuda/host/host_copy.cuh"

namespace {

using stacklens::compute::cuda::copyForDmaInPieces;
using stacklens::compute::cuda::DmaPieces;

// One copy engine: queued pieces are read from their staging in order, each after a delay longer
// than the copy threads take to stage one. A slot is read once its last queued piece has landed.
class SimulatedDma {
 public:
  explicit SimulatedDma(int slots) : queued_(slots), landed_(slots) {
    for (int s = 0; s < slots; ++s) queued_[s] = landed_[s] = 0;
    engine_ = std::thread([this] { run(); });
  }
  ~SimulatedDma() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    engine_.join();
  }

  void send(char* to, const char* staged, size_t bytes, int64_t slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back({to, staged, bytes, slot, ++queued_[slot]});
    order_.push_back(to);
    wake_.notify_one();
  }
  void waitUntilRead(int64_t slot) const {
    while (landed_[slot] < queued_[slot]) std::this_thread::yield();
  }
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
  }
  std::vector<char*> order() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return order_;
  }

 private:
  struct Piece {
    char* to;
    const char* staged;
    size_t bytes;
    int64_t slot, number;
  };
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      const Piece p = queue_.front();
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      std::memcpy(p.to, p.staged, p.bytes);
      landed_[p.slot] = p.number;
      lock.lock();
      busy_ = false;
      idle_.notify_all();
    }
  }

  std::vector<std::atomic<int64_t>> queued_, landed_;
  std::deque<Piece> queue_;
  std::vector<char*> order_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  bool stop_ = false, busy_ = false;
  std::thread engine_;
};

constexpr size_t kPiece = size_t(1) << 20;
constexpr int kSlots = 4;

DmaPieces piecesInto(std::vector<char>& staging, SimulatedDma& dma, char* to,
                     int64_t firstSlot = 0) {
  DmaPieces p;
  p.pieceBytes = kPiece;
  p.slots = kSlots;
  p.firstSlot = firstSlot;
  p.staging = [&staging](int64_t slot) { return staging.data() + size_t(slot) * kPiece; };
  p.waitUntilRead = [&dma](int64_t slot) { dma.waitUntilRead(slot); };
  p.send = [&dma, to](int64_t piece, int64_t slot, const char* staged, size_t bytes) {
    dma.send(to + size_t(piece) * kPiece, staged, bytes, slot);
  };
  return p;
}

std::vector<char> randomBytes(size_t n, unsigned seed) {
  std::mt19937 rng{seed};
  std::vector<char> v(n);
  for (char& c : v) c = char(rng());
  return v;
}

// One upload from random bytes through its own staging and simulated DMA.
struct Upload {
  Upload(size_t n, unsigned seed)
      : bytes(n), from(randomBytes(n, seed)), to(n), staging(kPiece * kSlots), dma(kSlots) {
    pieces = piecesInto(staging, dma, to.data());
  }
  void run() { copyForDmaInPieces(from.data(), bytes, pieces); }
  bool arrived() const { return std::memcmp(to.data(), from.data(), bytes) == 0; }

  size_t bytes;
  std::vector<char> from, to, staging;
  SimulatedDma dma;
  DmaPieces pieces;
};

TEST(StagedUploadPieces, BackToBackUploadsWaitForTheDmaThatLastReadEachSlot) {
  // An upload returns once its input is staged, its last pieces' DMAs still queued; the next one
  // must not refill those slots before the DMAs have read them. Sizes go round the 4 MiB of
  // staging once or more, and end inside a part. Each upload starts on slot 0, or (as
  // Context::upload does) where the last one stopped.
  for (const bool rotate : {false, true}) {
    for (const size_t bytes : {size_t(5) << 20, (size_t(6) << 20) + 12345, size_t(3) << 20}) {
      // Prepare
      std::vector<char> staging(kPiece * kSlots);
      SimulatedDma dma(kSlots);
      std::vector<std::vector<char>> from, to;
      for (unsigned k = 0; k < 3; ++k) {
        from.push_back(randomBytes(bytes, unsigned(bytes) + k));
        to.emplace_back(bytes);
      }

      // Run
      int64_t first = 0;
      for (size_t k = 0; k < from.size(); ++k) {
        copyForDmaInPieces(from[k].data(), bytes,
                           piecesInto(staging, dma, to[k].data(), rotate ? first : 0));
        first = (first + int64_t((bytes + kPiece - 1) / kPiece)) % kSlots;
      }
      dma.drain();

      // Verify
      for (size_t k = 0; k < from.size(); ++k)
        EXPECT_EQ(std::memcmp(to[k].data(), from[k].data(), bytes), 0)
            << bytes << " bytes, upload " << k << (rotate ? ", rotating slots" : "");
    }
  }
}

TEST(StagedUploadPieces, SendsEveryPieceOnceAndInOrder) {
  // Prepare
  Upload u((size_t(9) << 20) + 7, 3);

  // Run
  u.run();
  u.dma.drain();

  // Verify
  const std::vector<char*> order = u.dma.order();
  ASSERT_EQ(order.size(), 10u);
  for (size_t k = 0; k < order.size(); ++k) EXPECT_EQ(order[k], u.to.data() + k * kPiece) << k;
  EXPECT_TRUE(u.arrived());
}

TEST(StagedUploadPieces, AFailedSendIsRethrownAndStopsTheCopies) {
  // Prepare
  Upload u(size_t(12) << 20, 5);
  auto send = u.pieces.send;
  u.pieces.send = [send](int64_t piece, int64_t slot, const char* staged, size_t n) {
    if (piece == 5) throw std::runtime_error("link lost");
    send(piece, slot, staged, n);
  };

  // Run, verify
  EXPECT_THROW(u.run(), std::runtime_error);
  u.dma.drain();
  EXPECT_EQ(u.dma.order().size(), 5u);
}

TEST(StagedUploadPieces, AfterSentFollowsTheSendsOnTheCallingThread) {
  // 12 pieces through the copy threads, and one part that the calling thread copies alone.
  for (const size_t bytes : {(size_t(11) << 20) + 4097, size_t(100000)}) {
    // Prepare
    Upload u(bytes, 7);
    std::vector<int64_t> counts;
    std::vector<size_t> sentThen;
    std::vector<std::thread::id> threads;
    u.pieces.afterSent = [&](int64_t sent) {
      counts.push_back(sent);
      sentThen.push_back(u.dma.order().size());
      threads.push_back(std::this_thread::get_id());
    };

    // Run
    u.run();
    u.dma.drain();

    // Verify: increasing counts up to every piece, each of pieces already sent, all on this
    // thread
    ASSERT_FALSE(counts.empty()) << bytes;
    EXPECT_EQ(counts.back(), int64_t((bytes + kPiece - 1) / kPiece)) << bytes;
    for (size_t k = 0; k < counts.size(); ++k) {
      if (k > 0) {
        EXPECT_GT(counts[k], counts[k - 1]) << k;
      }
      EXPECT_LE(size_t(counts[k]), sentThen[k]) << k;
      EXPECT_EQ(threads[k], std::this_thread::get_id()) << k;
    }
    EXPECT_TRUE(u.arrived()) << bytes;
  }
}

TEST(StagedUploadPieces, AFailingAfterSentIsRethrownAndStopsTheCopies) {
  // Prepare
  Upload u(size_t(40) << 20, 9);
  u.pieces.afterSent = [](int64_t sent) {
    if (sent >= 2) throw std::runtime_error("launch failed");
  };

  // Run, verify: the copies stop a few pieces after the failure, not 40 (the 4 slots bound how
  // far ahead of the DMA they run, and so how many pieces are sent between two calls)
  EXPECT_THROW(u.run(), std::runtime_error);
  u.dma.drain();
  EXPECT_LT(u.dma.order().size(), 16u);
}

}  // namespace

#endif  // STACKLENS_HAVE_CUDA
