// The viewer's side of the open stack's raw slices: the reader, the stack's compute::SliceStore
// (host and device copies under one byte budget), reads on the window's pool with the result
// delivered on the GUI thread, read-ahead beside the slice shown and whole-stack preloads. The
// viewer, the ortho views, saves and the processing worker all take their slices from the one
// store, so a slice is read from the file once while it stays in the budget.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>

#include "compute/slice_store.h"
#include "io/stack.h"
#include "render/slice_view.h"

namespace stacklens::ui {

using render::SliceData;

// The reader's slices as the compute library takes them (shape, spacing, a thread-safe read).
compute::RawSliceReader rawSliceReaderOf(std::shared_ptr<const io::StackReader> reader);

class SliceFetcher : public QObject {
  Q_OBJECT
 public:
  // Reads run on pool (shared with the window's other workers).
  SliceFetcher(QThreadPool* pool, QObject* parent = nullptr);
  ~SliceFetcher() override;

  // A new stack, a new store of budget bytes holding the slice already read (first, at z).
  void setStack(std::shared_ptr<io::StackReader> reader, size_t budget, int z, SliceData first);
  std::shared_ptr<io::StackReader> reader() const { return reader_; }
  std::shared_ptr<compute::SliceStore> store() const { return store_; }

  // Slice z on the GUI thread: at once when cached, else after a read on the pool (null after a
  // read error, which readFailed reports). Nothing is called for a stack replaced meanwhile.
  void fetch(int z, std::function<void(SliceData)> done);
  // The store reads the neighbours of z ahead, on its own threads: when z is one step on from
  // the last z asked for, the next readAheadDepth() slices the way the slider moves (a scrub
  // then finds its slices read), and the one behind; else the one on each side.
  void prefetchAround(int z);
  // How many slices a scrub reads ahead: 8, at most a quarter of the store's budget.
  int readAheadDepth() const;
  // Reads slices [0, count) into the cache; done gets "" or the error, on the GUI thread.
  void preload(int count, std::function<void(const QString& error)> done);
  // The window is closing: preloads stop at their next slice.
  void stop() { stopped_->store(true); }

 signals:
  void readFailed(int z, const QString& message);

 private:
  QThreadPool* pool_;
  std::shared_ptr<io::StackReader> reader_;
  std::shared_ptr<compute::SliceStore> store_;
  int64_t depth_ = 0;
  int lastPrefetch_ = -1;
  std::shared_ptr<std::atomic<bool>> stopped_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace stacklens::ui
