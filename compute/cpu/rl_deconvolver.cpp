// Deconvolver: Richardson–Lucy's frame, its buffers and its iteration on the CPU (the semantics
// are compute/cpu/richardson_lucy.cpp's).
#include "compute/cpu/rl_deconvolver.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "compute/cpu/reflect_index.h"
#include "compute/cpu/rl_extrapolation.h"
#include "compute/cpu/rl_kernels.h"
#include "compute/rl_frame.h"

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

bool isPadded(bool deconvolved, Boundary boundary) {
  return deconvolved && boundary != Boundary::Periodic && boundary != Boundary::ReflectExact;
}

// An axis of the frame: `padded` samples (rlFrame), the data after half the PSF when padded.
FrameAxis makeAxis(int64_t n, int64_t psfSize, bool deconvolved, Boundary boundary,
                   int64_t padded) {
  FrameAxis a;
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

}  // namespace

Shape Deconvolver::frameOf(Shape data, Shape ps, const DeconvolveParams& p) {
  const std::array<bool, 3> padded{isPadded(p.threeD, p.boundary), isPadded(true, p.boundary),
                                   isPadded(true, p.boundary)};
  return rlFrame({data.z + (padded[0] ? ps.z / 2 * 2 : 0), data.y + (padded[1] ? ps.y / 2 * 2 : 0),
                  data.x + (padded[2] ? ps.x / 2 * 2 : 0)},
                 padded);
}

const FftPlans& Deconvolver::plansOf(Shape f, const DeconvolveParams& p, int threads) {
  return p.boundary == Boundary::ReflectExact ? cosinePlans(f.z, f.y, f.x, threads)
                                              : fftPlans(f.z, f.y, f.x, threads);
}

Deconvolver::Deconvolver(Shape data, const Image& psf, const DeconvolveParams& p, ThreadPool& pool)
    : p_(p), pool_(pool) {
  const Shape ps = psf.shape();
  const Shape frame = frameOf(data, ps, p);
  z_ = makeAxis(data.z, ps.z, p.threeD, p.boundary, frame.z);
  y_ = makeAxis(data.y, ps.y, true, p.boundary, frame.y);
  x_ = makeAxis(data.x, ps.x, true, p.boundary, frame.x);
  reflectExact_ = p.boundary == Boundary::ReflectExact;
  plans_ = &plansOf(frame, p, pool.size());
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
  // The transforms run as slab and column passes that carry the element-wise work.
  if (!reflectExact_)
    passes_ = std::make_unique<SlabColumnFft>(z_.padded, y_.padded, x_.padded, pool);
  if (p.tvLambda > 0) divergence_ = allocFloats(n_);
  if (p.accelerate) {
    previous_ = allocFloats(n_);
    change_ = allocFloats(n_);
    changePrevious_ = allocFloats(n_);
  }
  makeOtf(psf);
}

// Deconvolves one block of data (a slice in 2D mode, the stack in 3D mode) into out.
void Deconvolver::run(const float* in, float* out, const Job& job, double progressBase,
                      double progressSpan) {
  fillPadded(in);
  std::memcpy(estimate_.get(), image_.get(), n_ * sizeof(float));
  if (p_.accelerate) std::memcpy(previous_.get(), image_.get(), n_ * sizeof(float));
  Extrapolation extrapolation(n_, pool_);
  bool ready = false;  // spectrum_ holds the estimate's slab transforms (the passes' start)
  for (int k = 0; k < p_.iterations; ++k) {
    job.checkCancelled();
    if (passes_) {
      // Extrapolation changes the estimate after the step: its slab transforms are made afresh.
      const bool prepareNext = !p_.accelerate && k + 1 < p_.iterations;
      stepInPasses(job, ready, prepareNext);
      ready = prepareNext;
    } else {
      step(job);
    }
    if (p_.accelerate && k + 1 < p_.iterations) {
      extrapolation.apply(estimate_.get(), previous_.get(), change_.get(), changePrevious_.get());
      std::swap(change_, changePrevious_);
    }
    job.report(progressBase + progressSpan * (k + 1) / p_.iterations);
  }
  crop(in, out);
}

// The PSF placed with its centre at index 0 (circular shift), transformed, and scaled by
// 1 / count so that each c2r ∘ (· OTF) ∘ r2c round trip needs no further normalisation.
void Deconvolver::makeOtf(const Image& psf) {
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
  ++executed_.forward;
  const float scale = 1.0f / static_cast<float>(n_);
  float* h = reinterpret_cast<float*>(otf_.get());
  for (size_t i = 0; i < 2 * nc_; ++i) h[i] *= scale;
  if (passes_) {
    otfColumns_ = allocComplex(passes_->blockedCount());
    passes_->toColumnBlocks(otf_.get(), otfColumns_.get());
    otf_.reset();
  }
}

// Boundary::ReflectExact: the convolution of the data mirrored past every edge is diagonal in
// the DCT-II basis (compute/cuda/reflect_exact.cuh), with the eigenvalues
// H[k] = Σ_m psf[m] · Π_a cos(π k_a m_a / n_a), summed one axis at a time in double and scaled
// by 1 / Π 2n over the transformed axes (FFTW's DCT-III ∘ DCT-II multiplies by that).
void Deconvolver::makeTransfer(const Image& psf) {
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
  const double scale = 1.0 / ((Z > 1 ? 2.0 * double(Z) : 1.0) * 2.0 * double(Y) * 2.0 * double(X));
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

// ReflectExact's dst ← PSF ⊛ src; dst may be src. The PSF is symmetric: convolution and
// correlation are the same. (The other boundaries convolve inside stepInPasses' passes.)
void Deconvolver::convolve(const float* src, float* dst) {
  if (dst != src) std::memcpy(dst, src, n_ * sizeof(float));
  plans_->dct2(dst);
  ++executed_.forward;
  const float* h = transfer_.get();
  forChunks(pool_, n_, [dst, h](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) dst[i] *= h[i];
  });
  plans_->dct3(dst);
  ++executed_.backward;
}

void Deconvolver::fillPadded(const float* in) {
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

void Deconvolver::crop(const float* in, float* out) {
  const int64_t rows = z_.n * y_.n;
  pool_.parallelFor(rows, [this, in, out](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t z = r / y_.n, y = r % y_.n;
      const float* src =
          estimate_.get() + ((z + z_.before) * y_.padded + (y + y_.before)) * x_.padded + x_.before;
      const float* orig = in + r * x_.n;
      float* dst = out + r * x_.n;
      for (int64_t x = 0; x < x_.n; ++x) dst[x] = std::isfinite(orig[x]) ? src[x] : orig[x];
    }
  });
}

void Deconvolver::step(const Job& job) {
  if (passes_) return stepInPasses(job, /*ready=*/false, /*prepareNext=*/false);
  // ReflectExact: whole-array cosine transforms, the element-wise work in passes of its own.
  float* work = work_.get();
  float* est = estimate_.get();
  const float* img = image_.get();
  if (p_.tvLambda > 0) computeDivergence();
  // blurred = PSF ⊛ estimate; ratio = image / max(blurred, ε)
  convolve(est, work);
  // Half an iteration of a large 3D frame is long on a busy CPU: a cancel need not wait for both
  // halves.
  job.checkCancelled();
  const float eps = p_.epsilon;
  forChunks(pool_, n_, [work, img, eps](size_t b, size_t e) {
    rl::divideByBlurred(work + b, img + b, e - b, eps);
  });
  // correction = PSF* ⊛ ratio
  convolve(work, work);
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

// The same iteration as step()'s, each array swept once per pass: the column passes multiply by
// the OTF between the column transforms, the slab passes take the ratio and the update between a
// slab's inverse and forward transforms.
void Deconvolver::stepInPasses(const Job& job, bool ready, bool prepareNext) {
  const int64_t S = passes_->slabValues();
  float* est = estimate_.get();
  const float* img = image_.get();
  fftwf_complex* spectrum = spectrum_.get();
  if (p_.tvLambda > 0) computeDivergence();
  // blurred = PSF ⊛ estimate
  if (!ready)
    passes_->slabs(spectrum, /*inverse=*/false, /*forward=*/true, [est, S](int64_t s, float* v) {
      std::memcpy(v, est + s * S, size_t(S) * sizeof(float));
    });
  passes_->filterColumns(spectrum, otfColumns_.get(), /*conjugate=*/false);
  job.checkCancelled();
  // ratio = image / max(blurred, ε); correction = PSF* ⊛ ratio
  const float eps = p_.epsilon;
  passes_->slabs(spectrum, true, true, [img, S, eps](int64_t s, float* v) {
    rl::divideByBlurred(v, img + s * S, size_t(S), eps);
  });
  passes_->filterColumns(spectrum, otfColumns_.get(), /*conjugate=*/true);
  // estimate ← max(estimate · correction [/ TV factor], 0)
  passes_->slabs(spectrum, true, prepareNext, [this, est, S, prepareNext](int64_t s, float* v) {
    updateSlab(est + s * S, v, s * S, size_t(S));
    if (prepareNext) std::memcpy(v, est + s * S, size_t(S) * sizeof(float));
  });
  executed_.forward += 2;
  executed_.backward += 2;
}

// step()'s update on n values of the frame from index `offset`.
void Deconvolver::updateSlab(float* est, const float* correction, int64_t offset, size_t n) {
  float* change = p_.accelerate ? change_.get() + offset : nullptr;
  if (change && p_.tvLambda <= 0) return rl::updateEstimateTracked(est, correction, change, n);
  if (change) std::memcpy(change, est, n * sizeof(float));
  if (p_.tvLambda > 0)
    rl::updateEstimateTv(est, correction, divergence_.get() + offset, n,
                         static_cast<float>(p_.tvLambda), kTvFloor);
  else
    rl::updateEstimate(est, correction, n);
  if (change)
    for (size_t i = 0; i < n; ++i) change[i] = est[i] - change[i];
}

// div(∇u / |∇u|) of the estimate, forward-difference gradient, backward-difference divergence,
// periodic on the padded domain.
void Deconvolver::computeDivergence() {
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

}  // namespace stacklens::compute::cpu
