// The transfer function of Boundary::ReflectExact and its convolution on a cuFFT half spectrum
// (reflect_exact.cuh); the kernels are in kernels/reflect_exact.cuh.
#include <cmath>
#include <vector>

#include "compute/cuda/kernels/reflect_exact.cuh"
#include "compute/cuda/reflect_exact.cuh"

namespace stacklens::compute::cuda::reflect_exact {
namespace {

constexpr int kThreads = 256;

// cos(π k d / n) for k < n and d ≤ reach, as [k][d], computed in double: the PSF is symmetric, so
// each axis sums over the distance d from its centre.
std::vector<float> cosineTable(int64_t n, int64_t reach) {
  std::vector<float> t(size_t(n * (reach + 1)));
  for (int64_t k = 0; k < n; ++k)
    for (int64_t d = 0; d <= reach; ++d) {
      const int64_t r = (k * d) % (2 * n);  // exact reduction before the cosine
      t[size_t(k * (reach + 1) + d)] = static_cast<float>(std::cos(M_PI * double(r) / double(n)));
    }
  return t;
}

unsigned blocksOf(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

}  // namespace

std::vector<float> twiddles(int64_t n) {
  std::vector<float> w(size_t(2 * n));
  for (int64_t k = 0; k < n; ++k) {
    const double angle = -M_PI * double(k) / double(2 * n);
    w[size_t(2 * k)] = static_cast<float>(std::cos(angle));
    w[size_t(2 * k + 1)] = static_cast<float>(std::sin(angle));
  }
  return w;
}

void makeTransfer(const ContextPtr& ctx, const float* psf, int64_t psfDepth, int64_t psfHeight,
                  int64_t psfWidth, int64_t depth, int64_t height, int64_t width, int64_t pitch,
                  float scale, float2* pairs) {
  cudaStream_t st = ctx->stream();
  auto groups = [](int64_t n) { return (n + kOutputs - 1) / kOutputs; };
  DeviceArray<float> rows(ctx, size_t(psfDepth * psfHeight * width));
  cosineSums<<<blocksOf(psfDepth * psfHeight * groups(width)), kThreads, 0, st>>>(
      psf, rows.get(), psfDepth * psfHeight, psfWidth, 1, width,
      ctx->constants(cosineTable(width, psfWidth / 2)));
  SL_LAUNCHED();
  DeviceArray<float> planes(ctx, size_t(psfDepth * height * width));
  cosineSums<<<blocksOf(psfDepth * groups(height) * width), kThreads, 0, st>>>(
      rows.get(), planes.get(), psfDepth, psfHeight, width, height,
      ctx->constants(cosineTable(height, psfHeight / 2)));
  SL_LAUNCHED();
  // Past width/2 (the pitch's padding) the pairs are zeros.
  SL_CUDA(cudaMemsetAsync(pairs, 0, size_t(depth * height * pitch) * sizeof(float2), st));
  transferPairs<<<blocksOf(groups(depth) * height * (width / 2 + 1)), kThreads, 0, st>>>(
      planes.get(), pairs, psfDepth, depth, height, width, pitch, scale,
      ctx->constants(cosineTable(depth, psfDepth / 2)));
  SL_LAUNCHED();
  // The temporaries are freed when this returns; the stream orders their reuse.
}

void convolve(cudaStream_t stream, float2* spectrum, const float2* pairs, int64_t depth,
              int64_t height, int64_t width, int64_t pitch) {
  const int64_t groups = (width / 2 + 1) * (height / 2 + 1) * (depth / 2 + 1);
  convolveGroups<<<blocksOf(groups), kThreads, 0, stream>>>(spectrum, pairs, depth, height, width,
                                                            pitch);
  SL_LAUNCHED();
}

}  // namespace stacklens::compute::cuda::reflect_exact
