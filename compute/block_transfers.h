// Copies between host memory and the images a backend computes on, for whole-stack runs
// (compute/blocked/): one thread fills the next block's frame and another empties the last
// block's result while the backend computes, so the copies have their own engine (CUDA: streams
// of their own and page-locked staging).
#pragma once

#include <cstdint>
#include <vector>

#include "compute/image.h"
#include "compute/params.h"

namespace stacklens::compute {

class BlockTransfers {
 public:
  virtual ~BlockTransfers() = default;
  // An uninitialised image where the backend computes. Call from the thread that runs the
  // operations.
  virtual Image allocate(Shape shape) = 0;
  // Host memory the copies below are fastest from and to, slot 0–3, at least `floats`; kept and
  // grown for the object's life. Each slot belongs to one thread at a time.
  virtual float* staging(int slot, size_t floats) = 0;
  // Copies `count` whole slices (C order) from host memory into image's slices [z, z + count);
  // returns when done. Safe while the backend computes on other images.
  virtual void put(Image& image, int64_t z, int64_t count, const float* src) = 0;
  // Copies the box [origin, origin + extent) of image (where the backend computes, or the host)
  // into host memory (C order); returns when done. Safe while the backend computes on other
  // images, and alongside put() from another thread.
  virtual void get(const Image& image, Shape origin, Shape extent, float* dst) = 0;
};

// For backends that compute on the host: plain memory copies.
class HostBlockTransfers final : public BlockTransfers {
 public:
  Image allocate(Shape shape) override;
  float* staging(int slot, size_t floats) override;
  void put(Image& image, int64_t z, int64_t count, const float* src) override;
  void get(const Image& image, Shape origin, Shape extent, float* dst) override;

 private:
  std::vector<float> staging_[4];
};

}  // namespace stacklens::compute
