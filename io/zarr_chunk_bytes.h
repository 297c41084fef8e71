// The decoded bytes of one Zarr chunk, in stored order and byte order. Allocated without being
// zeroed (the decoder overwrites every byte at once), and taken from and given back to a few
// spare buffers of the array's chunk size: a fresh buffer's pages are each faulted in and
// cleared by the kernel, which costs more than decoding into them, and the chunk cache lets go
// of one buffer for every chunk it takes in.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace stacklens::io {

// Buffers of one size given back by chunks no longer held, at most `most` of them.
struct ZarrSpareBuffers {
  ZarrSpareBuffers(size_t bytes, size_t most) : bytes(bytes), most(most) {}
  const size_t bytes, most;
  std::mutex mutex;
  std::vector<std::unique_ptr<unsigned char[]>> buffers;
};

class ZarrChunkBytes {
 public:
  using value_type = unsigned char;  // for ZarrChunkCache's byte count

  ZarrChunkBytes() = default;  // a chunk not stored: reads as the fill value
  // spares->bytes bytes, a spare buffer if there is one.
  explicit ZarrChunkBytes(std::shared_ptr<ZarrSpareBuffers> spares)
      : spares_(std::move(spares)), size_(spares_->bytes) {
    {
      std::lock_guard lock(spares_->mutex);
      if (!spares_->buffers.empty()) {
        bytes_ = std::move(spares_->buffers.back());
        spares_->buffers.pop_back();
      }
    }
    if (!bytes_) bytes_ = std::make_unique_for_overwrite<unsigned char[]>(size_);
  }
  ~ZarrChunkBytes() {
    if (!spares_ || !bytes_) return;
    std::lock_guard lock(spares_->mutex);
    if (spares_->buffers.size() < spares_->most) spares_->buffers.push_back(std::move(bytes_));
  }
  ZarrChunkBytes(const ZarrChunkBytes&) = delete;
  ZarrChunkBytes& operator=(const ZarrChunkBytes&) = delete;

  unsigned char* data() { return bytes_.get(); }
  const unsigned char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::shared_ptr<ZarrSpareBuffers> spares_;
  std::unique_ptr<unsigned char[]> bytes_;
  size_t size_ = 0;
};

}  // namespace stacklens::io
