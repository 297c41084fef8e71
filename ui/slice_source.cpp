// A read's result belongs to the store it was started for: when the stack changed meanwhile (a new
// store), the result is dropped and nothing is called.
#include "ui/slice_source.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "ui/stack_spacing.h"
#include "ui/thread_priority.h"

namespace stacklens::ui {

compute::SliceSource sliceSourceOf(std::shared_ptr<const io::StackReader> reader) {
  const io::StackInfo& info = reader->info();
  compute::SliceSource source;
  source.shape = {info.z, info.y, info.x};
  source.spacing = spacingOf(info);
  source.read = [reader = std::move(reader)](int64_t z, float* out) { reader->readSlice(z, out); };
  return source;
}

SliceSource::SliceSource(QThreadPool* pool, QObject* parent) : QObject(parent), pool_(pool) {}

SliceSource::~SliceSource() { stop(); }

void SliceSource::setStack(std::shared_ptr<io::StackReader> reader, size_t budget, int z,
                           SliceData first) {
  reader_ = std::move(reader);
  depth_ = reader_->info().z;
  // The read-ahead thread yields to the GUI and the processing.
  store_ = std::make_shared<compute::SliceStore>(sliceSourceOf(reader_), budget,
                                                 [] { lowerThreadPriority(); });
  if (first) store_->insert(z, std::move(first));  // none for a plane shown from levels
}

void SliceSource::fetch(int z, std::function<void(SliceData)> done) {
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

void SliceSource::prefetchAround(int z) {
  if (store_) store_->readAhead({z + 1, z - 1});
}

void SliceSource::preload(int count, std::function<void(const QString&)> done) {
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
