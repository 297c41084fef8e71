// Segmentation on the GPU: threshold and connected components by a block-based lock-free union–
// find (each tile labelled in shared memory, then the tiles joined across their borders with
// atomicMin, so a component's root is its smallest raster index), the roots numbered in raster
// order (SciPy's) from per-segment root bits and a scan of their counts, and the relabelling
// fused with the per-source measurements. The host waits once, at the end: the table is
// published into mapped host memory; components below the minimum size are dropped after they
// are measured. Kernels: kernels/segment.cuh (labelling), segment_measure.cuh (relabelling and
// measuring), segment_sources.cuh (the table); launch shapes: tuning/segment.cuh.
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/segment.cuh"
#include "compute/cuda/kernels/segment_measure.cuh"
#include "compute/cuda/kernels/segment_sources.cuh"
#include "compute/cuda/tuning/segment.cuh"

namespace stacklens::compute::cuda {
namespace {

// out[i] = in[0] + … + in[i] (CUB's single-pass scan), ordered on the context's stream; temp:
// scanTempBytes(n) bytes, or null for scratch of its own.
size_t scanTempBytes(int64_t n) {
  size_t bytes = 0;
  SL_CUDA(cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const int32_t*>(nullptr),
                                        static_cast<int32_t*>(nullptr), n));
  return bytes;
}
void inclusiveSum(const ContextPtr& ctx, const int32_t* in, int32_t* out, int64_t n,
                  void* temp = nullptr) {
  size_t bytes = scanTempBytes(n);
  DeviceArray<unsigned char> own;
  if (!temp) {
    own = DeviceArray<unsigned char>(ctx, bytes);
    temp = own.get();
  }
  SL_CUDA(cub::DeviceScan::InclusiveSum(temp, bytes, in, out, n, ctx->stream()));
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
  const Source* sources() const {
    return reinterpret_cast<const Source*>(static_cast<char*>(host_) + kHeader);
  }
  long long* deviceCount() const { return static_cast<long long*>(device_); }
  Source* deviceSources() const {
    return reinterpret_cast<Source*>(static_cast<char*>(device_) + kHeader);
  }

 private:
  static constexpr size_t kHeader = 64;
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

// The launches' geometry: 32 × 64 tiles (a tile row is one 32-pixel segment), slices in groups
// that the grid's y and z limits allow, and the tile-border pixels the merge takes one a thread.
struct SegmentGrid {
  explicit SegmentGrid(const Shape& shape)
      : s(shape),
        segmentsPerRow(blocksFor(s.x, kTileW)),
        segments(s.z * s.y * segmentsPerRow),
        columnPixels(s.y * (segmentsPerRow - 1)),
        borderPixels(columnPixels + s.x * (blocksFor(s.y, kTileH) - 1)) {}
  static constexpr int64_t kGroup = 65535;
  unsigned slicesFrom(int64_t z0) const { return unsigned(std::min(kGroup, s.z - z0)); }
  dim3 tiles(int64_t z0) const {
    return dim3(unsigned(segmentsPerRow), blocksFor(s.y, kTileH), slicesFrom(z0));
  }
  dim3 borders(int64_t z0) const {
    return dim3(blocksFor(borderPixels, kPixelThreads), slicesFrom(z0));
  }
  Shape s;
  int64_t segmentsPerRow, segments, columnPixels, borderPixels;
};

// The scratch arrays of one segmentation, carved out of one device allocation: every pool
// allocation is host time spent before the first kernel starts.
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
                 scanAt = layout.add<unsigned char>(static_cast<int64_t>(scanBytes));
    memory = DeviceArray<unsigned char>(ctx, layout.bytes());
    parent = carve<int32_t>(parentAt);
    fgMasks = carve<uint32_t>(fgAt);
    rootCounts = carve<int32_t>(countsAt);
    rootEnds = carve<int32_t>(endsAt);
    rootMasks = carve<uint32_t>(masksAt);
    sums = carve<SourceSums>(sumsAt);
    scanTemp = carve<unsigned char>(scanAt);
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
  DeviceArray<SourceSums> moreSums;  // where the sources outnumber capacity
};

// The background statistics (given, or clipped here) and the threshold above them.
void setBackgroundAndThreshold(const ContextPtr& ctx, const Image& in, const SegmentParams& p,
                               const Job& job, Segmentation& out) {
  out.background = p.background ? *p.background
                                : sigmaClipValues(ctx, in.data(), in.shape().count(), p.clip, job);
  out.threshold = p.absoluteThreshold
                      ? *p.absoluteThreshold
                      : out.background.clipped.median + p.nSigma * out.background.clipped.std;
  if (!std::isfinite(out.threshold)) throw InvalidArgument("segment: the threshold is not finite");
}

// Thresholds and labels the components (a root: a component's first pixel in raster order), and
// writes the background segments' final labels; clears the first sources' sums.
void labelComponents(const ContextPtr& ctx, const Image& in, float threshold, bool eight,
                     const SegmentGrid& g, SegmentScratch& w, int32_t* labels) {
  cudaStream_t st = ctx->stream();
  const int ny = int(g.s.y), nx = int(g.s.x);
  const dim3 tile(kTileW, kTileThreadRows);
  for (int64_t z0 = 0; z0 < g.s.z; z0 += SegmentGrid::kGroup) {
    labelTiles<<<g.tiles(z0), tile, 0, st>>>(in.data(), w.parent, w.fgMasks, w.rootMasks,
                                             w.rootCounts, labels, ny, nx, int(z0), threshold,
                                             eight, w.sums, z0 == 0 ? w.capacity : 0);
    if (g.borderPixels > 0)
      mergeTileBorders<<<g.borders(z0), kPixelThreads, 0, st>>>(
          w.parent, w.fgMasks, w.rootMasks, w.rootCounts, ny, nx, int(z0), eight, g.columnPixels,
          g.borderPixels);
  }
  for (int64_t z0 = 0; z0 < g.s.z && g.borderPixels > 0; z0 += SegmentGrid::kGroup)
    flattenBorderPaths<<<g.borders(z0), kPixelThreads, 0, st>>>(
        w.parent, w.fgMasks, ny, nx, int(z0), eight, g.columnPixels, g.borderPixels);
  SL_LAUNCHED();
}

// Numbers the roots in raster order (rootEnds) and writes the foreground segments' labels,
// measuring the sources numbered up to w.capacity into w.sums.
void relabelAndMeasureAll(const ContextPtr& ctx, const Image& in, const SegmentGrid& g,
                          SegmentScratch& w, int32_t* labels, double background) {
  const dim3 tile(kTileW, kTileThreadRows);
  for (int64_t z0 = 0; z0 < g.s.z; z0 += SegmentGrid::kGroup)
    relabelAndMeasure<<<g.tiles(z0), tile, 0, ctx->stream()>>>(
        in.data(), w.parent, w.fgMasks, w.rootMasks, w.rootEnds, labels, w.sums, w.capacity,
        int(g.s.y), int(g.s.x), int(z0), background);
  SL_LAUNCHED();
}

// The table entries of the first min(*found, limit) sources into `to`, and *found into `count`
// unless it is null.
void publishTable(const ContextPtr& ctx, const SourceSums* sums, const int32_t* found,
                  int64_t limit, const Shape& s, long long* count, Source* to) {
  publishSources<<<std::max<unsigned>(1, blocksFor(limit, kPublishThreads)), kPublishThreads, 0,
                   ctx->stream()>>>(sums, found, limit, s.y, s.x, count, to);
  SL_LAUNCHED();
}

// All n sources' table entries, read back from the device.
std::vector<Source> readTable(const ContextPtr& ctx, const SourceSums* sums, const int32_t* found,
                              int64_t n, const Shape& s) {
  std::vector<Source> table(n);
  if (n == 0) return table;
  DeviceArray<Source> entries(ctx, n);
  publishTable(ctx, sums, found, n, s, nullptr, entries.get());
  readBack(ctx, table.data(), entries.get(), n);
  return table;
}

// Drops the sources below minPixels (their labels to 0) and renumbers the rest in order; returns
// the kept sources' table.
std::vector<Source> keepLargeSources(const ContextPtr& ctx, const SourceSums* sums, int64_t n,
                                     int64_t minPixels, int32_t* labels, const Shape& s) {
  cudaStream_t st = ctx->stream();
  DeviceArray<int32_t> kept(ctx, n), keptEnds(ctx, n);
  DeviceArray<SourceSums> keptSums(ctx, n);
  const unsigned sourceBlocks = blocksFor(n, kPixelThreads);
  markKeptSources<<<sourceBlocks, kPixelThreads, 0, st>>>(sums, kept.get(), n, minPixels);
  inclusiveSum(ctx, kept.get(), keptEnds.get(), n);
  renumberKept<<<blocksFor(s.count(), kPixelThreads), kPixelThreads, 0, st>>>(
      labels, kept.get(), keptEnds.get(), s.count());
  compactKept<<<sourceBlocks, kPixelThreads, 0, st>>>(sums, keptSums.get(), kept.get(),
                                                      keptEnds.get(), n);
  SL_LAUNCHED();
  int32_t keptCount = 0;
  readBack(ctx, &keptCount, keptEnds.get() + n - 1, 1);
  return readTable(ctx, keptSums.get(), keptEnds.get() + n - 1, keptCount, s);
}

}  // namespace

Segmentation segment(const ContextPtr& ctx, const Image& input, const SegmentParams& p,
                     const Job& job) {
  validate(p);
  if (input.empty()) throw InvalidArgument("segment: the image is empty");
  if (input.shape().count() >= INT32_MAX)
    throw InvalidArgument("segment: images of 2^31 pixels or more are not supported");
  Image in = onDevice(ctx, input);
  const Shape s = in.shape();
  Segmentation out;
  setBackgroundAndThreshold(ctx, in, p, job, out);
  job.checkCancelled();

  out.labels = deviceBuffer<int32_t>(ctx, s);
  out.labels.spacing = in.spacing;
  int32_t* labels = out.labels.data();
  const double background = out.background.clipped.median;
  PublishedSources& published = publishedSources(ctx);
  const SegmentGrid grid(s);
  SegmentScratch w(ctx, grid);
  labelComponents(ctx, in, static_cast<float>(out.threshold), p.connectivity == 8, grid, w, labels);
  SL_CUDA(cub::DeviceScan::InclusiveSum(w.scanTemp, w.scanBytes, w.rootCounts, w.rootEnds,
                                        grid.segments, ctx->stream()));
  relabelAndMeasureAll(ctx, in, grid, w, labels, background);
  const int32_t* found = w.rootEnds + grid.segments - 1;
  const int64_t limit = std::min(w.capacity, published.capacity());
  publishTable(ctx, w.sums, found, limit, s, published.deviceCount(), published.deviceSources());
  SL_CUDA(cudaStreamSynchronize(ctx->stream()));
  const int64_t n = *published.count();
  if (n > w.capacity) {  // measured again with room for every source
    w.capacity = n;
    w.moreSums = DeviceArray<SourceSums>(ctx, n);
    w.sums = w.moreSums.get();
    initSums<<<blocksFor(n, kPixelThreads), kPixelThreads, 0, ctx->stream()>>>(w.sums, n);
    relabelAndMeasureAll(ctx, in, grid, w, labels, background);
  }
  if (n > 0 && p.minPixels > 1) {
    out.sources = keepLargeSources(ctx, w.sums, n, p.minPixels, labels, s);
  } else if (n > limit) {
    out.sources = readTable(ctx, w.sums, found, n, s);
    published.reserve(n);  // for the next image like this one
  } else {
    out.sources.assign(published.sources(), published.sources() + n);
  }
  return out;
}

}  // namespace stacklens::compute::cuda
