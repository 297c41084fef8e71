// The blocks of a whole-stack run, shared by the workers that deconvolve them (one per device):
// each takes the next block when it is ready for one; a worker whose device fails hands its
// blocks back, and the others take them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace stacklens::compute {

class BlockQueue {
 public:
  explicit BlockQueue(size_t blocks);

  // The next block to deconvolve, for a worker with none in hand; waits while the queue is empty
  // but blocks are still being worked on (one may come back). nullopt when every block is done
  // or the run is stopping.
  std::optional<size_t> take();
  // The next block if one is waiting now (a worker reading ahead while it computes), else nullopt.
  std::optional<size_t> tryTake();
  // The block's result is written.
  void done(size_t block);
  // A worker gives the block back unfinished (its device failed); another takes it.
  void handBack(size_t block);
  // No more blocks are handed out (the run failed or was cancelled).
  void stop();
  // Every block is done.
  bool finished() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<size_t> waiting_;
  size_t working_ = 0, left_ = 0;
  bool stopped_ = false;
};

}  // namespace stacklens::compute
