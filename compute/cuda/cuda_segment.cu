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
// publishSources writes the table: its count, then the sums.
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
    SL_CUDA(cudaHostAlloc(&host_, kHeader + n * sizeof(SourceSums), cudaHostAllocMapped));
    SL_CUDA(cudaHostGetDevicePointer(&device_, host_, 0));
    capacity_ = n;
  }
  int64_t capacity() const { return capacity_; }
  long long* count() const { return static_cast<long long*>(host_); }
  const SourceSums* sums() const {
    return reinterpret_cast<const SourceSums*>(static_cast<char*>(host_) + kHeader);
  }
  long long* deviceCount() const { return static_cast<long long*>(device_); }
  SourceSums* deviceSums() const {
    return reinterpret_cast<SourceSums*>(static_cast<char*>(device_) + kHeader);
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

}  // namespace

Segmentation segment(const ContextPtr& ctx, const Image& input, const SegmentParams& p,
                     const Job& job) {
  validate(p);
  if (input.empty()) throw InvalidArgument("segment: the image is empty");
  if (input.shape().count() >= INT32_MAX)
    throw InvalidArgument("segment: images of 2^31 pixels or more are not supported");
  Image in = onDevice(ctx, input);
  const Shape s = in.shape();
  const int64_t count = s.count();
  cudaStream_t st = ctx->stream();

  Segmentation out;
  out.background =
      p.background ? *p.background : sigmaClipValues(ctx, in.data(), count, p.clip, job);
  out.threshold = p.absoluteThreshold
                      ? *p.absoluteThreshold
                      : out.background.clipped.median + p.nSigma * out.background.clipped.std;
  if (!std::isfinite(out.threshold)) throw InvalidArgument("segment: the threshold is not finite");
  job.checkCancelled();

  out.labels = deviceBuffer<int32_t>(ctx, s);
  out.labels.spacing = in.spacing;
  int32_t* labels = out.labels.data();
  PublishedSources& published = publishedSources(ctx);
  const int64_t segmentsPerRow = blocksFor(s.x, kTileW);
  const int64_t segments = s.z * s.y * segmentsPerRow;
  // The sources' number is known on the host only at the end: sums for a typical image's are set
  // aside (and cleared by labelTiles) now, and a larger number measures again.
  int64_t capacity = std::min<int64_t>(count, std::max<int64_t>(kMinSourceCapacity, count / 256));
  ScratchLayout layout;
  const size_t parentAt = layout.add<int32_t>(count), countsAt = layout.add<int32_t>(segments),
               endsAt = layout.add<int32_t>(segments), masksAt = layout.add<uint32_t>(segments),
               sumsAt = layout.add<SourceSums>(capacity),
               scanAt = layout.add<unsigned char>(static_cast<int64_t>(scanTempBytes(segments)));
  DeviceArray<unsigned char> scratch(ctx, layout.bytes());
  auto carve = [&](size_t at) { return scratch.get() + at; };
  auto* parent = reinterpret_cast<int32_t*>(carve(parentAt));
  auto* rootCounts = reinterpret_cast<int32_t*>(carve(countsAt));
  auto* rootEnds = reinterpret_cast<int32_t*>(carve(endsAt));
  auto* rootMasks = reinterpret_cast<uint32_t*>(carve(masksAt));
  auto* sums = reinterpret_cast<SourceSums*>(carve(sumsAt));
  DeviceArray<SourceSums> moreSums;  // where the sources outnumber capacity
  const bool eight = p.connectivity == 8;
  const int64_t columnPixels = s.y * (segmentsPerRow - 1);
  const int64_t borderPixels = columnPixels + s.x * (blocksFor(s.y, kTileH) - 1);
  const int64_t group = 65535;  // grid y, z limit
  auto slicesFrom = [&](int64_t z0) { return static_cast<unsigned>(std::min(group, s.z - z0)); };
  const dim3 tile(kTileW, kTileThreadRows);
  for (int64_t z0 = 0; z0 < s.z; z0 += group) {
    const dim3 tiles(segmentsPerRow, blocksFor(s.y, kTileH), slicesFrom(z0));
    labelTiles<<<tiles, tile, 0, st>>>(in.data(), parent, rootMasks, rootCounts, int(s.y), int(s.x),
                                       int(z0), static_cast<float>(out.threshold), eight, sums,
                                       z0 == 0 ? capacity : 0);
    if (borderPixels > 0)
      mergeTileBorders<<<dim3(blocksFor(borderPixels, kPixelThreads), slicesFrom(z0)),
                         kPixelThreads, 0, st>>>(parent, rootMasks, rootCounts, int(s.y), int(s.x),
                                                 int(z0), eight, columnPixels, borderPixels);
  }
  for (int64_t z0 = 0; z0 < s.z && borderPixels > 0; z0 += group)
    flattenBorderPaths<<<dim3(blocksFor(borderPixels, kPixelThreads), slicesFrom(z0)),
                         kPixelThreads, 0, st>>>(parent, int(s.y), int(s.x), int(z0), eight,
                                                 columnPixels, borderPixels);
  SL_LAUNCHED();
  inclusiveSum(ctx, rootCounts, rootEnds, segments, carve(scanAt));
  auto relabel = [&] {
    for (int64_t z0 = 0; z0 < s.z; z0 += group) {
      const dim3 tiles(segmentsPerRow, blocksFor(s.y, kTileH), slicesFrom(z0));
      relabelAndMeasure<<<tiles, tile, 0, st>>>(in.data(), parent, rootMasks, rootEnds, labels,
                                                sums, capacity, int(s.y), int(s.x), int(z0),
                                                out.background.clipped.median);
    }
    SL_LAUNCHED();
  };
  relabel();
  const int64_t limit = std::min(capacity, published.capacity());
  publishSources<<<blocksFor(limit * kSumsWords, kPixelThreads), kPixelThreads, 0, st>>>(
      sums, rootEnds + segments - 1, limit, published.deviceCount(), published.deviceSums());
  SL_LAUNCHED();
  SL_CUDA(cudaStreamSynchronize(st));
  int64_t nSources = *published.count();
  if (nSources > capacity) {
    capacity = nSources;
    moreSums = DeviceArray<SourceSums>(ctx, capacity);
    sums = moreSums.get();
    initSums<<<blocksFor(capacity, kPixelThreads), kPixelThreads, 0, st>>>(sums, capacity);
    relabel();
  }
  std::vector<SourceSums> host;
  if (nSources > 0 && p.minPixels > 1) {
    DeviceArray<int32_t> kept(ctx, nSources), keptEnds(ctx, nSources);
    DeviceArray<SourceSums> keptSums(ctx, nSources);
    const unsigned sourceBlocks = blocksFor(nSources, kPixelThreads);
    markKeptSources<<<sourceBlocks, kPixelThreads, 0, st>>>(sums, kept.get(), nSources,
                                                            p.minPixels);
    inclusiveSum(ctx, kept.get(), keptEnds.get(), nSources);
    renumberKept<<<blocksFor(count, kPixelThreads), kPixelThreads, 0, st>>>(labels, kept.get(),
                                                                            keptEnds.get(), count);
    compactKept<<<sourceBlocks, kPixelThreads, 0, st>>>(sums, keptSums.get(), kept.get(),
                                                        keptEnds.get(), nSources);
    SL_LAUNCHED();
    int32_t keptCount = 0;
    readBack(ctx, &keptCount, keptEnds.get() + nSources - 1, 1);
    nSources = keptCount;
    host.resize(nSources);
    if (nSources > 0) readBack(ctx, host.data(), keptSums.get(), nSources);
  } else if (nSources > limit) {
    host.resize(nSources);
    readBack(ctx, host.data(), sums, nSources);
    published.reserve(nSources);  // for the next image like this one
  } else {
    host.assign(published.sums(), published.sums() + nSources);
  }
  if (nSources == 0) return out;

  out.sources.reserve(nSources);
  for (int64_t k = 0; k < nSources; ++k) {
    const SourceSums& h = host[k];
    Source src;
    src.label = static_cast<int32_t>(k + 1);
    src.npix = static_cast<int64_t>(h.npix);
    src.flux = h.flux;
    if (h.flux > 0) {  // else the unweighted mean position (as the CPU backend)
      src.centroidX = h.fluxX / h.flux;
      src.centroidY = h.fluxY / h.flux;
    } else {
      src.centroidX = h.sumX / double(h.npix);
      src.centroidY = h.sumY / double(h.npix);
    }
    uint32_t key = static_cast<uint32_t>(h.peak >> 32);
    uint32_t u = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
    std::memcpy(&src.peak, &u, sizeof(float));
    int64_t peakIndex = int64_t(0xffffffffull - (h.peak & 0xffffffffull));
    src.peakX = peakIndex % s.x;
    src.peakY = (peakIndex / s.x) % s.y;
    src.z = peakIndex / (s.x * s.y);  // components never cross slices
    src.xMin = h.xMin;
    src.xMax = h.xMax;
    src.yMin = h.yMin;
    src.yMax = h.yMax;
    out.sources.push_back(src);
  }
  return out;
}

}  // namespace stacklens::compute::cuda
