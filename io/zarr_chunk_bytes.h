// The decoded bytes of one Zarr chunk, in stored order and byte order, allocated without being
// zeroed: the decoder overwrites every byte at once, so zeroing would write each byte twice.
#pragma once

#include <cstddef>
#include <memory>

namespace stacklens::io {

class ZarrChunkBytes {
 public:
  using value_type = unsigned char;  // for ZarrChunkCache's byte count

  ZarrChunkBytes() = default;  // a chunk not stored: reads as the fill value
  explicit ZarrChunkBytes(size_t n)
      : bytes_(std::make_unique_for_overwrite<unsigned char[]>(n)), size_(n) {}

  unsigned char* data() { return bytes_.get(); }
  const unsigned char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::unique_ptr<unsigned char[]> bytes_;
  size_t size_ = 0;
};

}  // namespace stacklens::io
