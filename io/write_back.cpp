#include "io/write_back.h"

#include <fcntl.h>

namespace stacklens::io {

WriteBack::~WriteBack() {
  {
    std::lock_guard lock(lock_);
    stopping_ = true;
    ranges_.clear();
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WriteBack::start(off_t offset, off_t bytes) {
  if (bytes <= 0) return;
  {
    std::lock_guard lock(lock_);
    ranges_.emplace_back(offset, bytes);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  changed_.notify_all();
}

void WriteBack::run() {
  std::unique_lock lock(lock_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !ranges_.empty(); });
    if (ranges_.empty()) return;  // stopping, nothing left
    const auto [offset, bytes] = ranges_.front();
    ranges_.pop_front();
    lock.unlock();
    // Failures are left to the flush at the end, which reports them.
    ::sync_file_range(fd_, offset, bytes, SYNC_FILE_RANGE_WRITE);
    lock.lock();
  }
}

}  // namespace stacklens::io
