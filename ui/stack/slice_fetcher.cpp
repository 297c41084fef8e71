// A read's result belongs to the store it was started for: when the stack changed meanwhile (a new
// store), the result is dropped and nothing is called.
#include "ui/stack/slice_fetcher.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "compute/stack_spacing.h"
#include "ui/frame/thread_priority.h"

namespace stacklens::ui {

compute::RawSliceReader rawSliceReaderOf(std::shared_ptr<const io::StackReader> reader) {
  const io::StackInfo& info = reader->info();
  compute::RawSliceReader source;
  source.shape = {info.z, info.y, info.x};
  source.spacing = compute::spacingOf(info);
  source.read = [reader = std::move(reader)](int64_t z, float* out) { reader->readSlice(z, out); };
  return source;
}

SliceFetcher::SliceFetcher(QThreadPool* pool, QObject* parent) : QObject(parent), pool_(pool) {}

SliceFetcher::~SliceFetcher() { stop(); }

void SliceFetcher::setStack(std::shared_ptr<io::StackReader> reader, size_t budget, int z,
                            SliceData first) {
  reader_ = std::move(reader);
  depth_ = reader_->info().z;
  // The read-ahead thread yields to the GUI and the processing.
  store_ = std::make_shared<compute::SliceStore>(rawSliceReaderOf(reader_), budget,
                                                 [] { lowerThreadPriority(); });
  if (first) store_->insert(z, std::move(first));  // none for a plane shown from levels
  lastPrefetch_ = -1;
}

void SliceFetcher::fetch(int z, std::function<void(SliceData)> done) {
  if (!reader_) return;
  if (SliceData s = store_->find(z)) {
    done(std::move(s));
    return;
  }
  auto store = store_;
  (void)QtConcurrent::run(pool_, [this, store, z, done = std::move(done)] {
    SliceData slice;
    QString error;
    try {
      slice = store->get(z);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, store, z, slice, error, done] {
          if (store != store_) return;  // another stack since
          if (!error.isEmpty()) emit readFailed(z, error);
          done(slice);
        },
        Qt::QueuedConnection);
  });
}

void SliceFetcher::prefetchAround(int z) {
  if (!store_ || z == lastPrefetch_) return;  // asked at the request and again when shown
  const int step = z - lastPrefetch_;
  lastPrefetch_ = z;
  const int way = step < 0 ? -1 : 1;
  const int ahead = (step == 1 || step == -1) ? readAheadDepth() : 1;
  std::vector<int64_t> zs;
  for (int i = 1; i <= ahead; ++i) zs.push_back(z + way * i);
  zs.push_back(z - way);
  store_->readAhead(zs);
}

int SliceFetcher::readAheadDepth() const {
  if (!store_) return 1;
  const compute::Shape slice = store_->sliceShape();
  const size_t sliceBytes = size_t(std::max<int64_t>(1, slice.y * slice.x)) * sizeof(float);
  return int(std::clamp<size_t>(store_->budget() / 4 / sliceBytes, 1, 8));
}

void SliceFetcher::preload(int count, std::function<void(const QString&)> done) {
  if (!reader_) return;
  auto store = store_;
  count = int(std::min<int64_t>(count, depth_));
  (void)QtConcurrent::run(pool_, [this, store, count, stopped = stopped_, done] {
    QString error;
    try {
      for (int z = 0; z < count && !stopped->load(); ++z) store->get(z);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this, [error, done] { done(error); }, Qt::QueuedConnection);
  });
}

}  // namespace stacklens::ui
