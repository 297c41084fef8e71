#include "compute/cuda/host/page_locked_buffer.cuh"

#include <cuda_runtime.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "compute/cuda/host/cuda_context.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;

}  // namespace

PageLockedBuffer::PageLockedBuffer(size_t bytes, int device) {
  if (bytes == 0) return;
  device_ = device;
  const ScopedDevice on(device);
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  if (void* p = std::aligned_alloc(kHugePage, rounded)) {
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: without it the pages are 4 KiB, still locked
    // Touched here, so that the huge pages are in place before the driver locks them.
    std::memset(p, 0, rounded);
    if (cudaHostRegister(p, rounded, cudaHostRegisterDefault) == cudaSuccess) {
      data_ = p;
      bytes_ = rounded;
      registered_ = true;
      return;
    }
    cudaGetLastError();
    std::free(p);
  }
  // Where registering is refused (some containers and drivers), the driver's own allocation.
  SL_CUDA(cudaMallocHost(&data_, bytes));
  bytes_ = bytes;
}

PageLockedBuffer::~PageLockedBuffer() { release(); }

void PageLockedBuffer::reserve(size_t bytes, int device) {
  if (bytes <= bytes_) return;
  release();
  *this = PageLockedBuffer(bytes, device);
}

PageLockedBuffer::PageLockedBuffer(PageLockedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(other.device_),
      registered_(std::exchange(other.registered_, false)) {}

PageLockedBuffer& PageLockedBuffer::operator=(PageLockedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = other.device_;
    registered_ = std::exchange(other.registered_, false);
  }
  return *this;
}

void PageLockedBuffer::release() noexcept {
  if (!data_) return;
  const ScopedDevice on(device_);  // a thread working on another device may let go of it
  if (registered_) {
    cudaHostUnregister(data_);
    std::free(data_);
  } else {
    cudaFreeHost(data_);
  }
  data_ = nullptr;
  bytes_ = 0;
  registered_ = false;
}

}  // namespace stacklens::compute::cuda
