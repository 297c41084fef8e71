// Gaussian blur on the GPU, scipy's reflect boundary: in 2D (equal, small radii) one fused kernel
// per tile (x pass into shared memory, then the y pass: one read and one write of the image); else,
// and along z, one separable pass per axis through shared-memory tiles (cuda_filters.cuh);
// optional NaN-aware normalised convolution. Kernels: kernels/blur.cuh; launch shapes:
// tuning/blur.cuh.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/blur.cuh"
#include "compute/cuda/kernels/cuda_filters.cuh"
#include "compute/cuda/tuning/blur.cuh"
#include "compute/params.h"

namespace stacklens::compute::cuda {
namespace {

// Launches blur2dFused<R> with the taps of both axes (2R + 1 each).
// Each block walks a column of tiles down the image, filtering along x the rows it shares with the
// previous tile only once: the shortest walk whose blocks all run at once (FusedTile<R>::perSm an
// SM), so that no SM idles in a last, partial wave.
template <int R>
void launchFused(const Shape& s, int smCount, cudaStream_t stream, const float* in, float* out,
                 const std::vector<float>& wx, const std::vector<float>& wy) {
  FusedTaps<R> taps;
  std::copy(wx.begin(), wx.end(), taps.x);
  std::copy(wy.begin(), wy.end(), taps.y);
  const int64_t columns = blocksFor(s.x, kFuseW) * s.z,
                tiles = blocksFor(s.y, FusedTile<R>::height);
  const int64_t slots = int64_t(smCount) * FusedTile<R>::perSm;
  const int64_t walkTiles = std::max<int64_t>(1, (tiles * columns + slots - 1) / slots);
  const int walkRows = static_cast<int>(std::min(walkTiles, tiles)) * FusedTile<R>::height;
  const dim3 grid(blocksFor(s.x, kFuseW), blocksFor(s.y, walkRows), static_cast<unsigned>(s.z));
  blur2dFused<R><<<grid, kFuseThreads, 0, stream>>>(in, out, int(s.y), int(s.x), walkRows, taps);
}
using FusedLaunch = void (*)(const Shape&, int, cudaStream_t, const float*, float*,
                             const std::vector<float>&, const std::vector<float>&);
template <int... Rs>
constexpr std::array<FusedLaunch, sizeof...(Rs)> fusedLaunches(std::integer_sequence<int, Rs...>) {
  return {&launchFused<Rs + 1>...};
}
// launchFused<1> … launchFused<kFuseMaxRadius>.
constexpr auto kFusedLaunches = fusedLaunches(std::make_integer_sequence<int, kFuseMaxRadius>{});

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

// The fused kernel's taps of both axes, kept from the last call on this thread: repeated calls
// (slider steps, benchmarks) skip the exponentials and allocations ahead of the launch.
struct FusedWeights {
  double sigmaY = 0, sigmaX = 0;
  int radius = 0;
  std::vector<float> y, x;
};
const FusedWeights& fusedWeights(double sigmaY, double sigmaX, int radius) {
  thread_local FusedWeights last;
  if (last.radius != radius || last.sigmaY != sigmaY || last.sigmaX != sigmaX)
    last = {sigmaY, sigmaX, radius, gaussianWeights(sigmaY, radius),
            gaussianWeights(sigmaX, radius)};
  return last;
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
    const int rx = static_cast<int>(reachX);
    const FusedWeights& w = fusedWeights(p.sigmaY, p.sigmaX, rx);
    job.checkCancelled();
    kFusedLaunches[rx - 1](s, ctx->smCount(), ctx->stream(), in.data(), out.data(), w.x, w.y);
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
