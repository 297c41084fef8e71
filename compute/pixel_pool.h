// Host pixel vectors recycled across frames, page-locked for the GPU's downloads where it can.
#pragma once

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "compute/backend.h"

namespace stacklens::compute {

// A new 16 MB vector per 2048² frame costs its zeroing and page faults, and a transfer from or to
// pageable memory goes through a staging copy: together a third of a frame's budget. Vectors
// handed out here come back when their last holder (view, readout, slice store) lets go and are
// handed out again; those acquired for a backend are page-locked by it once
// (DeviceControl::pinHostMemory), so that transfers are one DMA. A returned vector is always
// taken back, because unpinning may wait for the device and the last holder may be the GUI
// thread; acquire() unpins and frees what exceeds kKept, on the thread that asks for memory.
class PixelPool : public std::enable_shared_from_this<PixelPool> {
 public:
  ~PixelPool();
  // count floats; page-locked for pinFor's transfers when given and possible.
  std::shared_ptr<std::vector<float>> acquire(size_t count,
                                              const std::shared_ptr<Backend>& pinFor = {});
  // The same as a host image sharing the vector's storage (which it keeps alive).
  std::pair<std::shared_ptr<std::vector<float>>, Image> image(
      Shape shape, const std::shared_ptr<Backend>& pinFor = {});
  size_t kept() const;

  static constexpr size_t kKept = 6;

 private:
  struct Buffer {
    std::unique_ptr<std::vector<float>> pixels;
    std::shared_ptr<Backend> pinnedBy;  // null: pageable
  };
  static void release(Buffer buffer);  // unpins, then frees
  void giveBack(Buffer buffer);        // never frees

  mutable std::mutex mutex_;
  std::vector<Buffer> free_;
};

}  // namespace stacklens::compute
