// copyParallel: a memcpy cut into page-aligned parts, one thread each.
#include "compute/cuda/host/host_copy.cuh"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "compute/cuda/tuning/transfers.cuh"

namespace stacklens::compute::cuda {

void copyParallel(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPiece = tuning::TransferPolicy::parallelCopyPieceBytes;
  const size_t threads =
      std::min<size_t>({tuning::TransferPolicy::parallelCopyMaxThreads,
                        std::max<size_t>(1, std::thread::hardware_concurrency()), bytes / kPiece});
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (threads <= 1) {
    std::memcpy(d, s, bytes);
    return;
  }
  const size_t part = (bytes / threads + 4095) / 4096 * 4096;
  std::vector<std::thread> workers;
  size_t at = part;
  for (; at < bytes; at += part) {
    const size_t n = std::min(part, bytes - at);
    try {
      workers.emplace_back([=] { std::memcpy(d + at, s + at, n); });
    } catch (...) {
      break;  // no thread to be had: the rest is copied here
    }
  }
  std::memcpy(d, s, std::min(part, bytes));
  if (at < bytes) std::memcpy(d + at, s + at, bytes - at);
  for (std::thread& w : workers) w.join();
}

}  // namespace stacklens::compute::cuda
