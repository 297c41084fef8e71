// Segmentation on the GPU: threshold and connected components by a block-based lock-free union–
// find (each tile labelled in shared memory, then the tiles joined across their borders with
// atomicMin, so a component's root is its smallest raster index), relabelling to SciPy's order
// (label = rank of the component's root) after dropping components below the minimum size, fused
// with the per-source measurements (warp-aggregated atomics). Two small read-backs in all.
// Kernels: kernels/segment.cuh; launch shapes: tuning/segment.cuh.
#include <cub/device/device_scan.cuh>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/segment.cuh"
#include "compute/cuda/tuning/segment.cuh"

namespace stacklens::compute::cuda {

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
  DeviceArray<int32_t> sizes(ctx, count), rank(ctx, count + 1);
  const unsigned blocks = blocksFor(count, kPixelThreads);
  const bool eight = p.connectivity == 8;
  const dim3 tile(kTileW, kTileH);
  const int64_t group = 65535;  // grid z limit
  for (int64_t z0 = 0; z0 < s.z; z0 += group) {
    const dim3 tiles(blocksFor(s.x, kTileW), blocksFor(s.y, kTileH),
                     static_cast<unsigned>(std::min(group, s.z - z0)));
    labelTiles<<<tiles, tile, 0, st>>>(in.data(), labels, sizes.get(), int(s.y), int(s.x), int(z0),
                                       static_cast<float>(out.threshold), eight);
    mergeTileBorders<<<tiles, tile, 0, st>>>(labels, int(s.y), int(s.x), int(z0), eight);
  }
  flattenAndCount<<<blocks, kPixelThreads, 0, st>>>(labels, sizes.get(), count);
  markKeptRoots<<<blocks, kPixelThreads, 0, st>>>(labels, sizes.get(), count,
                                                  std::max<int64_t>(p.minPixels, 1));
  SL_LAUNCHED();
  size_t tempBytes = 0;
  SL_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, sizes.get(), rank.get(), count, st));
  {
    DeviceArray<unsigned char> temp(ctx, tempBytes);
    SL_CUDA(
        cub::DeviceScan::ExclusiveSum(temp.get(), tempBytes, sizes.get(), rank.get(), count, st));
  }
  countKept<<<1, 1, 0, st>>>(sizes.get(), rank.get(), count, rank.get() + count);
  SL_LAUNCHED();
  int32_t kept = 0;
  readBack(ctx, &kept, rank.get() + count, 1);
  const int64_t nSources = kept;
  if (nSources == 0) {
    SL_CUDA(cudaMemsetAsync(labels, 0, count * sizeof(int32_t), st));
    return out;
  }

  DeviceArray<SourceSums> sums(ctx, nSources);
  initSums<<<blocksFor(nSources, kPixelThreads), kPixelThreads, 0, st>>>(sums.get(), nSources);
  relabelAndMeasure<<<blocks, kPixelThreads, 0, st>>>(in.data(), labels, sizes.get(), rank.get(),
                                                      sums.get(), count, s.y, s.x,
                                                      out.background.clipped.median);
  SL_LAUNCHED();
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
