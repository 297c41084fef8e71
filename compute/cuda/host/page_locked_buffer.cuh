// Host memory page-locked for DMA between it and one device, backed by transparent huge pages
// where the kernel allows. The driver locks a 2 MiB page at a fraction of the cost of the 512
// 4 KiB pages cudaMallocHost takes, and on hosts of several GPUs, whose workers lock their staging
// at once, those calls queue behind one another (compute/BENCHMARKS.md, several GPUs).
#pragma once

#include <cstddef>

namespace stacklens::compute::cuda {

class PageLockedBuffer {
 public:
  PageLockedBuffer() = default;
  // Locked for `device`'s transfers; throws DeviceOutOfMemory (or CudaError) when it cannot be.
  PageLockedBuffer(size_t bytes, int device);
  ~PageLockedBuffer();
  PageLockedBuffer(PageLockedBuffer&& other) noexcept;
  PageLockedBuffer& operator=(PageLockedBuffer&& other) noexcept;
  PageLockedBuffer(const PageLockedBuffer&) = delete;
  PageLockedBuffer& operator=(const PageLockedBuffer&) = delete;

  // At least `bytes`, locked for `device`: kept when large enough, else let go of first (the old
  // and the new need not both fit) and locked anew.
  void reserve(size_t bytes, int device);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void release() noexcept;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
  bool registered_ = false;  // our memory, registered; else cudaMallocHost's
};

}  // namespace stacklens::compute::cuda
