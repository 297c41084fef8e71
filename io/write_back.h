// Starts writing finished ranges of a file back to disk on a thread of its own.
//
// Why: sync_file_range(SYNC_FILE_RANGE_WRITE) waits while the disk's queue is full, so a writer
// that calls it itself runs at the disk's pace; a whole-stack run would then wait for the disk
// between blocks instead of computing. Starting write-back early still matters: the flush before
// the output is renamed into place then has little left to do.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace stacklens::io {

class WriteBack {
 public:
  explicit WriteBack(int fd) : fd_(fd) {}
  ~WriteBack();
  WriteBack(const WriteBack&) = delete;
  WriteBack& operator=(const WriteBack&) = delete;

  // Queues [offset, offset + bytes) for write-back; returns at once. Ranges still queued when
  // the object goes are dropped: the caller's flush (fsync) writes everything anyway, and a file
  // abandoned need not go to disk.
  void start(off_t offset, off_t bytes);

 private:
  void run();

  int fd_;
  std::mutex lock_;
  std::condition_variable changed_;
  std::deque<std::pair<off_t, off_t>> ranges_;
  bool stopping_ = false;
  std::thread thread_;  // started with the first range
};

}  // namespace stacklens::io
