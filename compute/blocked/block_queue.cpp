#include "compute/blocked/block_queue.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace stacklens::compute {

BlockQueue::BlockQueue(size_t blocks) : left_(blocks) {
  for (size_t k = 0; k < blocks; ++k) waiting_.push_back(k);
}

BlockQueue::BlockQueue(std::vector<double> costs, size_t workers) : BlockQueue(costs.size()) {
  costs_ = std::move(costs);
  taken_.assign(std::max<size_t>(workers, 1), 0.0);
  share_ = std::accumulate(costs_.begin(), costs_.end(), 0.0) / double(taken_.size());
}

size_t BlockQueue::pick(size_t worker) {
  auto chosen = waiting_.begin();
  if (!costs_.empty() && worker < taken_.size()) {
    auto gap = [&](size_t block) { return std::fabs(taken_[worker] + costs_[block] - share_); };
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
      if (gap(*it) < gap(*chosen)) chosen = it;
    taken_[worker] += costs_[*chosen];
  }
  const size_t block = *chosen;
  waiting_.erase(chosen);
  ++working_;
  return block;
}

std::optional<size_t> BlockQueue::take(size_t worker) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_ || !waiting_.empty() || working_ == 0; });
  if (stopped_ || waiting_.empty()) return std::nullopt;
  return pick(worker);
}

std::optional<size_t> BlockQueue::tryTake(size_t worker) {
  std::lock_guard lock(mutex_);
  if (stopped_ || waiting_.empty()) return std::nullopt;
  return pick(worker);
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
