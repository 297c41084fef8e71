// Live processing: the raw-slice store (read once, uploaded once, LRU by bytes), the read-ahead
// thread.
#include "compute/live_processor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

HostBufferPool::HostBufferPool(std::shared_ptr<Backend> backend, Shape shape, size_t maxFree)
    : backend_(std::move(backend)), shape_(shape), maxFree_(maxFree) {}

Image HostBufferPool::acquire() {
  Image owner;
  std::vector<Image> surplus;  // freed here, after the lock, on the thread that acquires
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      owner = std::move(free_.back());
      free_.pop_back();
    }
    while (free_.size() > maxFree_) {
      surplus.push_back(std::move(free_.back()));
      free_.pop_back();
    }
  }
  if (owner.empty()) {
    owner = backend_->device().pinnedHost(shape_);
    std::lock_guard<std::mutex> lock(mutex_);
    ++allocations_;
  }
  // The handed-out image shares the pointer; when its last copy goes, the owner returns here
  // (or is freed, when the pool is gone or full).
  float* p = owner.data();
  std::weak_ptr<HostBufferPool> pool = weak_from_this();
  std::shared_ptr<float> storage(p, [pool, owner](float*) mutable {
    if (auto alive = pool.lock()) alive->giveBack(std::move(owner));
  });
  return Image(shape_, Location::Host, std::move(storage));
}

size_t HostBufferPool::freeBuffers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

void HostBufferPool::giveBack(Image owner) {
  // Always kept: releasing page-locked memory (cudaFreeHost) may wait for the device, and the
  // last copy of an image may go on the GUI thread. acquire() frees the surplus.
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(owner));
}

LiveProcessor::LiveProcessor(std::shared_ptr<Backend> backend, SliceSource source,
                             size_t rawBudgetBytes, std::function<void()> readerStart)
    : backend_(std::move(backend)), source_(std::move(source)), budget_(rawBudgetBytes) {
  if (!backend_) throw InvalidArgument("live processing: no backend");
  if (!source_.read) throw InvalidArgument("live processing: no slice source");
  if (source_.shape.empty()) throw InvalidArgument("live processing: the stack is empty");
  const Shape slice{1, source_.shape.y, source_.shape.x};
  rawPool_ = std::make_shared<HostBufferPool>(backend_, slice, 3);
  resultPool_ = std::make_shared<HostBufferPool>(backend_, slice, 4);
  reader_ = std::thread([this, start = std::move(readerStart)] {
    if (start) start();
    readerLoop();
  });
}

LiveProcessor::~LiveProcessor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  changed_.notify_all();
  reader_.join();
}

size_t LiveProcessor::entryBytes(const Entry& e) const {
  size_t n = e.host.bytes();
  if (!e.device.empty() && !e.device.onHost()) n += e.device.bytes();
  return n;
}

void LiveProcessor::readerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const int64_t z = queue_.front();
    queue_.pop_front();
    if (entries_.count(z)) continue;
    entries_[z].state = Entry::State::Reading;  // process() waits for it instead of reading too
    lock.unlock();
    Image host;
    bool ok = true;
    try {
      host = rawPool_->acquire();
      host.spacing = source_.spacing;
      source_.read(z, host.data());
    } catch (...) {
      ok = false;
    }
    lock.lock();
    ++fileReads_;
    if (ok) {
      Entry& e = entries_[z];
      e.state = Entry::State::Ready;
      e.host = std::move(host);
      bytes_ += entryBytes(e);
      lru_.push_front(z);  // about to be shown
      trim(z, z);
    } else {
      // A failed read-ahead is forgotten: process() reads again and reports the error itself.
      entries_.erase(z);
    }
    changed_.notify_all();
  }
}

LiveProcessor::Entry& LiveProcessor::hostSlice(std::unique_lock<std::mutex>& lock, int64_t z) {
  for (;;) {
    auto it = entries_.find(z);
    if (it == entries_.end()) break;
    if (it->second.state == Entry::State::Ready) {
      lru_.remove(z);
      lru_.push_front(z);
      return it->second;
    }
    changed_.wait(lock);  // being read ahead right now
  }
  // Not read yet: read it on this thread.
  entries_[z].state = Entry::State::Reading;
  lock.unlock();
  Image host;
  std::exception_ptr error;
  try {
    host = rawPool_->acquire();
    host.spacing = source_.spacing;
    source_.read(z, host.data());
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  ++fileReads_;
  if (error) {
    entries_.erase(z);
    changed_.notify_all();
    std::rethrow_exception(error);
  }
  Entry& e = entries_[z];
  e.state = Entry::State::Ready;
  e.host = std::move(host);
  bytes_ += entryBytes(e);
  lru_.push_front(z);
  changed_.notify_all();
  return e;
}

void LiveProcessor::trim(int64_t keepFrom, int64_t keepTo) {
  for (auto it = lru_.end(); bytes_ > budget_ && it != lru_.begin();) {
    --it;
    const int64_t z = *it;
    if (z >= keepFrom && z <= keepTo) continue;  // in use by the running frame
    auto e = entries_.find(z);
    if (e == entries_.end() || e->second.state != Entry::State::Ready) continue;
    bytes_ -= entryBytes(e->second);
    if (!e->second.device.empty() && !e->second.device.onHost())
      deviceBytes_ -= e->second.device.bytes();
    entries_.erase(e);
    it = lru_.erase(it);
  }
}

void LiveProcessor::readAhead(const std::vector<int64_t>& zs) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.clear();
    for (int64_t z : zs)
      if (z >= 0 && z < source_.shape.z && !entries_.count(z)) queue_.push_back(z);
  }
  changed_.notify_all();
}

LiveProcessor::Frame LiveProcessor::process(int64_t z, const Pipeline& pipeline, const Job& job) {
  pipeline.validate();
  if (z < 0 || z >= source_.shape.z)
    throw InvalidArgument("slice " + std::to_string(z) + " is outside the stack's " +
                          std::to_string(source_.shape.z) + " slices");
  const Clock::time_point start = Clock::now();
  const int64_t half = pipeline.slabHalfWidth();
  const int64_t z0 = std::max<int64_t>(0, z - half);
  const int64_t z1 = std::min<int64_t>(source_.shape.z - 1, z + half);
  const int64_t n = z1 - z0 + 1;
  const int64_t sliceCount = source_.shape.sliceCount();

  Frame frame;
  Image input;
  double readMs = 0, queueMs = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // Slices being read ahead that this frame does not need can wait.
    std::erase_if(queue_, [&](int64_t k) { return k >= z0 && k <= z1; });
    const auto readStart = Clock::now();
    Image slab;
    if (n > 1) {
      slab = Image::hostUninitialized({n, source_.shape.y, source_.shape.x});
      slab.spacing = source_.spacing;
    }
    Entry* single = nullptr;
    for (int64_t k = z0; k <= z1; ++k) {
      job.checkCancelled();
      Entry& e = hostSlice(lock, k);
      if (k == z) frame.raw = e.host;
      if (n > 1)
        std::memcpy(slab.slice(k - z0), e.host.data(),
                    static_cast<size_t>(sliceCount) * sizeof(float));
      else
        single = &e;  // the lock is held from here on: the entry stays
    }
    readMs = msSince(readStart);
    const auto queueStart = Clock::now();
    if (n > 1) {
      input = slab;  // 3D: runPipeline uploads the assembled slab
    } else {
      Entry& e = *single;
      if (e.device.empty()) {
        e.device = backend_->device().uploadAsync(e.host);
        if (!e.device.onHost()) {
          bytes_ += e.device.bytes();
          deviceBytes_ += e.device.bytes();
        }
      }
      input = e.device;
    }
    queueMs = msSince(queueStart);
    trim(z0, z1);
  }

  RunOptions options;
  options.resultOnBackend = true;
  frame.result = runPipeline(*backend_, input, n > 1 ? z - z0 : 0, pipeline, job, options);
  frame.result.readMs = readMs;
  frame.result.uploadMs += queueMs;
  frame.result.totalMs = msSince(start);
  return frame;
}

Image LiveProcessor::download(const Image& image) {
  if (image.onHost()) return image;
  const Shape s = image.shape();
  Image host = (s == Shape{1, source_.shape.y, source_.shape.x}) ? resultPool_->acquire()
                                                                 : backend_->device().pinnedHost(s);
  backend_->device().downloadInto(image, host);
  return host;
}

size_t LiveProcessor::rawBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

size_t LiveProcessor::rawDeviceBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return deviceBytes_;
}

int LiveProcessor::rawSlices() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(std::count_if(entries_.begin(), entries_.end(), [](const auto& e) {
    return e.second.state == Entry::State::Ready;
  }));
}

bool LiveProcessor::kept(int64_t z) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(z);
  return it != entries_.end() && it->second.state == Entry::State::Ready;
}

bool LiveProcessor::onBackend(int64_t z) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(z);
  return it != entries_.end() && !it->second.device.empty();
}

int LiveProcessor::fileReads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fileReads_;
}

}  // namespace stacklens::compute
