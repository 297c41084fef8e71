// The segmentation's device scratch (compute/cuda/cuda_segment.cu): the launches' geometry, the
// arrays of one run carved out of one allocation, and the page-locked table the results are
// published into. (For compute/cuda/*.cu only.)
#pragma once

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/segment.cuh"
#include "compute/cuda/kernels/segment_sources.cuh"

namespace stacklens::compute::cuda {
namespace {

// The scratch bytes CUB's single-pass inclusive scan of n int32 needs.
size_t scanTempBytes(int64_t n) {
  size_t bytes = 0;
  SL_CUDA(cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const int32_t*>(nullptr),
                                        static_cast<int32_t*>(nullptr), n));
  return bytes;
}
// out[i] = in[0] + … + in[i], ordered on the context's stream, with scratch of its own.
void inclusiveSum(const ContextPtr& ctx, const int32_t* in, int32_t* out, int64_t n) {
  size_t bytes = scanTempBytes(n);
  DeviceArray<unsigned char> temp(ctx, bytes);
  SL_CUDA(cub::DeviceScan::InclusiveSum(temp.get(), bytes, in, out, n, ctx->stream()));
}

// Arrays carved out of one device allocation: every pool allocation is host time spent before
// the first kernel starts.
class ScratchLayout {
 public:
  template <class T>
  size_t add(int64_t n) {
    const size_t at = (bytes_ + kAlign - 1) / kAlign * kAlign;
    bytes_ = at + static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(T);
    return at;
  }
  size_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kAlign = 256;
  size_t bytes_ = 0;
};

// Page-locked host memory mapped for the device, kept for the context's life, where
// publishSources writes the table: its count, then the entries.
class PublishedSources : public Context::Extension {
 public:
  ~PublishedSources() override {
    if (host_) cudaFreeHost(host_);
  }
  // Room for at least n sources.
  void reserve(int64_t n) {
    if (n <= capacity_) return;
    if (host_) cudaFreeHost(host_);
    host_ = nullptr;
    capacity_ = 0;
    SL_CUDA(cudaHostAlloc(&host_, kHeader + n * sizeof(Source), cudaHostAllocMapped));
    SL_CUDA(cudaHostGetDevicePointer(&device_, host_, 0));
    capacity_ = n;
  }
  int64_t capacity() const { return capacity_; }
  long long* count() const { return static_cast<long long*>(host_); }
  // Set (non-zero) by the publishing once the count and the entries are written.
  volatile int* done() const {
    return reinterpret_cast<volatile int*>(static_cast<char*>(host_) + kDoneAt);
  }
  volatile int* deviceDone() const {
    return reinterpret_cast<volatile int*>(static_cast<char*>(device_) + kDoneAt);
  }
  const Source* sources() const {
    return reinterpret_cast<const Source*>(static_cast<char*>(host_) + kHeader);
  }
  long long* deviceCount() const { return static_cast<long long*>(device_); }
  Source* deviceSources() const {
    return reinterpret_cast<Source*>(static_cast<char*>(device_) + kHeader);
  }

 private:
  static constexpr size_t kHeader = 64, kDoneAt = sizeof(long long);
  void* host_ = nullptr;
  void* device_ = nullptr;
  int64_t capacity_ = 0;
};

PublishedSources& publishedSources(const ContextPtr& ctx) {
  std::unique_ptr<Context::Extension>& slot = ctx->extension("segment.published_sources");
  if (!slot) slot = std::make_unique<PublishedSources>();
  auto& published = static_cast<PublishedSources&>(*slot);
  published.reserve(kMinSourceCapacity);
  return published;
}

// The launches' geometry: 32 × 64 tiles (a tile row is one 32-pixel segment), and slices in
// groups that the grid's y and z limits allow.
struct SegmentGrid {
  explicit SegmentGrid(const Shape& shape)
      : s(shape),
        segmentsPerRow(blocksFor(s.x, kTileW)),
        segments(s.z * s.y * segmentsPerRow),
        tiles(s.z * blocksFor(s.y, kTileH) * segmentsPerRow),
        strips(tiles * kTileThreadRows) {}
  static constexpr int64_t kGroup = 65535;
  unsigned slicesFrom(int64_t z0) const { return unsigned(std::min(kGroup, s.z - z0)); }
  dim3 tilesOf(int64_t z0) const {
    return dim3(unsigned(segmentsPerRow), blocksFor(s.y, kTileH), slicesFrom(z0));
  }
  Shape s;
  int64_t segmentsPerRow, segments;
  int64_t tiles;   // over the stack
  int64_t strips;  // a tile's 8-row strips (the relabelling's unit) over the stack
};

// What the labelling keeps for the context's life, so that it clears nothing before it starts:
// the tiles' states (TileOutputs::tileDone), which a generation new to each labelling makes
// stale without clearing, and two strip counts, one a labelling in turn, each cleared by the
// labelling before its next use (labelTiles' nextStripCount).
class SegmentTileState : public Context::Extension {
 public:
  explicit SegmentTileState(cudaStream_t stream) : stream_(stream) {}
  ~SegmentTileState() override { cudaFree(memory_); }
  // The next labelling of `tiles` tiles: its generation, its strip count (zero, when it starts,
  // in stream order) and the other one, which it clears.
  struct Turn {
    unsigned long long generation;
    int32_t *stripCount, *nextStripCount;
    unsigned long long* tileDone;
  };
  // publishSources' count of finished blocks (0 between its launches).
  unsigned* publishedBlocks() const {
    return reinterpret_cast<unsigned*>(static_cast<char*>(memory_) + kPublishedBlocksAt);
  }
  Turn next(int64_t tiles) {
    if (tiles > tiles_) {
      cudaFree(memory_);
      memory_ = nullptr;
      tiles_ = 0;
      cleared_[0] = cleared_[1] = false;
      SL_CUDA(cudaMalloc(&memory_, kHeader + tiles * sizeof(unsigned long long)));
      // Zero is no generation: every state stale.
      SL_CUDA(cudaMemsetAsync(memory_, 0, kHeader + tiles * sizeof(unsigned long long), stream_));
      tiles_ = tiles;
      cleared_[0] = cleared_[1] = true;
    }
    const int slot = int(++generation_ % 2);
    int32_t* counts = static_cast<int32_t*>(memory_);
    if (!cleared_[slot]) SL_CUDA(cudaMemsetAsync(counts + slot, 0, sizeof(int32_t), stream_));
    return {generation_, counts + slot, counts + 1 - slot,
            reinterpret_cast<unsigned long long*>(static_cast<char*>(memory_) + kHeader)};
  }
  // The labelling of `turn` was launched: its count is in use, the other one cleared.
  void launched(const Turn& turn) {
    const int slot = int(turn.generation % 2);
    cleared_[slot] = false;
    cleared_[1 - slot] = true;
  }

 private:
  static constexpr size_t kHeader = 256;  // the two strip counts, publishSources' block count
  static constexpr size_t kPublishedBlocksAt = 2 * sizeof(int32_t);
  cudaStream_t stream_;
  void* memory_ = nullptr;
  int64_t tiles_ = 0;
  unsigned long long generation_ = 0;
  bool cleared_[2] = {false, false};
};

SegmentTileState& segmentTileState(const ContextPtr& ctx) {
  std::unique_ptr<Context::Extension>& slot = ctx->extension("segment.tile_state");
  if (!slot) slot = std::make_unique<SegmentTileState>(ctx->stream());
  return static_cast<SegmentTileState&>(*slot);
}

// The scratch arrays of one segmentation, carved out of one device allocation (ScratchLayout).
struct SegmentScratch {
  SegmentScratch(const ContextPtr& ctx, const SegmentGrid& g) {
    const int64_t count = g.s.count();
    // The sources' number is known on the host only at the end: sums for a typical image's are
    // set aside (and cleared by labelTiles) now, and a larger number measures again.
    capacity = std::min<int64_t>(count, std::max<int64_t>(kMinSourceCapacity, count / 256));
    scanBytes = scanTempBytes(g.segments);
    ScratchLayout layout;
    const size_t parentAt = layout.add<int32_t>(count), fgAt = layout.add<uint32_t>(g.segments),
                 countsAt = layout.add<int32_t>(g.segments),
                 endsAt = layout.add<int32_t>(g.segments),
                 masksAt = layout.add<uint32_t>(g.segments),
                 sumsAt = layout.add<SourceSums>(capacity),
                 scanAt = layout.add<unsigned char>(static_cast<int64_t>(scanBytes)),
                 stripsAt = layout.add<int32_t>(g.strips);
    memory = DeviceArray<unsigned char>(ctx, layout.bytes());
    parent = carve<int32_t>(parentAt);
    fgMasks = carve<uint32_t>(fgAt);
    rootCounts = carve<int32_t>(countsAt);
    rootEnds = carve<int32_t>(endsAt);
    rootMasks = carve<uint32_t>(masksAt);
    sums = carve<SourceSums>(sumsAt);
    scanTemp = carve<unsigned char>(scanAt);
    fgStrips = carve<int32_t>(stripsAt);
  }
  // With the strip count and the tiles' states of `turn`, which fgStripCount then names.
  TileOutputs tileOutputs(int32_t* labels, const SegmentTileState::Turn& turn) {
    fgStripCount = turn.stripCount;
    return {parent,   fgMasks,         rootMasks,     rootCounts,     labels,
            fgStrips, turn.stripCount, turn.tileDone, turn.generation};
  }
  template <class T>
  T* carve(size_t at) const {
    return reinterpret_cast<T*>(memory.get() + at);
  }
  DeviceArray<unsigned char> memory;
  int32_t* parent;    // provisional labels (kernels/segment.cuh), in segments with foreground
  uint32_t* fgMasks;  // each segment's foreground bits
  int32_t *rootCounts, *rootEnds;  // each segment's roots, and their inclusive scan
  uint32_t* rootMasks;             // each segment's root bits
  SourceSums* sums;                // `capacity` sources' sums
  int64_t capacity;
  void* scanTemp;
  size_t scanBytes;
  // The strips with foreground (kernels/segment.cuh), and their count (SegmentTileState's).
  int32_t *fgStrips, *fgStripCount = nullptr;

  DeviceArray<SourceSums> moreSums;  // where the sources outnumber capacity
};

}  // namespace
}  // namespace stacklens::compute::cuda
