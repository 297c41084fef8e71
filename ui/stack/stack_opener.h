// Opening a stack for the viewer off the GUI thread: the reader made and the middle slice read
// on a worker; stacks the viewer cannot hold (an axis beyond int, one slice beyond the allocation
// cap) refused with the reason. A newer request makes an older one's result stale.
#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <memory>

#include "io/display_levels.h"
#include "io/stack.h"
#include "render/slice_view.h"

namespace stacklens::ui {

// What was opened: the reader and its first slice to show (the middle one). A plane larger than
// the opener's budget is never read whole: levels and the coarse level of the slice instead.
struct OpenedStack {
  std::shared_ptr<io::StackReader> reader;
  int z = 0;
  render::SliceData slice;
  std::shared_ptr<const io::DisplayLevels> levels;
  render::LevelPatch coarse;
  bool fromFile = true;  // false for a reader made by the caller (not a recent file)
};

class StackOpener : public QObject {
  Q_OBJECT
 public:
  StackOpener(QThreadPool* pool, QObject* parent = nullptr);

  // Emits opened() or failed() on the GUI thread, unless a later open() came first; an earlier
  // open still waiting on a server then stops waiting (io/read_stop.h).
  void open(const QString& path, io::OpenOptions options);
  // An already made reader (tests use in-memory ones): checked and read here, at once.
  void openReader(std::shared_ptr<io::StackReader> reader);

  // Planes of more bytes (as float32) than this are shown from display levels.
  void setLargePlaneBytes(size_t bytes) { largePlaneBytes_ = bytes; }

  // Why the viewer cannot show a stack of this shape ("" when it can); inLevels: its planes are
  // shown from display levels, so one need not fit in memory.
  static QString refusal(const io::StackInfo& info, bool inLevels = false);

 signals:
  void opened(const QString& path, const stacklens::ui::OpenedStack& stack);
  void failed(const QString& path, const QString& message);

 private:
  // Stops the reads of the open in flight, when a later one makes it stale.
  void stopWaiting();

  QThreadPool* pool_;
  quint64 generation_ = 0;
  size_t largePlaneBytes_ = size_t(256) << 20;
  std::shared_ptr<std::atomic<bool>> waiting_;  // the stop flag of the open in flight
};

}  // namespace stacklens::ui
