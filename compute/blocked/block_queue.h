// The blocks of a whole-stack run, shared by the workers that deconvolve them (one per device):
// each takes the next block when it is ready for one; a worker whose device fails hands its
// blocks back, and the others take them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace stacklens::compute {

class BlockQueue {
 public:
  // Blocks handed out in order.
  explicit BlockQueue(size_t blocks);
  // Blocks of unequal cost (expected seconds) shared by `workers`: a worker gets the waiting
  // block that brings what it has taken closest to an even share (the total over the workers).
  // Workers that have taken nothing get the costliest, and the others what evens them out, as
  // longest-first scheduling pairs them; equal costs go in order. (A worker takes its next block
  // when its current frame is read, long before it is free: the order in which workers ask says
  // little about when they will be.)
  BlockQueue(std::vector<double> costs, size_t workers);

  // The next block to deconvolve, for a worker with none in hand; waits while the queue is empty
  // but blocks are still being worked on (one may come back). nullopt when every block is done
  // or the run is stopping.
  std::optional<size_t> take(size_t worker = 0);
  // The next block if one is waiting now (a worker reading ahead while it computes), else nullopt.
  std::optional<size_t> tryTake(size_t worker = 0);
  // The block's result is written.
  void done(size_t block);
  // A worker gives the block back unfinished (its device failed); another takes it.
  void handBack(size_t block);
  // No more blocks are handed out (the run failed or was cancelled).
  void stop();
  // Every block is done.
  bool finished() const;

 private:
  size_t pick(size_t worker);  // under the lock, with a block waiting

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<size_t> waiting_;
  std::vector<double> costs_;  // per block (empty: in order)
  std::vector<double> taken_;  // per worker: the cost of the blocks it took
  double share_ = 0;
  size_t working_ = 0, left_ = 0;
  bool stopped_ = false;
};

}  // namespace stacklens::compute
