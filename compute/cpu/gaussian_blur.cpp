// Separable Gaussian blur on the CPU, 2D per slice or 3D, matching scipy.ndimage.gaussian_filter.
//
// Semantics (the CUDA backend follows the same definition):
// - sigma is (z, y, x) in pixels; sigmaZ == 0 blurs each slice in 2D (y then x), sigmaZ > 0 blurs
//   in 3D (z, then y, then x — SciPy's axis order). Each axis uses the 1D kernel
//   w[k] = exp(-k² / 2σ²) / Σ, k = -r..r, r = int(truncate·σ + 0.5), computed in double and
//   rounded to float. Each pass reads and writes float32 like SciPy's (float32 output between
//   passes); sums are accumulated in float, so results agree with SciPy to ~1e-6 relative.
// - Boundary: SciPy 'reflect' (half-sample symmetric: d c b a | a b c d | d c b a), repeated
//   as often as needed when the kernel radius exceeds the image.
// - NaN: without nanAware a NaN spreads over its kernel footprint as in SciPy. With nanAware the
//   result is blur(v·m) / blur(m), where m = 0 at NaN and 1 elsewhere and v·m treats NaN as 0;
//   pixels that were NaN stay NaN. Inf is not NaN and spreads as usual.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "compute/cpu/operations.h"
#include "compute/cpu/reflect_index.h"

namespace stacklens::compute::cpu {
namespace {

// The normalised 1D Gaussian, centre at index radius; float weights of a double computation.
std::vector<float> gaussianKernel(double sigma, double truncate) {
  const int64_t reach = blurRadius(sigma, truncate);
  // A radius this large means billions of taps: refuse instead of running for hours.
  if (!(reach < 1000000))
    throw InvalidArgument("gaussian_blur: truncate·sigma = " + std::to_string(truncate * sigma) +
                          " gives a kernel radius over 10^6 pixels");
  const int radius = static_cast<int>(reach);
  std::vector<double> w(2 * static_cast<size_t>(radius) + 1);
  double sum = 0;
  for (int k = -radius; k <= radius; ++k) {
    w[k + radius] = std::exp(-0.5 / (sigma * sigma) * double(k) * double(k));
    sum += w[k + radius];
  }
  std::vector<float> out(w.size());
  for (size_t i = 0; i < w.size(); ++i) out[i] = static_cast<float>(w[i] / sum);
  return out;
}

using Floats8 = float __attribute__((vector_size(32)));

// out[x] = w[r]·taps[r][x] + Σ_{k=1..r} w[r+k]·(taps[r-k][x] + taps[r+k][x]), summed in that
// order: the symmetric kernel applied to 2r+1 shifted rows (rows of the image for the vertical
// and z passes, one padded row at offsets 0..2r for the horizontal one). 32 outputs at a time are
// kept in four 8-float accumulators across all taps, so each tap costs two loads per vector.
__attribute__((target_clones("avx2", "default"))) void symmetricSum(const float* const* taps,
                                                                    const float* w, int radius,
                                                                    int64_t n,
                                                                    float* __restrict out) {
  const float* centre = taps[radius];
  const float wc = w[radius];
  int64_t x = 0;
  for (; x + 32 <= n; x += 32) {
    Floats8 acc[4];
    for (int j = 0; j < 4; ++j) {
      Floats8 c;
      std::memcpy(&c, centre + x + 8 * j, sizeof c);
      acc[j] = wc * c;
    }
    for (int k = 1; k <= radius; ++k) {
      const float* a = taps[radius - k] + x;
      const float* b = taps[radius + k] + x;
      const float wk = w[radius + k];
      for (int j = 0; j < 4; ++j) {
        Floats8 va, vb;
        std::memcpy(&va, a + 8 * j, sizeof va);
        std::memcpy(&vb, b + 8 * j, sizeof vb);
        acc[j] += wk * (va + vb);
      }
    }
    std::memcpy(out + x, acc, sizeof acc);
  }
  for (; x < n; ++x) {
    float acc = wc * centre[x];
    for (int k = 1; k <= radius; ++k)
      acc += w[radius + k] * (taps[radius - k][x] + taps[radius + k][x]);
    out[x] = acc;
  }
}

// The z pass of a 3D blur: each output row is a weighted sum of the same row in nearby slices.
void blurAlongZ(const Image& in, Image& out, const std::vector<float>& w, const Job& job,
                ThreadPool& pool) {
  const Shape s = in.shape();
  const int radius = static_cast<int>(w.size() / 2);
  pool.parallelFor(s.z * s.y, [&](int64_t begin, int64_t end) {
    std::vector<const float*> rows(w.size());
    for (int64_t row = begin; row < end; ++row) {
      job.checkCancelled();
      const int64_t z = row / s.y, y = row % s.y;
      for (int k = -radius; k <= radius; ++k)
        rows[k + radius] = in.slice(reflectIndex(z + k, s.z)) + y * s.x;
      symmetricSum(rows.data(), w.data(), radius, s.x, out.slice(z) + y * s.x);
    }
  });
}

// The y and x passes, row by row: each output row is the vertical sum (kept in a row buffer)
// convolved along x, so the image is read once and written once.
void blurSlicesYX(const Image& in, Image& out, const std::vector<float>& wy,
                  const std::vector<float>& wx, const Job& job, ThreadPool& pool,
                  double progressStart, double progressSpan) {
  const Shape s = in.shape();
  const int ry = static_cast<int>(wy.size() / 2), rx = static_cast<int>(wx.size() / 2);
  // For a narrow image the reflected pad positions are looked up once.
  std::vector<int64_t> padSource(static_cast<size_t>(s.x + 2 * rx));
  for (int64_t i = 0; i < s.x + 2 * rx; ++i) padSource[i] = reflectIndex(i - rx, s.x);
  for (int64_t z = 0; z < s.z; ++z) {
    job.checkCancelled();
    const float* src = in.slice(z);
    float* dst = out.slice(z);
    pool.parallelFor(s.y, [&](int64_t begin, int64_t end) {
      std::vector<const float*> rows(wy.size());
      std::vector<float> padded(static_cast<size_t>(s.x + 2 * rx));
      std::vector<const float*> shifted(wx.size());
      for (size_t i = 0; i < wx.size(); ++i) shifted[i] = padded.data() + i;
      for (int64_t y = begin; y < end; ++y) {
        job.checkCancelled();
        for (int k = -ry; k <= ry; ++k) rows[k + ry] = src + reflectIndex(y + k, s.y) * s.x;
        symmetricSum(rows.data(), wy.data(), ry, s.x, padded.data() + rx);
        for (int i = 0; i < rx; ++i) {
          padded[i] = padded[rx + padSource[i]];
          padded[rx + s.x + i] = padded[rx + padSource[rx + s.x + i]];
        }
        symmetricSum(shifted.data(), wx.data(), rx, s.x, dst + y * s.x);
      }
    });
    job.report(progressStart + progressSpan * double(z + 1) / double(s.z));
  }
}

Image blurPlain(const Image& in, const BlurParams& p, const std::vector<float>& wz,
                const std::vector<float>& wy, const std::vector<float>& wx, const Job& job,
                ThreadPool& pool, double progressStart, double progressSpan) {
  Image out = Image::hostUninitialized(in.shape());
  if (p.sigmaZ > 0) {
    Image alongZ = Image::hostUninitialized(in.shape());
    blurAlongZ(in, alongZ, wz, job, pool);
    blurSlicesYX(alongZ, out, wy, wx, job, pool, progressStart, progressSpan);
  } else {
    blurSlicesYX(in, out, wy, wx, job, pool, progressStart, progressSpan);
  }
  return out;
}

}  // namespace

Image gaussianBlur(const Image& in, const BlurParams& p, const Job& job, ThreadPool& pool) {
  if (in.empty()) throw InvalidArgument("gaussian_blur: the image is empty");
  validate(p);
  const std::vector<float> wy = gaussianKernel(p.sigmaY, p.truncate);
  const std::vector<float> wx = gaussianKernel(p.sigmaX, p.truncate);
  const std::vector<float> wz =
      p.sigmaZ > 0 ? gaussianKernel(p.sigmaZ, p.truncate) : std::vector<float>{1.0f};
  const int64_t count = in.shape().count();

  if (!p.nanAware) {
    Image out = blurPlain(in, p, wz, wy, wx, job, pool, 0.0, 1.0);
    out.spacing = in.spacing;
    return out;
  }

  // Normalised convolution: blur the NaN-zeroed values and the validity mask alike.
  Image values = Image::hostUninitialized(in.shape()), mask = Image::hostUninitialized(in.shape());
  const float* src = in.data();
  float* v = values.data();
  float* m = mask.data();
  for (int64_t i = 0; i < count; ++i) {
    const bool valid = !std::isnan(src[i]);
    v[i] = valid ? src[i] : 0.0f;
    m[i] = valid ? 1.0f : 0.0f;
  }
  Image out = blurPlain(values, p, wz, wy, wx, job, pool, 0.0, 0.5);
  const Image weight = blurPlain(mask, p, wz, wy, wx, job, pool, 0.5, 0.5);
  float* o = out.data();
  const float* wsum = weight.data();
  for (int64_t i = 0; i < count; ++i)
    o[i] = std::isnan(src[i]) ? std::numeric_limits<float>::quiet_NaN() : o[i] / wsum[i];
  out.spacing = in.spacing;
  return out;
}

}  // namespace stacklens::compute::cpu
