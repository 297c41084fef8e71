// A read's result belongs to the cache it was started for: when the stack changed meanwhile (a new
// cache), the result is dropped and nothing is called.
#include "ui/slice_source.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace stacklens::ui {

SliceSource::SliceSource(QThreadPool* pool, QObject* parent) : QObject(parent), pool_(pool) {}

SliceSource::~SliceSource() { stop(); }

void SliceSource::setStack(std::shared_ptr<io::StackReader> reader, size_t budget, int z,
                           SliceData first) {
  reader_ = std::move(reader);
  depth_ = reader_->info().z;
  cache_ = std::make_shared<SliceCache>(budget);
  cache_->insert(z, std::move(first));
  inFlight_.clear();
}

SliceData SliceSource::readNow(const io::StackReader& reader, SliceCache& cache, int64_t z) {
  if (SliceData s = cache.find(z)) return s;
  const auto& info = reader.info();
  auto pixels = std::make_shared<std::vector<float>>(static_cast<size_t>(info.x * info.y));
  reader.readSlice(z, pixels->data());
  cache.insert(z, pixels);
  return pixels;
}

bool SliceSource::copyCached(SliceCache& cache, int64_t z, float* out) {
  const SliceData slice = cache.find(z);
  if (!slice) return false;
  std::copy(slice->begin(), slice->end(), out);
  return true;
}

void SliceSource::fetch(int z, std::function<void(SliceData)> done) {
  if (!reader_) return;
  if (SliceData s = cache_->find(z)) {
    done(std::move(s));
    return;
  }
  auto reader = reader_;
  auto cache = cache_;
  inFlight_.insert(z);
  (void)QtConcurrent::run(pool_, [this, reader, cache, z, done = std::move(done)] {
    SliceData slice;
    QString error;
    try {
      slice = readNow(*reader, *cache, z);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, cache, z, slice, error, done] {
          if (cache != cache_) return;  // another stack since
          inFlight_.erase(z);
          if (!error.isEmpty()) emit readFailed(z, error);
          done(slice);
        },
        Qt::QueuedConnection);
  });
}

void SliceSource::prefetchAround(int z) {
  for (int n : {z + 1, z - 1}) {
    if (n < 0 || n >= depth_ || inFlight_.count(n) || cache_->contains(n)) continue;
    fetch(n, [](SliceData) {});
  }
}

void SliceSource::preload(int count, std::function<void(const QString&)> done) {
  if (!reader_) return;
  auto reader = reader_;
  auto cache = cache_;
  count = int(std::min<int64_t>(count, depth_));
  (void)QtConcurrent::run(pool_, [this, reader, cache, count, stopped = stopped_, done] {
    QString error;
    try {
      for (int z = 0; z < count && !stopped->load(); ++z) readNow(*reader, *cache, z);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this, [error, done] { done(error); }, Qt::QueuedConnection);
  });
}

}  // namespace stacklens::ui
