// The slice store: reads (one per slice at a time), the read-ahead thread, host copies from a
// recycling pool that page-locks them for the live backend, uploads kept beside them, eviction by
// bytes.
#include "compute/slice_store.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <thread>

#include "compute/pixel_pool.h"

namespace stacklens::compute {
namespace {

size_t pixelBytes(const SliceStore::Pixels& p) { return p ? p->size() * sizeof(float) : 0; }

bool onDevice(const Image& image) { return !image.empty() && !image.onHost(); }

}  // namespace

// The read-ahead threads are detached: each holds the store only while it reads a slice, so the
// last owner (often the GUI thread, opening another stack) never waits for a read in progress.
struct SliceStore::ReadAheadQueue {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<int64_t> slices;
  bool stop = false;
};

SliceStore::SliceStore(RawSliceReader source, size_t budgetBytes, std::function<void()> readerStart,
                       int readAheadThreads)
    : source_(std::move(source)),
      budget_(budgetBytes),
      pool_(std::make_shared<PixelPool>()),
      readAhead_(std::make_shared<ReadAheadQueue>()),
      readerStart_(std::move(readerStart)),
      readAheadThreads_(std::max(1, readAheadThreads)) {
  if (!source_.read) throw InvalidArgument("slice store: no slice source");
}

int SliceStore::defaultReadAheadThreads() {
  return std::clamp(int(std::thread::hardware_concurrency() / 4), 1, 4);
}

SliceStore::~SliceStore() {
  {
    std::lock_guard<std::mutex> lock(readAhead_->mutex);
    readAhead_->stop = true;
    readAhead_->slices.clear();
  }
  readAhead_->changed.notify_all();
}

void SliceStore::readAhead(const std::vector<int64_t>& zs) {
  std::weak_ptr<SliceStore> self = weak_from_this();
  if (self.expired()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!readerStarted_) {
      readerStarted_ = true;
      for (int i = 0; i < readAheadThreads_; ++i)
        std::thread([queue = readAhead_, self, start = readerStart_] {
          if (start) start();
          readAheadLoop(queue, self);
        }).detach();
    }
  }
  {
    std::lock_guard<std::mutex> lock(readAhead_->mutex);
    readAhead_->slices.clear();
    for (int64_t z : zs)
      if (z >= 0 && z < source_.shape.z && !contains(z)) readAhead_->slices.push_back(z);
  }
  readAhead_->changed.notify_all();
}

void SliceStore::readAheadLoop(std::shared_ptr<ReadAheadQueue> queue,
                               std::weak_ptr<SliceStore> store) {
  std::unique_lock<std::mutex> lock(queue->mutex);
  for (;;) {
    queue->changed.wait(lock, [&] { return queue->stop || !queue->slices.empty(); });
    if (queue->stop) return;
    const int64_t z = queue->slices.front();
    queue->slices.pop_front();
    lock.unlock();
    {
      // Let go before the queue's lock is taken again: the store's destructor takes it.
      std::shared_ptr<SliceStore> alive = store.lock();
      // A slice another thread reads already is not waited for: this thread takes the next.
      if (alive && !alive->keptOrBeingRead(z)) {
        try {
          alive->get(z);
        } catch (...) {
          // A failed read-ahead is forgotten: whoever asks for the slice reads it again and
          // reports the error itself.
        }
      }
    }
    lock.lock();
  }
}

void SliceStore::touch(Entry& e) { order_.splice(order_.begin(), order_, e.order); }

SliceStore::Pixels SliceStore::find(int64_t z) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(z);
  if (it == entries_.end()) return nullptr;
  touch(it->second);
  return it->second.host;
}

bool SliceStore::keptOrBeingRead(int64_t z) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.count(z) != 0 || reading_.count(z) != 0;
}

bool SliceStore::contains(int64_t z) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.count(z) != 0;
}

SliceStore::Pixels SliceStore::get(int64_t z) {
  if (z < 0 || z >= source_.shape.z)
    throw InvalidArgument("slice " + std::to_string(z) + " is outside the stack's " +
                          std::to_string(source_.shape.z) + " slices");
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (auto it = entries_.find(z); it != entries_.end()) {
      touch(it->second);
      return it->second.host;
    }
    if (!reading_.count(z)) break;
    readDone_.wait(lock);  // another thread reads it; a failed read leaves it to this one
  }
  reading_.insert(z);
  const std::shared_ptr<Backend> lockFor = pageLockFor_;
  lock.unlock();
  std::shared_ptr<std::vector<float>> pixels;
  std::exception_ptr error;
  try {
    pixels = pool_->acquire(static_cast<size_t>(source_.shape.sliceCount()), lockFor);
    source_.read(z, pixels->data());
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  reading_.erase(z);
  ++fileReads_;
  readDone_.notify_all();
  if (error) std::rethrow_exception(error);
  keep(z, pixels);
  return pixels;
}

void SliceStore::insert(int64_t z, Pixels pixels) {
  std::lock_guard<std::mutex> lock(mutex_);
  keep(z, std::move(pixels));
}

void SliceStore::keep(int64_t z, Pixels pixels) {
  if (auto it = entries_.find(z); it != entries_.end()) {
    forgetUpload(it->second);
    bytes_ -= pixelBytes(it->second.host);
    it->second.host = std::move(pixels);
    bytes_ += pixelBytes(it->second.host);
    touch(it->second);
  } else {
    order_.push_front(z);
    Entry& e = entries_[z];
    e.host = std::move(pixels);
    e.order = order_.begin();
    bytes_ += pixelBytes(e.host);
  }
  trim();
}

bool SliceStore::held(int64_t z) const {
  return std::any_of(holds_.begin(), holds_.end(),
                     [z](const auto& h) { return z >= h.first && z <= h.second; });
}

void SliceStore::trim() {
  // Uploads go first, least recent first: one is made again from its host copy at the link's
  // speed, where a host slice costs a read of the file (a cyclic scrub of a stack just over the
  // budget would otherwise read every step's slice). The newest slice stays even alone over the
  // budget: it is the one about to be shown.
  for (auto it = order_.end(); bytes_ > budget_ && it != order_.begin();) {
    --it;
    if (it == order_.begin()) break;
    if (!held(*it)) forgetUpload(entries_.find(*it)->second);
  }
  for (auto it = order_.end(); bytes_ > budget_ && it != order_.begin();) {
    --it;
    if (it == order_.begin()) break;
    const int64_t z = *it;
    if (held(z)) continue;
    auto e = entries_.find(z);
    forgetUpload(e->second);
    bytes_ -= pixelBytes(e->second.host);
    entries_.erase(e);
    it = order_.erase(it);
  }
}

void SliceStore::forgetUpload(Entry& e) {
  if (onDevice(e.device)) {
    bytes_ -= e.device.bytes();
    deviceBytes_ -= e.device.bytes();
  }
  e.device = Image();
  e.uploader = nullptr;
}

void SliceStore::pageLockFor(std::shared_ptr<Backend> backend) {
  std::lock_guard<std::mutex> lock(mutex_);
  pageLockFor_ = std::move(backend);
}

Image SliceStore::hostImage(int64_t z) {
  const Pixels pixels = get(z);
  // Image's storage is mutable; the operations only read their input.
  Image image(sliceShape(), Location::Host,
              std::shared_ptr<float>(pixels, const_cast<float*>(pixels->data())));
  image.spacing = source_.spacing;
  return image;
}

Image SliceStore::onBackend(int64_t z, Backend& backend) {
  Image host = hostImage(z);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(z);
    if (it != entries_.end() && !it->second.device.empty() && it->second.uploader == &backend) {
      touch(it->second);
      return it->second.device;
    }
  }
  // Outside the lock: an upload from pageable memory waits for its staging copies.
  Image device = backend.device().uploadAsync(host);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(z);
  if (it == entries_.end() || !it->second.host || it->second.host->data() != host.data())
    return device;  // evicted or replaced meanwhile: used once, not kept
  Entry& e = it->second;
  forgetUpload(e);
  e.device = device;
  e.uploader = &backend;
  if (onDevice(device)) {
    bytes_ += device.bytes();
    deviceBytes_ += device.bytes();
  }
  touch(e);
  trim();
  return device;
}

bool SliceStore::uploaded(int64_t z) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(z);
  return it != entries_.end() && !it->second.device.empty();
}

void SliceStore::dropUploads() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [z, e] : entries_) forgetUpload(e);
}

SliceStore::Hold::Hold(SliceStore& store, int64_t from, int64_t to)
    : store_(store), from_(from), to_(to) {
  std::lock_guard<std::mutex> lock(store_.mutex_);
  store_.holds_.emplace_back(from_, to_);
}

SliceStore::Hold::~Hold() {
  std::lock_guard<std::mutex> lock(store_.mutex_);
  auto& holds = store_.holds_;
  holds.erase(std::find(holds.begin(), holds.end(), std::make_pair(from_, to_)));
  store_.trim();
}

size_t SliceStore::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

size_t SliceStore::deviceBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return deviceBytes_;
}

size_t SliceStore::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

int SliceStore::fileReads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fileReads_;
}

void SliceStore::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  order_.clear();
  bytes_ = deviceBytes_ = 0;
}

}  // namespace stacklens::compute
