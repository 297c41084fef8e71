// Gaussian blur on the GPU: one separable pass per axis through shared-memory tiles
// (cuda_filters.cuh), scipy's reflect boundary, optional NaN-aware normalised convolution.
#include <algorithm>
#include <cmath>
#include <vector>

#include "compute/cuda/cuda_context.cuh"
#include "compute/cuda/cuda_filters.cuh"
#include "compute/cuda/cuda_kernels.cuh"

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
    int radius = static_cast<int>(p.truncate * sigma + 0.5);
    if (radius > 8192) throw InvalidArgument("gaussian blur: sigma too large (radius > 8192)");
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
