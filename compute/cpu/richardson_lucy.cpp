// Richardson–Lucy deconvolution on the CPU: FFTW single precision, threaded, plans cached.
//
// Semantics (the CUDA backend must match them):
//  * Mode: p.threeD == false deconvolves each z-slice on its own with a 2D PSF; a 3D PSF given
//    for 2D mode contributes its centre slice (index psf.z / 2). p.threeD == true deconvolves the
//    whole stack with the (3D) PSF. The PSF is normalised to sum 1 (in double); its centre is the
//    element at index size / 2 on each axis (so an even-sized PSF is centred just past middle).
//  * Algorithm on a (possibly padded) domain with circular convolution ⊛ by FFT:
//      estimate₀ = image;
//      estimate ← max(estimate · (PSF* ⊛ (image / max(PSF ⊛ estimate, ε))), 0)
//    where PSF* ⊛ is correlation (multiplication by the conjugate OTF) and ε = p.epsilon guards
//    the division; the clamp at 0 removes negatives from FFT round-off (and from negative data).
//  * Boundary (per axis that is deconvolved; z is never padded in 2D mode):
//      Periodic: no padding at all, the image is taken as periodic (PSF must fit in the image).
//      Reflect (default): the image is mirror-padded by h = psf_size / 2 on both sides, half-sample
//        symmetric like numpy.pad(mode="symmetric") (… c b a | a b c … x y z | z y x …), then
//        padded further at the END only to the frame's length (compute/rl_frame.h: the next
//        2,3,5,7-smooth size, or a length the fused CUDA passes take when the whole frame favours
//        it), continuing the same mirror rule (numpy.pad(image, (h, h + extra), "symmetric")).
//      ReflectExact: every convolution sees the data mirrored past the edges (the same rule as
//        Reflect, at every iteration instead of once): no padding, DCT-II/III instead of the FFT
//        (FFTW's REDFT10/REDFT01; the CUDA backend the FFT of permuted data). Needs a PSF
//        symmetric on every axis; no TV term.
//      Zero: as Reflect but the padding is zeros. In the zero region image = 0, so the ratio there
//        is 0 / max(blurred, ε) = 0 and the estimate (0 at the start) stays 0: the region only
//        lets the blur spill out of the image instead of wrapping round.
//    After the iterations the image-sized centre is cropped out.
//  * Non-finite image values (NaN, ±Inf) are taken as 0 during the iterations and written back
//    unchanged into the result; an image without any finite value (a blank channel of a cube, a
//    blanked corner of a mosaic) comes back unchanged.
//  * TV regularisation (p.tvLambda = λ > 0; Dey et al. 2006): the update is divided by
//    max(1 − λ · div(∇u / |∇u|), 1e-3), with ∇ forward differences, div backward differences
//    (both periodic on the padded domain, so they match the circular model) and
//    |∇u| = sqrt(|∇u|² + 1e-12). The floor keeps the factor positive when λ is too large.
//  * Acceleration (p.accelerate; Biggs & Andrews 1997, order 1): with x_k the RL result of step
//    k and y_k the point it started from, g_k = x_k − y_{k−1},
//    α = clamp(Σ g_k g_{k−1} / Σ g_{k−1}², 0, 1), y_k = max(x_k + α (x_k − x_{k−1}), 0); the first
//    step has α = 0 and the result is the last x (not extrapolated).
//  * Invalid (InvalidArgument): the parameters as validate(DeconvolveParams) checks them, an
//    empty image or PSF, a NaN/Inf PSF value, PSF sum ≤ 0, a PSF larger
//    than the image for Periodic.
//
// Performance: one set of buffers per call, the OTF computed once, real-to-complex transforms
// with plans cached per shape (fft_plan_cache), element-wise work fused into single passes
// (rl_kernels, run-time dispatched AVX-512/AVX2) and split over the thread pool; nothing is
// allocated inside the iteration loop.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/operations.h"
#include "compute/cpu/rl_kernels.h"
#include "compute/rl_frame.h"
#include "compute/rl_psf.h"

namespace stacklens::compute::cpu {
namespace {

constexpr size_t kChunk = size_t{1} << 15;  // elements per parallel work item
constexpr float kTvFloor = 1e-3f;
constexpr float kTvEpsilonSq = 1e-12f;

// Splits [0, n) into kChunk pieces over the pool. The lambda handed to the pool captures two
// words, which std::function stores without allocating.
template <class F>
void forChunks(ThreadPool& pool, size_t n, const F& f) {
  const int64_t chunks = static_cast<int64_t>((n + kChunk - 1) / kChunk);
  pool.parallelFor(chunks, [&f, n](int64_t c0, int64_t c1) {
    f(static_cast<size_t>(c0) * kChunk, std::min(n, static_cast<size_t>(c1) * kChunk));
  });
}

// Half-sample symmetric reflection of p into [0, n) (numpy 'symmetric'; any distance).
int64_t reflectIndex(int64_t p, int64_t n) {
  const int64_t period = 2 * n;
  int64_t m = p % period;
  if (m < 0) m += period;
  return m < n ? m : period - 1 - m;
}

struct Axis {
  int64_t n = 1;                // data length
  int64_t padded = 1;           // transform length
  int64_t before = 0;           // data offset inside the padded axis
  std::vector<int64_t> source;  // padded index → data index, −1 for zero padding
};

bool isPadded(bool deconvolved, Boundary boundary) {
  return deconvolved && boundary != Boundary::Periodic && boundary != Boundary::ReflectExact;
}

// An axis of the frame: `padded` samples (rlFrame), the data after half the PSF when padded.
Axis makeAxis(int64_t n, int64_t psfSize, bool deconvolved, Boundary boundary, int64_t padded) {
  Axis a;
  a.n = n;
  a.padded = padded;
  if (isPadded(deconvolved, boundary)) a.before = psfSize / 2;
  a.source.resize(static_cast<size_t>(a.padded));
  for (int64_t p = 0; p < a.padded; ++p) {
    const int64_t q = p - a.before;
    if (q >= 0 && q < n)
      a.source[p] = q;
    else
      a.source[p] = boundary == Boundary::Zero ? -1 : reflectIndex(q, n);
  }
  return a;
}

class Deconvolver {
 public:
  Deconvolver(Shape data, const Image& psf, const DeconvolveParams& p, ThreadPool& pool)
      : p_(p), pool_(pool) {
    const bool threeD = p.threeD;
    const Shape ps = psf.shape();
    const std::array<bool, 3> padded{isPadded(threeD, p.boundary), isPadded(true, p.boundary),
                                     isPadded(true, p.boundary)};
    const Shape frame =
        rlFrame({data.z + (padded[0] ? ps.z / 2 * 2 : 0), data.y + (padded[1] ? ps.y / 2 * 2 : 0),
                 data.x + (padded[2] ? ps.x / 2 * 2 : 0)},
                padded);
    z_ = makeAxis(data.z, ps.z, threeD, p.boundary, frame.z);
    y_ = makeAxis(data.y, ps.y, true, p.boundary, frame.y);
    x_ = makeAxis(data.x, ps.x, true, p.boundary, frame.x);
    reflectExact_ = p.boundary == Boundary::ReflectExact;
    plans_ = reflectExact_ ? &cosinePlans(z_.padded, y_.padded, x_.padded, pool.size())
                           : &fftPlans(z_.padded, y_.padded, x_.padded, pool.size());
    n_ = plans_->realCount();
    nc_ = plans_->complexCount();
    image_ = allocFloats(n_);
    estimate_ = allocFloats(n_);
    work_ = allocFloats(n_);
    if (reflectExact_) {
      transfer_ = allocFloats(n_);
    } else {
      spectrum_ = allocComplex(nc_);
      otf_ = allocComplex(nc_);
    }
    if (p.tvLambda > 0) divergence_ = allocFloats(n_);
    if (p.accelerate) {
      previous_ = allocFloats(n_);
      change_ = allocFloats(n_);
      changePrevious_ = allocFloats(n_);
      partials_.resize((n_ + kChunk - 1) / kChunk * 2);
    }
    makeOtf(psf);
  }

  // Deconvolves one block of data (a slice in 2D mode, the stack in 3D mode) into out.
  void run(const float* in, float* out, const Job& job, double progressBase, double progressSpan) {
    fillPadded(in);
    std::memcpy(estimate_.get(), image_.get(), n_ * sizeof(float));
    if (p_.accelerate) std::memcpy(previous_.get(), image_.get(), n_ * sizeof(float));
    bool haveChange = false;
    for (int k = 0; k < p_.iterations; ++k) {
      job.checkCancelled();
      step(job);
      if (p_.accelerate && k + 1 < p_.iterations) {
        float alpha = 0;
        if (haveChange) {
          const double num = dot(change_.get(), changePrevious_.get());
          const double den = dot(changePrevious_.get(), changePrevious_.get());
          alpha = den > 0 ? static_cast<float>(std::clamp(num / den, 0.0, 1.0)) : 0.f;
        }
        float* est = estimate_.get();
        float* prev = previous_.get();
        forChunks(pool_, n_, [est, prev, alpha](size_t b, size_t e) {
          rl::extrapolate(est + b, prev + b, e - b, alpha);
        });
        std::swap(change_, changePrevious_);
        haveChange = true;
      }
      job.report(progressBase + progressSpan * (k + 1) / p_.iterations);
    }
    crop(in, out);
  }

 private:
  // The PSF placed with its centre at index 0 (circular shift), transformed, and scaled by
  // 1 / count so that each c2r ∘ (· OTF) ∘ r2c round trip needs no further normalisation.
  void makeOtf(const Image& psf) {
    if (reflectExact_) return makeTransfer(psf);
    float* real = work_.get();
    std::fill(real, real + n_, 0.f);
    const Shape s = psf.shape();
    const int64_t Y = y_.padded, X = x_.padded, Z = z_.padded;
    for (int64_t a = 0; a < s.z; ++a)
      for (int64_t b = 0; b < s.y; ++b)
        for (int64_t c = 0; c < s.x; ++c) {
          const int64_t zz = ((a - s.z / 2) % Z + Z) % Z, yy = ((b - s.y / 2) % Y + Y) % Y,
                        xx = ((c - s.x / 2) % X + X) % X;
          real[(zz * Y + yy) * X + xx] += psf.at(a, b, c);
        }
    plans_->r2c(real, otf_.get());
    const float scale = 1.0f / static_cast<float>(n_);
    float* h = reinterpret_cast<float*>(otf_.get());
    for (size_t i = 0; i < 2 * nc_; ++i) h[i] *= scale;
  }

  // Boundary::ReflectExact: the convolution of the data mirrored past every edge is diagonal in
  // the DCT-II basis (compute/cuda/reflect_exact.cuh), with the eigenvalues
  // H[k] = Σ_m psf[m] · Π_a cos(π k_a m_a / n_a), summed one axis at a time in double and scaled
  // by 1 / Π 2n over the transformed axes (FFTW's DCT-III ∘ DCT-II multiplies by that).
  void makeTransfer(const Image& psf) {
    const Shape s = psf.shape();
    const int64_t Z = z_.padded, Y = y_.padded, X = x_.padded;
    auto cosines = [](int64_t n, int64_t taps) {  // cos(π k (j − taps/2) / n), [k][j]
      std::vector<double> c(size_t(n * taps));
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < taps; ++j) {
          const int64_t r = ((k * (j - taps / 2)) % (2 * n) + 2 * n) % (2 * n);
          c[size_t(k * taps + j)] = std::cos(M_PI * double(r) / double(n));
        }
      return c;
    };
    const std::vector<double> cx = cosines(X, s.x), cy = cosines(Y, s.y), cz = cosines(Z, s.z);
    std::vector<double> rows(size_t(s.z * s.y * X)), planes(size_t(s.z * Y * X));
    pool_.parallelFor(s.z * s.y, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t k = 0; k < X; ++k) {
          double sum = 0;
          for (int64_t j = 0; j < s.x; ++j) sum += psf.data()[r * s.x + j] * cx[k * s.x + j];
          rows[size_t(r * X + k)] = sum;
        }
    });
    pool_.parallelFor(s.z * Y, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t pz = r / Y, k = r % Y;
        for (int64_t x = 0; x < X; ++x) {
          double sum = 0;
          for (int64_t j = 0; j < s.y; ++j)
            sum += rows[size_t((pz * s.y + j) * X + x)] * cy[k * s.y + j];
          planes[size_t(r * X + x)] = sum;
        }
      }
    });
    const double scale =
        1.0 / ((Z > 1 ? 2.0 * double(Z) : 1.0) * 2.0 * double(Y) * 2.0 * double(X));
    float* h = transfer_.get();
    pool_.parallelFor(Z * Y, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t k = r / Y, y = r % Y;
        for (int64_t x = 0; x < X; ++x) {
          double sum = 0;
          for (int64_t j = 0; j < s.z; ++j)
            sum += planes[size_t((j * Y + y) * X + x)] * (Z > 1 ? cz[k * s.z + j] : 1.0);
          h[r * X + x] = static_cast<float>(sum * scale);
        }
      }
    });
  }

  // dst ← PSF ⊛ src (adjoint: correlation); dst may be src.
  void convolve(const float* src, float* dst, bool adjoint) {
    if (reflectExact_) {  // the PSF is symmetric: convolution and correlation are the same
      if (dst != src) std::memcpy(dst, src, n_ * sizeof(float));
      plans_->dct2(dst);
      const float* h = transfer_.get();
      forChunks(pool_, n_, [dst, h](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) dst[i] *= h[i];
      });
      plans_->dct3(dst);
      return;
    }
    float* spec = reinterpret_cast<float*>(spectrum_.get());
    const float* otf = reinterpret_cast<const float*>(otf_.get());
    plans_->r2c(const_cast<float*>(src), spectrum_.get());
    forChunks(pool_, nc_, [spec, otf, adjoint](size_t b, size_t e) {
      rl::multiplySpectrum(spec + 2 * b, otf + 2 * b, e - b, adjoint);
    });
    plans_->c2r(spectrum_.get(), dst);
  }

  void fillPadded(const float* in) {
    float* dst = image_.get();
    const int64_t rows = z_.padded * y_.padded;
    pool_.parallelFor(rows, [this, in, dst](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t sz = z_.source[r / y_.padded], sy = y_.source[r % y_.padded];
        float* row = dst + r * x_.padded;
        if (sz < 0 || sy < 0) {
          std::fill(row, row + x_.padded, 0.f);
          continue;
        }
        const float* src = in + (sz * y_.n + sy) * x_.n;
        for (int64_t x = 0; x < x_.padded; ++x) {
          const int64_t sx = x_.source[x];
          const float v = sx < 0 ? 0.f : src[sx];
          row[x] = std::isfinite(v) ? v : 0.f;
        }
      }
    });
  }

  void crop(const float* in, float* out) {
    const int64_t rows = z_.n * y_.n;
    pool_.parallelFor(rows, [this, in, out](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t z = r / y_.n, y = r % y_.n;
        const float* src = estimate_.get() +
                           ((z + z_.before) * y_.padded + (y + y_.before)) * x_.padded + x_.before;
        const float* orig = in + r * x_.n;
        float* dst = out + r * x_.n;
        for (int64_t x = 0; x < x_.n; ++x) dst[x] = std::isfinite(orig[x]) ? src[x] : orig[x];
      }
    });
  }

  void step(const Job& job) {
    float* work = work_.get();
    float* est = estimate_.get();
    const float* img = image_.get();
    if (p_.tvLambda > 0) computeDivergence();
    // blurred = PSF ⊛ estimate; ratio = image / max(blurred, ε)
    convolve(est, work, /*adjoint=*/false);
    // Half an iteration of a large 3D frame is long on a busy CPU: a cancel need not wait for both
    // halves.
    job.checkCancelled();
    const float eps = p_.epsilon;
    forChunks(pool_, n_, [work, img, eps](size_t b, size_t e) {
      rl::divideByBlurred(work + b, img + b, e - b, eps);
    });
    // correction = PSF* ⊛ ratio
    convolve(work, work, /*adjoint=*/true);
    // estimate ← max(estimate · correction [/ TV factor], 0)
    if (p_.accelerate && p_.tvLambda <= 0) {
      float* change = change_.get();
      forChunks(pool_, n_, [est, work, change](size_t b, size_t e) {
        rl::updateEstimateTracked(est + b, work + b, change + b, e - b);
      });
      return;
    }
    float* change = p_.accelerate ? change_.get() : nullptr;
    if (change) std::memcpy(change, est, n_ * sizeof(float));
    if (p_.tvLambda > 0) {
      const float* div = divergence_.get();
      const float lambda = static_cast<float>(p_.tvLambda);
      forChunks(pool_, n_, [est, work, div, lambda](size_t b, size_t e) {
        rl::updateEstimateTv(est + b, work + b, div + b, e - b, lambda, kTvFloor);
      });
    } else {
      forChunks(pool_, n_,
                [est, work](size_t b, size_t e) { rl::updateEstimate(est + b, work + b, e - b); });
    }
    if (change) {
      forChunks(pool_, n_, [est, change](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) change[i] = est[i] - change[i];
      });
    }
  }

  // div(∇u / |∇u|) of the estimate, forward-difference gradient, backward-difference divergence,
  // periodic on the padded domain.
  void computeDivergence() {
    const int64_t Z = z_.padded, Y = y_.padded, X = x_.padded;
    pool_.parallelFor(Z * Y, [this, Z, Y, X](int64_t r0, int64_t r1) {
      const float* u = estimate_.get();
      float* div = divergence_.get();
      auto at = [&](int64_t z, int64_t y, int64_t x) { return u[(z * Y + y) * X + x]; };
      // The unit gradient at (z, y, x); component c of it.
      auto unit = [&](int64_t z, int64_t y, int64_t x, float out[3]) {
        const float c = at(z, y, x);
        const float gx = at(z, y, x + 1 == X ? 0 : x + 1) - c;
        const float gy = at(z, y + 1 == Y ? 0 : y + 1, x) - c;
        const float gz = Z > 1 ? at(z + 1 == Z ? 0 : z + 1, y, x) - c : 0.f;
        const float inv = 1.0f / std::sqrt(gx * gx + gy * gy + gz * gz + kTvEpsilonSq);
        out[0] = gx * inv;
        out[1] = gy * inv;
        out[2] = gz * inv;
      };
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t z = r / Y, y = r % Y;
        const int64_t zm = z == 0 ? Z - 1 : z - 1, ym = y == 0 ? Y - 1 : y - 1;
        for (int64_t x = 0; x < X; ++x) {
          float here[3], left[3], up[3], below[3] = {0, 0, 0};
          unit(z, y, x, here);
          unit(z, y, x == 0 ? X - 1 : x - 1, left);
          unit(z, ym, x, up);
          if (Z > 1) unit(zm, y, x, below);
          div[(z * Y + y) * X + x] = (here[0] - left[0]) + (here[1] - up[1]) + (here[2] - below[2]);
        }
      }
    });
  }

  double dot(const float* a, const float* b) {
    const size_t chunks = (n_ + kChunk - 1) / kChunk;
    double* partials = partials_.data();
    const size_t n = n_;
    pool_.parallelFor(static_cast<int64_t>(chunks), [a, b, partials, n](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const size_t begin = static_cast<size_t>(c) * kChunk;
        partials[c] = rl::dot(a + begin, b + begin, std::min(n, begin + kChunk) - begin);
      }
    });
    double sum = 0;
    for (size_t c = 0; c < chunks; ++c) sum += partials[c];
    return sum;
  }

  const DeconvolveParams& p_;
  ThreadPool& pool_;
  Axis z_, y_, x_;
  const FftPlans* plans_ = nullptr;
  size_t n_ = 0, nc_ = 0;
  bool reflectExact_ = false;
  FftwFloats image_, estimate_, work_, divergence_, previous_, change_, changePrevious_;
  FftwFloats transfer_;  // ReflectExact's eigenvalues (makeTransfer)
  FftwComplex spectrum_, otf_;
  std::vector<double> partials_;
};

}  // namespace

Image richardsonLucy(const Image& in, const Image& psfIn, const DeconvolveParams& p, const Job& job,
                     ThreadPool& pool) {
  validate(p);
  if (in.empty()) throw InvalidArgument("richardson_lucy: the image is empty");
  const Shape shape = in.shape();
  bool anyFinite = false;
  for (int64_t i = 0; i < shape.count() && !anyFinite; ++i) anyFinite = std::isfinite(in.data()[i]);
  const Image psf = rlPsf(psfIn, p);
  if (p.boundary == Boundary::Periodic &&
      (psf.shape().y > shape.y || psf.shape().x > shape.x || (p.threeD && psf.shape().z > shape.z)))
    throw InvalidArgument("richardson_lucy: the PSF (" + std::to_string(psf.shape().z) + "×" +
                          std::to_string(psf.shape().y) + "×" + std::to_string(psf.shape().x) +
                          ") is larger than the image for periodic boundaries");

  Image out = Image::host(shape);
  out.spacing = in.spacing;
  if (!anyFinite) {  // nothing to deconvolve: every value comes back unchanged
    std::memcpy(out.data(), in.data(), size_t(shape.count()) * sizeof(float));
    return out;
  }
  if (p.threeD) {
    Deconvolver rl(shape, psf, p, pool);
    rl.run(in.data(), out.data(), job, 0.0, 1.0);
  } else {
    Deconvolver rl({1, shape.y, shape.x}, psf, p, pool);
    for (int64_t z = 0; z < shape.z; ++z)
      rl.run(in.slice(z), out.slice(z), job, static_cast<double>(z) / shape.z, 1.0 / shape.z);
  }
  return out;
}

}  // namespace stacklens::compute::cpu
