// Image buffers that know their shape, spacing and where they live (host memory or a CUDA device).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace stacklens::compute {

// Shape of a stack in (z, y, x) order; a 2D image has z == 1.
struct Shape {
  int64_t z = 1;
  int64_t y = 0;
  int64_t x = 0;

  int64_t count() const { return z * y * x; }
  int64_t sliceCount() const { return y * x; }
  bool empty() const { return count() <= 0; }
  bool operator==(const Shape&) const = default;
};

// Voxel spacing in physical units (µm, arcsec, ...); known == false means "pixels".
struct Spacing {
  double z = 1.0;
  double y = 1.0;
  double x = 1.0;
  bool known = false;
  std::string unit;
};

enum class Location { Host, Cuda };

// A dense, C-ordered (x fastest) buffer of T. Copies share the storage (like a shared_ptr);
// use clone() for a deep copy. Device buffers are created by the CUDA backend only, so this
// header needs no CUDA types: the storage carries its own deleter.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Shape shape, Location location, std::shared_ptr<T> storage)
      : shape_(shape), location_(location), storage_(std::move(storage)) {}

  // A zero-filled host buffer.
  static Buffer host(Shape shape) {
    if (shape.z < 0 || shape.y < 0 || shape.x < 0) throw std::invalid_argument("negative shape");
    std::shared_ptr<T> storage(new T[static_cast<size_t>(shape.count())](),
                               std::default_delete<T[]>());
    return Buffer(shape, Location::Host, std::move(storage));
  }

  // A host buffer with unspecified contents, for outputs that are written in full. It skips the
  // zero-fill pass, and on Linux buffers of 2 MiB or more ask for transparent huge pages: first
  // touching 4 KiB pages can cost more than the median filter that fills them.
  static Buffer hostUninitialized(Shape shape) {
    static_assert(std::is_trivially_default_constructible_v<T>);
    if (shape.z < 0 || shape.y < 0 || shape.x < 0) throw std::invalid_argument("negative shape");
    const size_t bytes = static_cast<size_t>(shape.count()) * sizeof(T);
    constexpr size_t kHugePage = size_t(2) << 20;
    if (bytes < kHugePage) {
      std::shared_ptr<T> storage(new T[static_cast<size_t>(shape.count())],
                                 std::default_delete<T[]>());
      return Buffer(shape, Location::Host, std::move(storage));
    }
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* memory = std::aligned_alloc(kHugePage, rounded);
    if (!memory) throw std::bad_alloc();
#if defined(__linux__)
    madvise(memory, rounded, MADV_HUGEPAGE);  // advice only: failure just means small pages
#endif
    std::shared_ptr<T> storage(static_cast<T*>(memory), [](T* p) { std::free(p); });
    return Buffer(shape, Location::Host, std::move(storage));
  }

  const Shape& shape() const { return shape_; }
  Location location() const { return location_; }
  bool onHost() const { return location_ == Location::Host; }
  bool empty() const { return !storage_ || shape_.empty(); }
  size_t bytes() const { return static_cast<size_t>(shape_.count()) * sizeof(T); }

  T* data() { return storage_.get(); }
  const T* data() const { return storage_.get(); }
  T* slice(int64_t z) { return data() + z * shape_.sliceCount(); }
  const T* slice(int64_t z) const { return data() + z * shape_.sliceCount(); }
  // Host element access (x fastest); undefined for device buffers.
  T& at(int64_t z, int64_t y, int64_t x) { return data()[(z * shape_.y + y) * shape_.x + x]; }
  const T& at(int64_t z, int64_t y, int64_t x) const {
    return data()[(z * shape_.y + y) * shape_.x + x];
  }

  Spacing spacing;

 private:
  Shape shape_;
  Location location_ = Location::Host;
  std::shared_ptr<T> storage_;
};

using Image = Buffer<float>;
using LabelImage = Buffer<int32_t>;

// Deep host copy of a host buffer.
template <class T>
Buffer<T> cloneHost(const Buffer<T>& in) {
  Buffer<T> out = Buffer<T>::host(in.shape());
  std::copy(in.data(), in.data() + in.shape().count(), out.data());
  out.spacing = in.spacing;
  return out;
}

}  // namespace stacklens::compute
