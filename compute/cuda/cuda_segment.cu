// Segmentation on the GPU: threshold, connected components by a lock-free union–find (each pixel
// links to its earlier neighbours with atomicMin, so a component's root is its smallest raster
// index), relabelling to SciPy's order (label = rank of the component's root) after dropping
// components below the minimum size, and per-source measurements by atomic segmented reductions.
#include <cub/device/device_scan.cuh>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute/cuda/cuda_context.cuh"
#include "compute/cuda/cuda_kernels.cuh"

namespace stacklens::compute::cuda {
namespace {

__global__ void thresholdLabels(const float* __restrict__ in, int32_t* __restrict__ labels,
                                int64_t count, float threshold) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < count) labels[i] = in[i] > threshold ? static_cast<int32_t>(i) : -1;
}

__device__ inline int32_t findRoot(const int32_t* labels, int32_t i) {
  int32_t parent = labels[i];
  while (parent != i) {
    i = parent;
    parent = labels[i];
  }
  return i;
}

// Joins the trees of a and b, the larger root pointing to the smaller one.
__device__ inline void unite(int32_t* labels, int32_t a, int32_t b) {
  a = findRoot(labels, a);
  b = findRoot(labels, b);
  while (a != b) {
    if (a < b) {
      int32_t t = a;
      a = b;
      b = t;
    }
    int32_t old = atomicMin(&labels[a], b);
    if (old == a) break;  // a was a root and now hangs below b
    a = findRoot(labels, old);
    b = findRoot(labels, b);
  }
}

__global__ void mergeNeighbours(int32_t* labels, int64_t count, int64_t ny, int64_t nx,
                                bool eight) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count || labels[i] < 0) return;
  int64_t x = i % nx, y = (i / nx) % ny;
  int32_t me = static_cast<int32_t>(i);
  if (x > 0 && labels[i - 1] >= 0) unite(labels, me, static_cast<int32_t>(i - 1));
  if (y > 0) {
    int64_t up = i - nx;
    if (labels[up] >= 0) unite(labels, me, static_cast<int32_t>(up));
    if (eight) {
      if (x > 0 && labels[up - 1] >= 0) unite(labels, me, static_cast<int32_t>(up - 1));
      if (x + 1 < nx && labels[up + 1] >= 0) unite(labels, me, static_cast<int32_t>(up + 1));
    }
  }
}

__global__ void flattenAndCount(int32_t* labels, int32_t* sizes, int64_t count) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count || labels[i] < 0) return;
  int32_t root = findRoot(labels, static_cast<int32_t>(i));
  labels[i] = root;
  atomicAdd(&sizes[root], 1);
}

// sizes[i] becomes 1 where pixel i is the root of a component that is kept, else 0.
__global__ void markKeptRoots(const int32_t* __restrict__ labels, int32_t* sizes, int64_t count,
                              int64_t minPixels) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  sizes[i] = (labels[i] == i && sizes[i] >= minPixels) ? 1 : 0;
}

__global__ void relabel(int32_t* labels, const int32_t* __restrict__ kept,
                        const int32_t* __restrict__ rank, int64_t count) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  int32_t root = labels[i];
  labels[i] = (root >= 0 && kept[root]) ? rank[root] + 1 : 0;
}

struct SourceSums {
  unsigned long long npix;
  double flux, fluxX, fluxY, sumX, sumY;
  unsigned long long peak;  // ordered value key << 32 | (~raster index): max = brightest, first
  int32_t xMin, xMax, yMin, yMax;
};

__global__ void initSums(SourceSums* sums, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  SourceSums s{};
  s.xMin = s.yMin = INT32_MAX;
  s.xMax = s.yMax = -1;
  sums[i] = s;
}

__global__ void measure(const float* __restrict__ in, const int32_t* __restrict__ labels,
                        SourceSums* sums, int64_t count, int64_t ny, int64_t nx,
                        double background) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  int32_t label = labels[i];
  if (label <= 0) return;
  SourceSums& s = sums[label - 1];
  int32_t x = static_cast<int32_t>(i % nx), y = static_cast<int32_t>((i / nx) % ny);
  float v = in[i];
  double f = double(v) - background;
  atomicAdd(&s.npix, 1ull);
  atomicAdd(&s.flux, f);
  atomicAdd(&s.fluxX, f * x);
  atomicAdd(&s.fluxY, f * y);
  atomicAdd(&s.sumX, double(x));
  atomicAdd(&s.sumY, double(y));
  unsigned long long key = (static_cast<unsigned long long>(orderedKey(v)) << 32) |
                           (0xffffffffull - static_cast<unsigned long long>(i));
  atomicMax(&s.peak, key);
  atomicMin(&s.xMin, x);
  atomicMax(&s.xMax, x);
  atomicMin(&s.yMin, y);
  atomicMax(&s.yMax, y);
}

}  // namespace

Segmentation segment(const ContextPtr& ctx, const Image& input, const SegmentParams& p,
                     const Job& job) {
  if (p.connectivity != 4 && p.connectivity != 8)
    throw InvalidArgument("segment: connectivity must be 4 or 8 (got " +
                          std::to_string(p.connectivity) + ")");
  if (p.minPixels < 0) throw InvalidArgument("segment: the minimum pixel count must be >= 0");
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
  DeviceArray<int32_t> sizes(ctx, count), rank(ctx, count);
  SL_CUDA(cudaMemsetAsync(sizes.get(), 0, count * sizeof(int32_t), st));
  const unsigned blocks = blocksFor(count, 256);
  // Compared in float like the CPU (value > threshold, the threshold rounded to float once).
  thresholdLabels<<<blocks, 256, 0, st>>>(in.data(), labels, count,
                                          static_cast<float>(out.threshold));
  mergeNeighbours<<<blocks, 256, 0, st>>>(labels, count, s.y, s.x, p.connectivity == 8);
  flattenAndCount<<<blocks, 256, 0, st>>>(labels, sizes.get(), count);
  markKeptRoots<<<blocks, 256, 0, st>>>(labels, sizes.get(), count,
                                        std::max<int64_t>(p.minPixels, 1));
  SL_LAUNCHED();
  size_t tempBytes = 0;
  SL_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, sizes.get(), rank.get(), count, st));
  {
    DeviceArray<unsigned char> temp(ctx, tempBytes);
    SL_CUDA(
        cub::DeviceScan::ExclusiveSum(temp.get(), tempBytes, sizes.get(), rank.get(), count, st));
  }
  relabel<<<blocks, 256, 0, st>>>(labels, sizes.get(), rank.get(), count);
  SL_LAUNCHED();
  int32_t lastRank = 0, lastKept = 0;
  readBack(ctx, &lastRank, rank.get() + count - 1, 1);
  readBack(ctx, &lastKept, sizes.get() + count - 1, 1);
  const int64_t nSources = int64_t(lastRank) + lastKept;
  if (nSources == 0) return out;

  DeviceArray<SourceSums> sums(ctx, nSources);
  initSums<<<blocksFor(nSources, 256), 256, 0, st>>>(sums.get(), nSources);
  measure<<<blocks, 256, 0, st>>>(in.data(), labels, sums.get(), count, s.y, s.x,
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
