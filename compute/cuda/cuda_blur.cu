// Gaussian blur on the GPU: one separable pass per axis (x through shared-memory row tiles, y and z
// straight from global memory, coalesced along x), scipy's reflect boundary, optional NaN-aware
// normalised convolution.
#include <algorithm>
#include <cmath>
#include <vector>

#include "compute/cuda/cuda_context.cuh"
#include "compute/cuda/cuda_kernels.cuh"

namespace stacklens::compute::cuda {
namespace {

constexpr int kRowThreads = 256;
constexpr int kRowOutputsPerThread = 4;
constexpr int kRowTile = kRowThreads * kRowOutputsPerThread;

__device__ inline float2 operator*(float w, float2 v) { return make_float2(w * v.x, w * v.y); }
__device__ inline float2& operator+=(float2& a, float2 b) {
  a.x += b.x;
  a.y += b.y;
  return a;
}
template <class T>
__device__ inline T zero();
template <>
__device__ inline float zero<float>() {
  return 0.f;
}
template <>
__device__ inline float2 zero<float2>() {
  return make_float2(0.f, 0.f);
}

// Along x: a block covers kRowTile outputs of one row; the row segment plus its halo (reflected
// at the row ends) is staged in shared memory once and read 2r+1 times.
template <class T>
__global__ void blurRows(const T* __restrict__ in, T* __restrict__ out, int nx, int ny, int z0,
                         const float* __restrict__ weights, int radius) {
  extern __shared__ unsigned char shared[];
  float* w = reinterpret_cast<float*>(shared);
  int taps = 2 * radius + 1;
  T* tile = reinterpret_cast<T*>(shared + ((taps * sizeof(float) + 15) / 16) * 16);
  int64_t row = (int64_t(z0) + blockIdx.z) * ny + blockIdx.y;
  int x0 = blockIdx.x * kRowTile;
  const T* src = in + row * nx;
  for (int i = threadIdx.x; i < taps; i += blockDim.x) w[i] = weights[i];
  int span = kRowTile + 2 * radius;
  for (int i = threadIdx.x; i < span; i += blockDim.x) {
    int x = x0 - radius + i;
    tile[i] = src[(x >= 0 && x < nx) ? x : reflectIndex(x, nx)];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kRowOutputsPerThread; ++k) {
    int local = threadIdx.x + k * kRowThreads;
    int x = x0 + local;
    if (x >= nx) break;
    T acc = zero<T>();
    for (int d = 0; d < taps; ++d) acc += w[d] * tile[local + d];
    out[row * nx + x] = acc;
  }
}

// Along y or z (or x for radii too large for a row tile): one thread per output, neighbouring
// threads along x, so every tap's loads are coalesced; n and stride are the axis' length and
// element distance.
template <class T>
__global__ void blurAxis(const T* __restrict__ in, T* __restrict__ out, int nx, int ny, int z0,
                         int axis, int n, int64_t stride, const float* __restrict__ weights,
                         int radius) {
  extern __shared__ unsigned char shared[];
  float* w = reinterpret_cast<float*>(shared);
  int taps = 2 * radius + 1;
  for (int i = threadIdx.x; i < taps; i += blockDim.x) w[i] = weights[i];
  __syncthreads();
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = z0 + blockIdx.z;
  if (x >= nx) return;
  int64_t idx = (int64_t(z) * ny + y) * nx + x;
  int i = axis == 2 ? x : axis == 1 ? y : z;
  const T* base = in + (idx - i * stride);
  T acc = zero<T>();
  if (i >= radius && i + radius < n) {
    const T* p = base + (i - radius) * stride;
    for (int d = 0; d < taps; ++d) acc += w[d] * p[d * stride];
  } else {
    for (int d = 0; d < taps; ++d) acc += w[d] * base[reflectIndex(i - radius + d, n) * stride];
  }
  out[idx] = acc;
}

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
void blurAlong(const ContextPtr& ctx, const T* in, T* out, const Shape& s, int axis, const float* w,
               int radius) {
  size_t weightBytes = ((size_t(2 * radius + 1) * sizeof(float) + 15) / 16) * 16;
  for (int64_t z0 = 0; z0 < s.z; z0 += 65535) {
    unsigned nz = static_cast<unsigned>(std::min<int64_t>(65535, s.z - z0));
    if (axis == 2) {
      size_t tileBytes = (kRowTile + 2 * size_t(radius)) * sizeof(T);
      if (weightBytes + tileBytes <= 48 * 1024) {
        dim3 grid(blocksFor(s.x, kRowTile), static_cast<unsigned>(s.y), nz);
        blurRows<T><<<grid, kRowThreads, weightBytes + tileBytes, ctx->stream()>>>(
            in, out, int(s.x), int(s.y), int(z0), w, radius);
        SL_LAUNCHED();
        continue;
      }
    }
    if (weightBytes > 48 * 1024) throw InvalidArgument("gaussian blur: kernel radius too large");
    int64_t n = axis == 0 ? s.z : axis == 1 ? s.y : s.x;
    int64_t stride = axis == 0 ? s.y * s.x : axis == 1 ? s.x : 1;
    dim3 grid(blocksFor(s.x, 256), static_cast<unsigned>(s.y), nz);
    blurAxis<T><<<grid, 256, weightBytes, ctx->stream()>>>(in, out, int(s.x), int(s.y), int(z0),
                                                           axis, int(n), stride, w, radius);
    SL_LAUNCHED();
  }
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
    int radius = static_cast<int>(p.truncate * sigma + 0.5);
    if (radius > 8192) throw InvalidArgument("gaussian blur: sigma too large (radius > 8192)");
    std::vector<float> hw = gaussianWeights(sigma, radius);
    const float* w = ctx->constants(hw);
    T* dst = targets[which];
    blurAlong<T>(ctx, cur, dst, s, axis, w, radius);
    cur = dst;
    which ^= 1;
  }
  *result = const_cast<T*>(cur);
}

}  // namespace

Image gaussianBlur(const ContextPtr& ctx, const Image& input, const BlurParams& p, const Job& job) {
  if (!(p.sigmaY > 0) || !(p.sigmaX > 0) || !(p.sigmaZ >= 0))
    throw InvalidArgument("gaussian blur: sigma must be positive (sigma z may be 0 for 2D)");
  if (!(p.truncate > 0)) throw InvalidArgument("gaussian blur: truncate must be positive");
  if (input.empty()) throw InvalidArgument("gaussian blur: the image is empty");
  if (input.shape().y > 65535 || input.shape().x > INT32_MAX / 2 || input.shape().z > INT32_MAX / 2)
    throw InvalidArgument("gaussian blur: images taller than 65535 rows are not supported");
  Image in = onDevice(ctx, input);
  const Shape s = in.shape();
  const int64_t count = s.count();
  Image out = deviceBuffer<float>(ctx, s);
  out.spacing = in.spacing;
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
  splitNan<<<blocksFor(count, 256), 256, 0, ctx->stream()>>>(in.data(), a.get(), count);
  SL_LAUNCHED();
  float2* result = nullptr;
  blurAllAxes<float2>(ctx, a.get(), b.get(), c.get(), &result, s, p, job);
  joinNan<<<blocksFor(count, 256), 256, 0, ctx->stream()>>>(result, in.data(), out.data(), count);
  SL_LAUNCHED();
  return out;
}

}  // namespace stacklens::compute::cuda
