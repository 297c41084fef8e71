// An in-memory io::StackReader for ui tests: value at (z, y, x) = 100 z + 10 y + x.
#pragma once

#include <atomic>
#include <cstring>
#include <vector>

#include "io/io_error.h"
#include "io/stack.h"

namespace stacklens::testing {

class MemoryStack : public io::StackReader {
 public:
  MemoryStack(int64_t z, int64_t y, int64_t x) : data_(static_cast<size_t>(z * y * x)) {
    info_.path = "memory";
    info_.format = "fits";
    info_.z = z;
    info_.y = y;
    info_.x = x;
    for (int64_t k = 0; k < z; ++k)
      for (int64_t j = 0; j < y; ++j)
        for (int64_t i = 0; i < x; ++i)
          data_[static_cast<size_t>((k * y + j) * x + i)] = float(100 * k + 10 * j + i);
  }
  const io::StackInfo& info() const override { return info_; }
  void readSlice(int64_t z, float* out) const override {
    if (z < 0 || z >= info_.z) throw io::IoError("memory", "slice out of range");
    reads.fetch_add(1);
    const size_t n = static_cast<size_t>(info_.y * info_.x);
    std::memcpy(out, data_.data() + static_cast<size_t>(z) * n, n * sizeof(float));
  }
  const io::Wcs* wcs() const override { return nullptr; }

  mutable std::atomic<int> reads{0};  // slices read so far

 private:
  io::StackInfo info_;
  std::vector<float> data_;
};

}  // namespace stacklens::testing
