#include "compute/blocked/block_queue.h"

namespace stacklens::compute {

BlockQueue::BlockQueue(size_t blocks) : left_(blocks) {
  for (size_t k = 0; k < blocks; ++k) waiting_.push_back(k);
}

std::optional<size_t> BlockQueue::take() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_ || !waiting_.empty() || working_ == 0; });
  if (stopped_ || waiting_.empty()) return std::nullopt;
  const size_t block = waiting_.front();
  waiting_.pop_front();
  ++working_;
  return block;
}

std::optional<size_t> BlockQueue::tryTake() {
  std::lock_guard lock(mutex_);
  if (stopped_ || waiting_.empty()) return std::nullopt;
  const size_t block = waiting_.front();
  waiting_.pop_front();
  ++working_;
  return block;
}

void BlockQueue::done(size_t block) {
  (void)block;
  {
    std::lock_guard lock(mutex_);
    --working_;
    --left_;
  }
  changed_.notify_all();
}

void BlockQueue::handBack(size_t block) {
  {
    std::lock_guard lock(mutex_);
    --working_;
    // First in line: the blocks before it are done or being done, and the file's writer keeps
    // less waiting when blocks finish roughly in order.
    waiting_.push_front(block);
  }
  changed_.notify_all();
}

void BlockQueue::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
}

bool BlockQueue::finished() const {
  std::lock_guard lock(mutex_);
  return left_ == 0;
}

}  // namespace stacklens::compute
