// Segmentation on the GPU: threshold and connected components by a block-based lock-free union–
// find (each tile labelled in shared memory, then the tiles joined across their borders with
// atomicMin, so a component's root is its smallest raster index), the roots numbered in raster
// order (SciPy's) from per-segment root counts and their scan, and the relabelling fused with the
// per-source measurements (warp-aggregated atomics). Nothing is read back until the end (the
// sources' number, then their sums); components below the minimum size are dropped after they
// are measured. Kernels: kernels/segment.cuh; launch shapes: tuning/segment.cuh.
#include <cub/device/device_scan.cuh>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/segment.cuh"
#include "compute/cuda/tuning/segment.cuh"

namespace stacklens::compute::cuda {
namespace {

// out[i] = in[0] + … + in[i] (CUB's single-pass scan), ordered on the context's stream.
void inclusiveSum(const ContextPtr& ctx, const int32_t* in, int32_t* out, int64_t n) {
  size_t tempBytes = 0;
  SL_CUDA(cub::DeviceScan::InclusiveSum(nullptr, tempBytes, in, out, n, ctx->stream()));
  DeviceArray<unsigned char> temp(ctx, tempBytes);
  SL_CUDA(cub::DeviceScan::InclusiveSum(temp.get(), tempBytes, in, out, n, ctx->stream()));
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
  const int64_t segmentsPerRow = blocksFor(s.x, kTileW);
  const int64_t segments = s.z * s.y * segmentsPerRow;
  DeviceArray<int32_t> parent(ctx, count), rootCounts(ctx, segments), rootEnds(ctx, segments);
  const bool eight = p.connectivity == 8;
  const int64_t columnPixels = s.y * (segmentsPerRow - 1);
  const int64_t borderPixels = columnPixels + s.x * (blocksFor(s.y, kTileH) - 1);
  const int64_t group = 65535;  // grid y, z limit
  for (int64_t z0 = 0; z0 < s.z; z0 += group) {
    const unsigned slices = static_cast<unsigned>(std::min(group, s.z - z0));
    const dim3 tiles(segmentsPerRow, blocksFor(s.y, kTileH), slices);
    labelTiles<<<tiles, dim3(kTileW, kTileThreadRows), 0, st>>>(
        in.data(), parent.get(), rootCounts.get(), int(s.y), int(s.x), int(z0),
        static_cast<float>(out.threshold), eight);
    if (borderPixels > 0)
      mergeTileBorders<<<dim3(blocksFor(borderPixels, kPixelThreads), slices), kPixelThreads, 0,
                         st>>>(parent.get(), rootCounts.get(), int(s.y), int(s.x), int(z0), eight,
                               columnPixels, borderPixels);
  }
  for (int64_t z0 = 0; z0 < s.z && borderPixels > 0; z0 += group) {
    const unsigned slices = static_cast<unsigned>(std::min(group, s.z - z0));
    flattenBorderPaths<<<dim3(blocksFor(borderPixels, kPixelThreads), slices), kPixelThreads, 0,
                         st>>>(parent.get(), int(s.y), int(s.x), int(z0), eight, columnPixels,
                               borderPixels);
  }
  SL_LAUNCHED();
  inclusiveSum(ctx, rootCounts.get(), rootEnds.get(), segments);
  // The sources' number is read back only at the end: sums for a typical image's are set aside
  // now, and a larger number measures again.
  int64_t capacity = std::min<int64_t>(count, std::max<int64_t>(kMinSourceCapacity, count / 256));
  DeviceArray<SourceSums> sums(ctx, capacity);
  const unsigned blocks = blocksFor(count, kPixelThreads);
  auto relabel = [&] {
    relabelAndMeasure<<<blocks, kPixelThreads, 0, st>>>(in.data(), parent.get(), labels,
                                                        sums.get(), capacity, count, s.y, s.x,
                                                        out.background.clipped.median);
    SL_LAUNCHED();
  };
  numberRoots<<<blocksFor(segments, kPixelThreads), kPixelThreads, 0, st>>>(
      parent.get(), rootCounts.get(), rootEnds.get(), segments, int(s.x), sums.get(), capacity);
  relabel();
  int32_t found = 0;
  readBack(ctx, &found, rootEnds.get() + segments - 1, 1);
  int64_t nSources = found;
  if (nSources > capacity) {
    capacity = nSources;
    sums = DeviceArray<SourceSums>(ctx, capacity);
    initSums<<<blocksFor(capacity, kPixelThreads), kPixelThreads, 0, st>>>(sums.get(), capacity);
    relabel();
  }
  if (nSources > 0 && p.minPixels > 1) {
    DeviceArray<int32_t> kept(ctx, nSources), keptEnds(ctx, nSources);
    DeviceArray<SourceSums> keptSums(ctx, nSources);
    const unsigned sourceBlocks = blocksFor(nSources, kPixelThreads);
    markKeptSources<<<sourceBlocks, kPixelThreads, 0, st>>>(sums.get(), kept.get(), nSources,
                                                            p.minPixels);
    inclusiveSum(ctx, kept.get(), keptEnds.get(), nSources);
    renumberKept<<<blocks, kPixelThreads, 0, st>>>(labels, kept.get(), keptEnds.get(), count);
    compactKept<<<sourceBlocks, kPixelThreads, 0, st>>>(sums.get(), keptSums.get(), kept.get(),
                                                        keptEnds.get(), nSources);
    SL_LAUNCHED();
    readBack(ctx, &found, keptEnds.get() + nSources - 1, 1);
    nSources = found;
    sums = std::move(keptSums);
  }
  if (nSources == 0) return out;

  std::vector<SourceSums> host(nSources);
  readBack(ctx, host.data(), sums.get(), nSources);
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
