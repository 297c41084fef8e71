// One owner of an open stack's raw slices, for the viewer, its tools and live processing alike:
// each slice is read from the file once while it stays (asked for, or read ahead on the store's
// own threads), kept on the host and, once a backend has uploaded it, where that backend computes
// as well, all under one byte budget (over it, uploads go first, then host slices, each least
// recently used first). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "compute/backend.h"

namespace stacklens::compute {

class PixelPool;

// Where the raw slices come from (e.g. an io::StackReader): z slices of y × x float32 values.
struct RawSliceReader {
  Shape shape;
  Spacing spacing;
  // Writes slice z (y·x values) to out; throws on failure (naming the file). Called from several
  // threads at once, so it must be thread-safe as io::StackReader is.
  std::function<void(int64_t z, float* out)> read;
};

class SliceStore : public std::enable_shared_from_this<SliceStore> {
 public:
  // A slice's pixels, shared with whoever shows or processes them (never copied).
  using Pixels = std::shared_ptr<const std::vector<float>>;

  // readerStart runs first on each read-ahead thread (e.g. to lower its priority).
  // readAheadThreads read different slices ahead at once (a slice of a compressed format takes
  // longer to decode than to show, so one thread could not keep up with a scrub).
  SliceStore(RawSliceReader source, size_t budgetBytes, std::function<void()> readerStart = {},
             int readAheadThreads = defaultReadAheadThreads());
  ~SliceStore();  // never waits for the read-ahead threads, which may be reading
  // A quarter of the machine's hardware threads, 1 to 4: the rest are the viewer's and the
  // processing's.
  static int defaultReadAheadThreads();
  SliceStore(const SliceStore&) = delete;
  SliceStore& operator=(const SliceStore&) = delete;

  const RawSliceReader& source() const { return source_; }
  Shape sliceShape() const { return {1, source_.shape.y, source_.shape.x}; }

  // Slice z when kept, else null; a hit makes it the most recent.
  Pixels find(int64_t z);
  bool contains(int64_t z) const;
  // Slice z: kept, or read now on the caller's thread; while another thread reads it, waits for
  // that read (one read per slice at a time). Throws what the source throws.
  Pixels get(int64_t z);
  // Reads these slices (those neither kept nor being read) on the read-ahead threads, in this
  // order (each thread takes the next), replacing earlier requests; a store that is not held by a
  // shared_ptr reads nothing ahead. Nothing is uploaded: that happens in onBackend(), on the
  // backend's thread.
  void readAhead(const std::vector<int64_t>& zs);
  // Keeps a slice read elsewhere (the opener's first slice). The newest slice is always kept,
  // even alone over the budget.
  void insert(int64_t z, Pixels pixels);

  // Slices read from now on are page-locked for backend's transfers (CUDA: one DMA per upload,
  // no staging copy); null: pageable.
  void pageLockFor(std::shared_ptr<Backend> backend);
  // Slice z as a host image sharing the kept pixels (read-only by contract: the viewer shows the
  // same memory).
  Image hostImage(int64_t z);
  // Slice z where backend computes: the kept upload, else one queued upload (DeviceControl::
  // uploadAsync) kept beside the host copy and counted in the budget. Call it from the thread
  // that uses backend. A host backend gets the host image.
  Image onBackend(int64_t z, Backend& backend);
  bool uploaded(int64_t z) const;
  // Forgets the uploads (their backend is going away); the host copies stay.
  void dropUploads();

  // While a Hold lives, slices [from, to] are not evicted (a running frame uses them).
  class Hold {
   public:
    Hold(SliceStore& store, int64_t from, int64_t to);
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    SliceStore& store_;
    int64_t from_, to_;
  };

  size_t budget() const { return budget_; }
  size_t bytes() const;        // host and device bytes of the kept slices
  size_t deviceBytes() const;  // of those, on a device
  size_t count() const;        // slices kept
  int fileReads() const;       // slices read from the source so far
  void clear();

 private:
  struct Entry {
    Pixels host;
    Image device;               // empty until uploaded
    const Backend* uploader{};  // the backend that made device
    std::list<int64_t>::iterator order;
  };
  void touch(Entry& e);
  void keep(int64_t z, Pixels pixels);  // mutex held
  void trim();                          // mutex held
  void forgetUpload(Entry& e);          // mutex held
  bool held(int64_t z) const;           // mutex held
  bool keptOrBeingRead(int64_t z) const;
  struct ReadAheadQueue;  // shared with the read-ahead threads, which may outlive us
  static void readAheadLoop(std::shared_ptr<ReadAheadQueue> queue, std::weak_ptr<SliceStore> store);

  RawSliceReader source_;
  size_t budget_;
  std::shared_ptr<PixelPool> pool_;

  mutable std::mutex mutex_;
  std::condition_variable readDone_;
  std::map<int64_t, Entry> entries_;
  std::list<int64_t> order_;   // most recently used first
  std::set<int64_t> reading_;  // being read by some thread
  std::vector<std::pair<int64_t, int64_t>> holds_;
  std::shared_ptr<Backend> pageLockFor_;
  size_t bytes_ = 0, deviceBytes_ = 0;
  int fileReads_ = 0;
  std::shared_ptr<ReadAheadQueue> readAhead_;
  std::function<void()> readerStart_;
  int readAheadThreads_;
  bool readerStarted_ = false;  // the threads start at the first readAhead()
};

}  // namespace stacklens::compute
