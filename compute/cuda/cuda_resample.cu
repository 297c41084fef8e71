// Resampling on the GPU as scipy.ndimage.zoom(mode='mirror'): one pass per axis, each thread owning
// one line: the recursive cubic B-spline prefilter (mirror boundary) then the 4-tap gather at
// o·(n_in−1)/(n_out−1); order 1 gathers 2 taps from the samples themselves.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "compute/cuda/cuda_context.cuh"
#include "compute/cuda/cuda_kernels.cuh"

namespace stacklens::compute::cuda {
namespace {

// Where line `line` starts and how far apart its samples are, in a (Z, Y, X) array, for lines
// along `axis`.
struct LineLayout {
  int64_t ny, nx;  // of the array
  int axis;
  __device__ void locate(int64_t line, int64_t n, int64_t* base, int64_t* stride) const {
    if (axis == 2) {
      *base = line * n;
      *stride = 1;
    } else if (axis == 1) {
      int64_t z = line / nx, x = line % nx;
      *base = z * n * nx + x;
      *stride = nx;
    } else {
      *base = line;
      *stride = ny * nx;
    }
  }
};

// The cubic B-spline interpolation coefficients of one line, in place (scipy's spline_filter1d
// with mode='mirror'; the causal initial sum stops once z^k is negligible).
__device__ void prefilterLine(float* c, int64_t n, int64_t stride) {
  if (n < 2) return;
  const double z = 1.7320508075688772 - 2.0;  // sqrt(3) − 2
  const double gain = (1.0 - z) * (1.0 - 1.0 / z);
  // Causal initialisation: c0 = Σ z^i (c_i + z^(n−1) c_(n−1−i)) / (1 − z^(2n−2)).
  double zn1 = pow(z, double(n - 1));
  double c0 = gain * (double(c[0]) + zn1 * double(c[(n - 1) * stride]));
  double zi = z;
  for (int64_t i = 1; i < n - 1 && fabs(zi) > 1e-18; ++i) {
    c0 += zi * gain * (double(c[i * stride]) + zn1 * double(c[(n - 1 - i) * stride]));
    zi *= z;
  }
  c0 /= 1.0 - zn1 * zn1;
  double prev = c0;
  c[0] = static_cast<float>(c0);
  double beforeLast = 0;
  for (int64_t i = 1; i < n; ++i) {
    double v = gain * double(c[i * stride]) + z * prev;
    if (i == n - 2) beforeLast = v;
    c[i * stride] = static_cast<float>(v);
    prev = v;
  }
  if (n == 2) beforeLast = c0;
  // Anticausal initialisation (mirror): c_(n−1) = z/(z²−1) · (z c_(n−2) + c_(n−1)).
  double next = (z * beforeLast + prev) * z / (z * z - 1.0);
  c[(n - 1) * stride] = static_cast<float>(next);
  for (int64_t i = n - 2; i >= 0; --i) {
    double v = z * (next - double(c[i * stride]));
    c[i * stride] = static_cast<float>(v);
    next = v;
  }
}

template <int Order>
__global__ void resampleLines(const float* __restrict__ in, float* __restrict__ coefficients,
                              float* __restrict__ out, int64_t lines, int64_t nIn, int64_t nOut,
                              LineLayout inLayout, LineLayout outLayout, double step) {
  int64_t line = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (line >= lines) return;
  int64_t inBase, inStride, outBase, outStride;
  inLayout.locate(line, nIn, &inBase, &inStride);
  outLayout.locate(line, nOut, &outBase, &outStride);
  const float* src = in + inBase;
  if (Order == 3) {
    float* c = coefficients + inBase;
    for (int64_t i = 0; i < nIn; ++i) c[i * inStride] = src[i * inStride];
    prefilterLine(c, nIn, inStride);
    src = c;
  }
  for (int64_t o = 0; o < nOut; ++o) {
    double at = double(o) * step;
    double fl = floor(at);
    float t = static_cast<float>(at - fl);
    int64_t i0 = static_cast<int64_t>(fl);
    float v;
    if (Order == 3) {
      float u = 1.f - t;
      float w0 = u * u * u / 6.f;
      float w1 = (3.f * t * t * t - 6.f * t * t + 4.f) / 6.f;
      float w3 = t * t * t / 6.f;
      float w2 = 1.f - w0 - w1 - w3;
      v = w0 * src[mirrorIndex(i0 - 1, nIn) * inStride] +
          w1 * src[mirrorIndex(i0, nIn) * inStride] +
          w2 * src[mirrorIndex(i0 + 1, nIn) * inStride] +
          w3 * src[mirrorIndex(i0 + 2, nIn) * inStride];
    } else {
      v = (1.f - t) * src[mirrorIndex(i0, nIn) * inStride] +
          t * src[mirrorIndex(i0 + 1, nIn) * inStride];
    }
    out[outBase + o * outStride] = v;
  }
}

}  // namespace

Image resample(const ContextPtr& ctx, const Image& input, const ResampleParams& p, const Job& job) {
  if (p.order != 1 && p.order != 3)
    throw InvalidArgument("resample: order must be 1 or 3 (got " + std::to_string(p.order) + ")");
  const double zooms[3] = {p.zoomZ, p.zoomY, p.zoomX};
  for (double f : zooms)
    if (!(f > 0) || !std::isfinite(f))
      throw InvalidArgument("resample: zoom factors must be positive");
  if (input.empty()) throw InvalidArgument("resample: the image is empty");
  Image in = onDevice(ctx, input);
  Shape cur = in.shape();
  const int64_t nIn[3] = {cur.z, cur.y, cur.x};
  int64_t nOut[3];
  for (int a = 0; a < 3; ++a) {
    // Python's round(): halves to even, as scipy computes the output shape.
    nOut[a] = static_cast<int64_t>(std::nearbyint(double(nIn[a]) * zooms[a]));
    if (nOut[a] < 1)
      throw InvalidArgument("resample: zoom " + std::to_string(zooms[a]) +
                            " leaves an axis of length " + std::to_string(nIn[a]) + " empty");
  }
  // Shrinking axes first keeps the intermediate arrays small.
  std::array<int, 3> order = {2, 1, 0};
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return double(nOut[a]) / nIn[a] < double(nOut[b]) / nIn[b];
  });
  Image current = in;
  DeviceArray<float> coefficients;
  for (int axis : order) {
    if (nOut[axis] == nIn[axis]) continue;  // coordinates o·(n−1)/(n−1) = o: the identity
    job.checkCancelled();
    Shape next = cur;
    (axis == 0 ? next.z : axis == 1 ? next.y : next.x) = nOut[axis];
    Image dst = deviceBuffer<float>(ctx, next);
    if (p.order == 3 && coefficients.size() < size_t(cur.count()))
      coefficients = DeviceArray<float>(ctx, cur.count());
    int64_t lines = cur.count() / nIn[axis];
    double step = nOut[axis] > 1 ? double(nIn[axis] - 1) / double(nOut[axis] - 1) : 0.0;
    LineLayout inLayout{cur.y, cur.x, axis}, outLayout{next.y, next.x, axis};
    if (p.order == 3)
      resampleLines<3><<<blocksFor(lines, 128), 128, 0, ctx->stream()>>>(
          current.data(), coefficients.get(), dst.data(), lines, nIn[axis], nOut[axis], inLayout,
          outLayout, step);
    else
      resampleLines<1><<<blocksFor(lines, 128), 128, 0, ctx->stream()>>>(
          current.data(), nullptr, dst.data(), lines, nIn[axis], nOut[axis], inLayout, outLayout,
          step);
    SL_LAUNCHED();
    current = dst;
    cur = next;
  }
  if (current.data() == in.data()) {
    Image copy = deviceBuffer<float>(ctx, cur);
    SL_CUDA(cudaMemcpyAsync(copy.data(), in.data(), in.bytes(), cudaMemcpyDeviceToDevice,
                            ctx->stream()));
    current = copy;
  }
  current.spacing = in.spacing;
  current.spacing.z /= p.zoomZ;
  current.spacing.y /= p.zoomY;
  current.spacing.x /= p.zoomX;
  return current;
}

}  // namespace stacklens::compute::cuda
