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
// The same for the exclusive scan.
size_t exclusiveScanTempBytes(int64_t n) {
  size_t bytes = 0;
  SL_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int32_t*>(nullptr),
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
// publishSources writes the table: its count, each group's flag, then the entries.
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
    const int64_t groups = (n + kPublishGroup - 1) / kPublishGroup;
    entriesAt_ = (kFlagsAt + groups * sizeof(int) + 63) / 64 * 64;
    SL_CUDA(cudaHostAlloc(&host_, entriesAt_ + n * sizeof(Source), cudaHostAllocMapped));
    SL_CUDA(cudaHostGetDevicePointer(&device_, host_, 0));
    capacity_ = n;
  }
  int64_t capacity() const { return capacity_; }
  long long* count() const { return static_cast<long long*>(host_); }
  // Group g's flag (sources g · kPublishGroup …): set (non-zero) by the publishing once its
  // entries are written, group 0's once the count is too.
  volatile int* groupDone(int64_t g) const { return groupsDone(host_) + g; }
  volatile int* deviceGroupsDone() const { return groupsDone(device_); }
  // Clears the flags of the first `groups` groups, before a publishing.
  void clearGroups(int64_t groups) const {
    for (int64_t g = 0; g < groups; ++g) *groupDone(g) = 0;
  }
  const Source* sources() const {
    return reinterpret_cast<const Source*>(static_cast<char*>(host_) + entriesAt_);
  }
  long long* deviceCount() const { return static_cast<long long*>(device_); }
  Source* deviceSources() const {
    return reinterpret_cast<Source*>(static_cast<char*>(device_) + entriesAt_);
  }
  int64_t lastCount = 0;  // the number of sources found the last time

 private:
  static constexpr size_t kFlagsAt = 64;  // after the count, on a cache line of their own
  static volatile int* groupsDone(void* base) {
    return reinterpret_cast<volatile int*>(static_cast<char*>(base) + kFlagsAt);
  }
  void* host_ = nullptr;
  void* device_ = nullptr;
  size_t entriesAt_ = 0;
  int64_t capacity_ = 0;
};

PublishedSources& publishedSources(const ContextPtr& ctx) {
  std::unique_ptr<Context::Extension>& slot = ctx->extension("segment.published_sources");
  if (!slot) slot = std::make_unique<PublishedSources>();
  auto& published = static_cast<PublishedSources&>(*slot);
  published.reserve(kMinSourceCapacity);
  return published;
}

// The launches' geometry: 32 × 64 tiles (a tile row is one 32-pixel segment).
struct SegmentGrid {
  explicit SegmentGrid(const Shape& shape)
      : s(shape),
        segmentsPerRow(blocksFor(s.x, kTileW)),
        segments(s.z * s.y * segmentsPerRow),
        tiles(s.z * blocksFor(s.y, kTileH) * segmentsPerRow),
        strips(tiles * kTileThreadRows),
        rows(s.z * s.y) {}
  // The most tile rows, and slices, one labelling launch takes: the grid's y and z limit.
  static constexpr int64_t kMaxLaunched = 65535;
  Shape s;
  int64_t segmentsPerRow, segments;
  int64_t tiles;   // over the stack
  int64_t strips;  // a tile's 8-row strips (the relabelling's unit) over the stack
  int64_t rows;    // the stack's rows
  // Whether the numbering's blocks add up the rows' root counts themselves (else CUB scans them).
  bool rowsSummedByBlocks() const { return rows <= kRowsSummedByBlocks; }
};

// What the labelling keeps for the context's life, so that it clears nothing before it starts:
// the tiles' states (TileOutputs::tileDone), which a generation new to each labelling makes
// stale without clearing, and two sets of counters (the strip count, then each row's root
// count), one a labelling in turn, each cleared by the labelling before its next use
// (labelTiles' nextCounters).
class SegmentTileState : public Context::Extension {
 public:
  explicit SegmentTileState(cudaStream_t stream) : stream_(stream) {}
  ~SegmentTileState() override { cudaFree(memory_); }
  // A labelling's generation, its counters (zero when it starts, in stream order), and the
  // other set's counters that it clears.
  struct Turn {
    unsigned long long generation;
    int32_t* counters;
    int32_t* nextCounters;
    int64_t nextToClear;
    unsigned long long* tileDone;
  };
  // The next labelling, of `tiles` tiles and `rows` rows.
  Turn next(int64_t tiles, int64_t rows) {
    if (tiles > tiles_ || rows > rows_) {
      const int64_t moreTiles = std::max(tiles, tiles_), moreRows = std::max(rows, rows_);
      cudaFree(memory_);
      memory_ = nullptr;
      tiles_ = rows_ = 0;
      const size_t bytes = tileDoneAt(moreRows) + moreTiles * sizeof(unsigned long long);
      if (cudaMalloc(&memory_, bytes) != cudaSuccess) {
        cudaGetLastError();  // not sticky: clear it
        memory_ = nullptr;
        throw DeviceOutOfMemory("segmentation: no device memory for the tiles' states");
      }
      // Zero is no generation: every state stale.
      SL_CUDA(cudaMemsetAsync(memory_, 0, bytes, stream_));
      tiles_ = moreTiles;
      rows_ = moreRows;
      dirty_[0] = dirty_[1] = 0;
    }
    const int slot = int(++generation_ % 2);
    if (dirty_[slot] > 0)  // not cleared by the labelling before (none launched)
      SL_CUDA(cudaMemsetAsync(counters(slot), 0, dirty_[slot] * sizeof(int32_t), stream_));
    dirty_[slot] = 0;
    return {generation_, counters(slot), counters(1 - slot), dirty_[1 - slot],
            reinterpret_cast<unsigned long long*>(static_cast<char*>(memory_) + tileDoneAt(rows_))};
  }
  // The labelling of `turn`, of `rows` rows, was launched: it uses its counters and clears the
  // others.
  void launched(const Turn& turn, int64_t rows) {
    const int slot = int(turn.generation % 2);
    dirty_[slot] = 1 + rows;
    dirty_[1 - slot] = 0;
  }

 private:
  int32_t* counters(int slot) const { return static_cast<int32_t*>(memory_) + slot * (1 + rows_); }
  // Where the tiles' states start, after the counters of `rows` rows.
  static size_t tileDoneAt(int64_t rows) {
    return (2 * (1 + rows) * sizeof(int32_t) + 255) / 256 * 256;
  }
  cudaStream_t stream_;
  void* memory_ = nullptr;
  int64_t tiles_ = 0, rows_ = 0;
  unsigned long long generation_ = 0;
  int64_t dirty_[2] = {0, 0};  // each set's counters that may not be zero
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
    scanBytes = g.rowsSummedByBlocks() ? 0 : exclusiveScanTempBytes(g.rows);
    ScratchLayout layout;
    const size_t parentAt = layout.add<int32_t>(count), fgAt = layout.add<uint32_t>(g.segments),
                 startsAt = layout.add<int32_t>(g.rowsSummedByBlocks() ? 0 : g.rows),
                 endsAt = layout.add<int32_t>(g.segments),
                 masksAt = layout.add<uint32_t>(g.segments),
                 sumsAt = layout.add<SourceSums>(capacity),
                 scanAt = layout.add<unsigned char>(static_cast<int64_t>(scanBytes)),
                 stripsAt = layout.add<int32_t>(g.strips);
    memory = DeviceArray<unsigned char>(ctx, layout.bytes());
    parent = carve<int32_t>(parentAt);
    fgMasks = carve<uint32_t>(fgAt);
    rowStarts = g.rowsSummedByBlocks() ? nullptr : carve<int32_t>(startsAt);
    rootEnds = carve<int32_t>(endsAt);
    rootMasks = carve<uint32_t>(masksAt);
    sums = carve<SourceSums>(sumsAt);
    scanTemp = carve<unsigned char>(scanAt);
    fgStrips = carve<int32_t>(stripsAt);
  }
  // With the counters and the tiles' states of `turn`, which fgStripCount and rowRoots then
  // name.
  TileOutputs tileOutputs(int32_t* labels, const SegmentTileState::Turn& turn) {
    fgStripCount = turn.counters;
    rowRoots = turn.counters + 1;
    return {parent,   fgMasks,      rootMasks,     rowRoots,       labels,
            fgStrips, fgStripCount, turn.tileDone, turn.generation};
  }
  template <class T>
  T* carve(size_t at) const {
    return reinterpret_cast<T*>(memory.get() + at);
  }
  DeviceArray<unsigned char> memory;
  int32_t* parent;      // provisional labels (kernels/segment.cuh), in segments with foreground
  uint32_t* fgMasks;    // each segment's foreground bits
  int32_t* rootEnds;    // the roots in segments 0 … s (endRootSegments)
  uint32_t* rootMasks;  // each segment's root bits
  SourceSums* sums;     // `capacity` sources' sums
  int64_t capacity;
  void* scanTemp;  // for CUB's scan of rowRoots into rowStarts, where the blocks do not add them
  size_t scanBytes;
  int32_t* rowStarts;           // null where the numbering's blocks add up rowRoots themselves
  int32_t* rowRoots = nullptr;  // each row's roots (SegmentTileState's)
  // The strips with foreground (kernels/segment.cuh), and their count (SegmentTileState's).
  int32_t *fgStrips, *fgStripCount = nullptr;

  DeviceArray<SourceSums> moreSums;  // where the sources outnumber capacity
};

}  // namespace
}  // namespace stacklens::compute::cuda
