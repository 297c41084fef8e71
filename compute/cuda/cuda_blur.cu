// Gaussian blur on the GPU, scipy's reflect boundary: in 2D (equal, small radii) one fused kernel
// per tile (x pass into shared memory, then the y pass: one read and one write of the image); else,
// and along z, one separable pass per axis through shared-memory tiles (cuda_filters.cuh);
// optional NaN-aware normalised convolution. Launch shapes: tuning/blur.cuh.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/cuda_filters.cuh"
#include "compute/cuda/kernels/cuda_kernels.cuh"
#include "compute/cuda/tuning/blur.cuh"
#include "compute/params.h"

namespace stacklens::compute::cuda {
namespace {

__global__ void splitNan(const float* __restrict__ in, float2* __restrict__ out, int64_t count) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  float v = in[i];
  out[i] = isnan(v) ? make_float2(0.f, 0.f) : make_float2(v, 1.f);
}

// Normalised convolution: blurred values over blurred weights; NaN stays where it was.
__global__ void joinNan(const float2* __restrict__ blurred, const float* __restrict__ original,
                        float* __restrict__ out, int64_t count) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  float2 b = blurred[i];
  out[i] = (isnan(original[i]) || b.y <= 0.f) ? __int_as_float(0x7fc00000) : b.x / b.y;
}

// The fused kernel's tile shape and radii (tuning::FusedBlurPolicy).
using FusedPolicy = tuning::FusedBlurPolicy;
constexpr int kFuseW = FusedPolicy::tileWidth, kFuseThreads = FusedPolicy::threads,
              kFuseMaxRadius = FusedPolicy::maxRadius;
__host__ __device__ constexpr int fusedTileHeight(int radius) {
  return FusedPolicy::tileHeight(radius);
}
// Each thread makes four adjacent outputs per step along x and y; a warp loads a row.
static_assert(kFuseW % 4 == 0 && kFuseThreads % 32 == 0);
static_assert(FusedPolicy::tallTileHeight % 4 == 0 && FusedPolicy::shortTileHeight % 4 == 0);

// The taps of both axes travel as a kernel parameter: with the radius a template argument every
// tap is a constant-bank operand of its multiply–add.
struct FusedTaps {
  float x[2 * kFuseMaxRadius + 1], y[2 * kFuseMaxRadius + 1];
};

// One kFuseW × fusedTileHeight(R) output tile per block (radius R on both axes): the input tile
// with its halo (reflected at the image edges) goes to shared memory, the x pass over all its rows
// into a second shared array, then the y pass to the output: one read and one write of the image.
// Each thread makes four adjacent outputs per step (one shared read per tap for four outputs); the
// row pitch ≡ 1 (mod 4) keeps the x pass's four-wide segments free of bank conflicts. Sums run in
// the same order as the separable passes (x then y, taps in order), so both paths give the same
// values.
template <int R>
__global__ void __launch_bounds__(kFuseThreads)
    blur2dFused(const float* __restrict__ in, float* __restrict__ out, int ny, int nx,
                FusedTaps taps) {
  constexpr int kFuseH = fusedTileHeight(R);
  constexpr int kInW = kFuseW + 2 * R, kInH = kFuseH + 2 * R, kTaps = 2 * R + 1;
  constexpr int kPitch = (kInW + 3) / 4 * 4 + 1;
  __shared__ float src[kInH * kPitch];
  __shared__ __align__(16) float rows[kInH * kFuseW];
  const int x0 = blockIdx.x * kFuseW, y0 = blockIdx.y * kFuseH;
  const int64_t sliceBase = int64_t(blockIdx.z) * ny * nx;
  const float* slice = in + sliceBase;
  // A warp per row (one reflection per row, no index division), a few rows in flight per warp.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll(FusedPolicy::rowsInFlight)
  for (int r = warp; r < kInH; r += kFuseThreads / 32) {
    int y = y0 - R + r;
    if (y < 0 || y >= ny) y = int(reflectIndex(y, ny));
    const float* row = slice + int64_t(y) * nx;
#pragma unroll
    for (int c = lane; c < kInW; c += 32) {
      int x = x0 - R + c;
      if (x < 0 || x >= nx) x = int(reflectIndex(x, nx));
      src[r * kPitch + c] = __ldg(row + x);
    }
  }
  __syncthreads();
  for (int seg = threadIdx.x; seg < kInH * (kFuseW / 4); seg += kFuseThreads) {
    const int r = seg / (kFuseW / 4), c = (seg % (kFuseW / 4)) * 4;
    const float* p = src + r * kPitch + c;
    float v0 = p[0], v1 = p[1], v2 = p[2];
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
#pragma unroll
    for (int d = 0; d < kTaps; ++d) {
      const float v3 = p[d + 3], w = taps.x[d];
      a0 += w * v0;
      a1 += w * v1;
      a2 += w * v2;
      a3 += w * v3;
      v0 = v1;
      v1 = v2;
      v2 = v3;
    }
    *reinterpret_cast<float4*>(rows + r * kFuseW + c) = make_float4(a0, a1, a2, a3);
  }
  __syncthreads();
  for (int item = threadIdx.x; item < kFuseW * (kFuseH / 4); item += kFuseThreads) {
    const int c = item % kFuseW, r = (item / kFuseW) * 4;
    const float* p = rows + r * kFuseW + c;
    float v0 = p[0], v1 = p[kFuseW], v2 = p[2 * kFuseW];
    float a[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int d = 0; d < kTaps; ++d) {
      const float v3 = p[(d + 3) * kFuseW], w = taps.y[d];
      a[0] += w * v0;
      a[1] += w * v1;
      a[2] += w * v2;
      a[3] += w * v3;
      v0 = v1;
      v1 = v2;
      v2 = v3;
    }
    const int x = x0 + c;
    if (x >= nx) continue;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int y = y0 + r + k;
      if (y < ny) out[sliceBase + int64_t(y) * nx + x] = a[k];
    }
  }
}

using FusedKernel = void (*)(const float*, float*, int, int, FusedTaps);
template <int... Rs>
constexpr std::array<FusedKernel, sizeof...(Rs)> fusedKernels(std::integer_sequence<int, Rs...>) {
  return {&blur2dFused<Rs + 1>...};
}
// blur2dFused<1> … blur2dFused<kFuseMaxRadius>.
constexpr auto kFusedKernels = fusedKernels(std::make_integer_sequence<int, kFuseMaxRadius>{});

// SciPy's _gaussian_kernel1d: exp(−x²/2σ²) sampled at integers, normalised to sum 1.
std::vector<float> gaussianWeights(double sigma, int radius) {
  std::vector<double> w(2 * radius + 1);
  double sum = 0;
  for (int i = -radius; i <= radius; ++i)
    sum += w[i + radius] = std::exp(-0.5 * i * i / (sigma * sigma));
  std::vector<float> out(w.size());
  for (size_t i = 0; i < w.size(); ++i) out[i] = static_cast<float>(w[i] / sum);
  return out;
}

template <class T>
void blurAllAxes(const ContextPtr& ctx, const T* in, T* a, T* b, T** result, const Shape& s,
                 const BlurParams& p, const Job& job) {
  // x, then y, then z, ping-ponging between a and b; the input is only read.
  const T* cur = in;
  T* targets[2] = {a, b};
  int which = 0;
  const double sigmas[3] = {p.sigmaZ, p.sigmaY, p.sigmaX};
  for (int axis : {2, 1, 0}) {
    double sigma = sigmas[axis];
    int64_t n = axis == 0 ? s.z : axis == 1 ? s.y : s.x;
    if (sigma <= 0 || n <= 1) continue;
    job.checkCancelled();
    const int64_t reach = blurRadius(sigma, p.truncate);
    if (reach > 8192) throw InvalidArgument("gaussian blur: sigma too large (radius > 8192)");
    const int radius = static_cast<int>(reach);
    std::vector<float> hw = gaussianWeights(sigma, radius);
    const float* w = ctx->constants(hw);
    T* dst = targets[which];
    filterAlong<T, false>(ctx, cur, dst, s, axis, w, radius);
    cur = dst;
    which ^= 1;
  }
  *result = const_cast<T*>(cur);
}

}  // namespace

Image gaussianBlur(const ContextPtr& ctx, const Image& input, const BlurParams& p, const Job& job) {
  validate(p);
  if (input.empty()) throw InvalidArgument("gaussian blur: the image is empty");
  if (input.shape().y > 65535 || input.shape().x > INT32_MAX / 2 || input.shape().z > INT32_MAX / 2)
    throw InvalidArgument("gaussian blur: images taller than 65535 rows are not supported");
  Image in = onDevice(ctx, input);
  const Shape s = in.shape();
  const int64_t count = s.count();
  Image out = deviceBuffer<float>(ctx, s);
  out.spacing = in.spacing;
  const int64_t reachX = blurRadius(p.sigmaX, p.truncate),
                reachY = blurRadius(p.sigmaY, p.truncate);
  if (!p.nanAware && s.x > 1 && s.y > 1 && reachX == reachY && reachX >= 1 &&
      reachX <= kFuseMaxRadius && s.z <= 65535) {
    const int rx = static_cast<int>(reachX), ry = rx;
    FusedTaps taps{};
    const std::vector<float> wx = gaussianWeights(p.sigmaX, rx), wy = gaussianWeights(p.sigmaY, ry);
    std::copy(wx.begin(), wx.end(), taps.x);
    std::copy(wy.begin(), wy.end(), taps.y);
    const dim3 grid(blocksFor(s.x, kFuseW), blocksFor(s.y, fusedTileHeight(rx)),
                    static_cast<unsigned>(s.z));
    job.checkCancelled();
    kFusedKernels[rx - 1]<<<grid, kFuseThreads, 0, ctx->stream()>>>(in.data(), out.data(), int(s.y),
                                                                    int(s.x), taps);
    SL_LAUNCHED();
    if (!(p.sigmaZ > 0) || s.z <= 1) return out;
    const int64_t reachZ = blurRadius(p.sigmaZ, p.truncate);
    if (reachZ > 8192) throw InvalidArgument("gaussian blur: sigma too large (radius > 8192)");
    const int rz = static_cast<int>(reachZ);
    job.checkCancelled();
    Image along = deviceBuffer<float>(ctx, s);
    along.spacing = in.spacing;
    filterAlong<float, false>(ctx, out.data(), along.data(), s, 0,
                              ctx->constants(gaussianWeights(p.sigmaZ, rz)), rz);
    return along;
  }
  if (!p.nanAware) {
    Image tmp = deviceBuffer<float>(ctx, s);
    float* result = nullptr;
    blurAllAxes<float>(ctx, in.data(), tmp.data(), out.data(), &result, s, p, job);
    if (result == tmp.data()) {
      tmp.spacing = in.spacing;
      return tmp;
    }
    if (result == in.data())
      SL_CUDA(cudaMemcpyAsync(out.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice,
                              ctx->stream()));
    return out;
  }
  DeviceArray<float2> a(ctx, count), b(ctx, count), c(ctx, count);
  constexpr int kNanThreads = tuning::BlurNanPolicy::threads;
  splitNan<<<blocksFor(count, kNanThreads), kNanThreads, 0, ctx->stream()>>>(in.data(), a.get(),
                                                                             count);
  SL_LAUNCHED();
  float2* result = nullptr;
  blurAllAxes<float2>(ctx, a.get(), b.get(), c.get(), &result, s, p, job);
  joinNan<<<blocksFor(count, kNanThreads), kNanThreads, 0, ctx->stream()>>>(result, in.data(),
                                                                            out.data(), count);
  SL_LAUNCHED();
  return out;
}

}  // namespace stacklens::compute::cuda
