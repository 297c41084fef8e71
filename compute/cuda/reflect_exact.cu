// The transfer function of Boundary::ReflectExact and its convolution on a cuFFT half spectrum
// (reflect_exact.cuh).
#include "compute/cuda/cuda_kernels.cuh"
#include "compute/cuda/reflect_exact.cuh"

namespace stacklens::compute::cuda::reflect_exact {
namespace {

constexpr int kThreads = 256;

// cos(π k m / n) with k·m reduced exactly modulo 2n first.
__device__ __forceinline__ float cosine(int64_t k, int64_t m, int64_t n) {
  int64_t r = (k * m) % (2 * n);
  if (r < 0) r += 2 * n;
  return cospif(float(r) / float(n));
}

// out[o][k][i] = Σ_j in[o][j][i] · cos(π k (j − centre) / n), k < n: one axis of H at a time.
__global__ void cosineSums(const float* __restrict__ in, float* __restrict__ out, int64_t outer,
                           int64_t m, int64_t inner, int64_t n, int64_t centre) {
  const int64_t id = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (id >= outer * n * inner) return;
  const int64_t i = id % inner, k = (id / inner) % n, o = id / (inner * n);
  const float* src = in + o * m * inner + i;
  float sum = 0.f;
  for (int64_t j = 0; j < m; ++j) sum += src[j * inner] * cosine(k, j - centre, n);
  out[id] = sum;
}

// The last axis (z, or a copy in 2D) into pairs: (H at kx, H at width − kx), 0 past width/2.
__global__ void cosinePairs(const float* __restrict__ in, float2* __restrict__ pairs, int64_t m,
                            int64_t centre, int64_t depth, int64_t height, int64_t width,
                            int64_t pitch, float scale) {
  const int64_t id = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (id >= depth * height * pitch) return;
  const int64_t kx = id % pitch, ky = (id / pitch) % height, kz = id / (pitch * height);
  float2 sum = make_float2(0.f, 0.f);
  if (kx <= width / 2) {
    const int64_t plane = height * width, mirror = width - kx;
    const float* src = in + ky * width;
    for (int64_t j = 0; j < m; ++j) {
      const float c = depth > 1 ? cosine(kz, j - centre, depth) : 1.f;
      sum.x += src[j * plane + kx] * c;
      if (mirror < width) sum.y += src[j * plane + mirror] * c;
    }
  }
  pairs[id] = make_float2(sum.x * scale, sum.y * scale);
}

// One thread per group (kx ≤ width/2, ky ≤ height/2, kz ≤ depth/2).
__global__ void convolveGroups(float2* __restrict__ s, const float2* __restrict__ h, int64_t depth,
                               int64_t height, int64_t width, int64_t pitch) {
  const int64_t gx = width / 2 + 1, gy = height / 2 + 1, gz = depth / 2 + 1;
  const int64_t id = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (id >= gx * gy * gz) return;
  const int64_t kx = id % gx, ky = (id / gx) % gy, kz = id / (gx * gy);
  const int64_t ky2 = (height - ky) % height, kz2 = (depth - kz) % depth;
  const float2 wx = twiddle(kx, width), wy = twiddle(ky, height);
  auto at = [&](int64_t z, int64_t y) { return (z * height + y) * pitch + kx; };
  if (depth == 1) {
    float2 v[2] = {s[at(0, ky)], s[at(0, ky2)]};
    const float2 t[2] = {h[at(0, ky)], h[at(0, ky2)]};
    convolveGroup(v, t, wx, wy);
    s[at(0, ky)] = v[0];
    s[at(0, ky2)] = v[1];
    return;
  }
  const int64_t zs[2] = {kz, kz2}, ys[2] = {ky, ky2};
  float2 v[2][2], t[2][2];
#pragma unroll
  for (int a = 0; a < 2; ++a)
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      v[a][b] = s[at(zs[b], ys[a])];
      t[a][b] = h[at(zs[b], ys[a])];
    }
  convolveGroup(v, t, wx, wy, twiddle(kz, depth));
#pragma unroll
  for (int a = 0; a < 2; ++a)
#pragma unroll
    for (int b = 0; b < 2; ++b) s[at(zs[b], ys[a])] = v[a][b];
}

unsigned blocksOf(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

}  // namespace

void makeTransfer(const ContextPtr& ctx, const float* psf, int64_t psfDepth, int64_t psfHeight,
                  int64_t psfWidth, int64_t depth, int64_t height, int64_t width, int64_t pitch,
                  float scale, float2* pairs) {
  cudaStream_t st = ctx->stream();
  DeviceArray<float> rows(ctx, size_t(psfDepth * psfHeight * width));
  cosineSums<<<blocksOf(psfDepth * psfHeight * width), kThreads, 0, st>>>(
      psf, rows.get(), psfDepth * psfHeight, psfWidth, 1, width, psfWidth / 2);
  SL_LAUNCHED();
  DeviceArray<float> planes(ctx, size_t(psfDepth * height * width));
  cosineSums<<<blocksOf(psfDepth * height * width), kThreads, 0, st>>>(
      rows.get(), planes.get(), psfDepth, psfHeight, width, height, psfHeight / 2);
  SL_LAUNCHED();
  cosinePairs<<<blocksOf(depth * height * pitch), kThreads, 0, st>>>(
      planes.get(), pairs, psfDepth, psfDepth / 2, depth, height, width, pitch, scale);
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
