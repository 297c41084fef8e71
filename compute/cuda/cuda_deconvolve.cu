// Richardson–Lucy deconvolution on the GPU with cuFFT (plans cached per padded shape and reused
// across slices): per iteration two R2C and two C2R transforms and three fused element-wise
// passes (multiply by the OTF; ratio; update with optional total variation), the Biggs–Andrews
// extrapolation computed on the device, and no host synchronisation inside the loop.
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compute/cuda/cuda_context.cuh"
#include "compute/cuda/cuda_kernels.cuh"

namespace stacklens::compute::cuda {
namespace {

struct Dims {
  int64_t z, y, x;
  __host__ __device__ int64_t count() const { return z * y * x; }
};

// The observed data in the padded frame: reflected (half-sample symmetric), zero, or as is.
__global__ void padObserved(const float* __restrict__ src, Dims s, float* __restrict__ dst, Dims d,
                            Dims lo, int boundary) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= d.count()) return;
  int64_t x = i % d.x, y = (i / d.x) % d.y, z = i / (d.x * d.y);
  int64_t sx = x - lo.x, sy = y - lo.y, sz = z - lo.z;
  float v;
  if (boundary == static_cast<int>(Boundary::Zero)) {
    bool inside = sx >= 0 && sx < s.x && sy >= 0 && sy < s.y && sz >= 0 && sz < s.z;
    v = inside ? src[(sz * s.y + sy) * s.x + sx] : 0.f;
  } else {
    sx = reflectIndex(sx, s.x);
    sy = reflectIndex(sy, s.y);
    sz = reflectIndex(sz, s.z);
    v = src[(sz * s.y + sy) * s.x + sx];
  }
  dst[i] = v;
}

__global__ void cropEstimate(const float* __restrict__ src, Dims d, Dims lo,
                             float* __restrict__ dst, Dims s) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= s.count()) return;
  int64_t x = i % s.x, y = (i / s.x) % s.y, z = i / (s.x * s.y);
  dst[i] = src[((z + lo.z) * d.y + (y + lo.y)) * d.x + (x + lo.x)];
}

// The PSF (normalised by `scale`) wrapped so that its centre sample sits at the origin.
__global__ void placePsf(const float* __restrict__ psf, Dims p, float* __restrict__ dst, Dims d,
                         float scale) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= p.count()) return;
  int64_t x = i % p.x, y = (i / p.x) % p.y, z = i / (p.x * p.y);
  int64_t tx = ((x - p.x / 2) % d.x + d.x) % d.x;
  int64_t ty = ((y - p.y / 2) % d.y + d.y) % d.y;
  int64_t tz = ((z - p.z / 2) % d.z + d.z) % d.z;
  // atomicAdd: a PSF larger than the frame wraps onto itself (periodic boundary).
  atomicAdd(&dst[(tz * d.y + ty) * d.x + tx], psf[i] * scale);
}

__global__ void scaleSpectrum(cufftComplex* s, int64_t n, float factor) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    s[i].x *= factor;
    s[i].y *= factor;
  }
}

// S ← S·OTF (blur) or S·conj(OTF) (correlate, the adjoint).
template <bool Conjugate>
__global__ void multiplySpectrum(cufftComplex* __restrict__ s, const cufftComplex* __restrict__ otf,
                                 int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  cufftComplex a = s[i], b = otf[i];
  if (Conjugate) b.y = -b.y;
  s[i] = make_cuFloatComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// ratio = observed / (PSF ⊛ estimate), the denominator kept at or above epsilon.
__global__ void ratioKernel(const float* __restrict__ observed, float* __restrict__ blurred,
                            int64_t n, float epsilon) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) blurred[i] = observed[i] / fmaxf(blurred[i], epsilon);
}

__global__ void updatePlain(float* __restrict__ estimate, const float* __restrict__ correction,
                            int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) estimate[i] *= correction[i];
}

__device__ inline float at(const float* u, Dims d, int64_t z, int64_t y, int64_t x) {
  x = min(max(x, int64_t(0)), d.x - 1);
  y = min(max(y, int64_t(0)), d.y - 1);
  z = min(max(z, int64_t(0)), d.z - 1);
  return u[(z * d.y + y) * d.x + x];
}

// |∇u| at (z, y, x) from forward differences (zero across the frame's far edges).
__device__ inline float gradientNorm(const float* u, Dims d, int64_t z, int64_t y, int64_t x) {
  float c = at(u, d, z, y, x);
  float gx = at(u, d, z, y, x + 1) - c, gy = at(u, d, z, y + 1, x) - c;
  float gz = d.z > 1 ? at(u, d, z + 1, y, x) - c : 0.f;
  return sqrtf(gx * gx + gy * gy + gz * gz + 1e-12f);
}

// Dey et al.'s RL–TV: estimate · correction / (1 − λ div(∇u/|∇u|)); writes a new buffer since the
// divergence reads the neighbours of the old estimate.
__global__ void updateTotalVariation(const float* __restrict__ u,
                                     const float* __restrict__ correction, float* __restrict__ next,
                                     Dims d, float lambda) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= d.count()) return;
  int64_t x = i % d.x, y = (i / d.x) % d.y, z = i / (d.x * d.y);
  float c = u[i];
  float nc = gradientNorm(u, d, z, y, x);
  float div = (at(u, d, z, y, x + 1) - c) / nc + (at(u, d, z, y + 1, x) - c) / nc;
  if (x > 0) div -= (c - at(u, d, z, y, x - 1)) / gradientNorm(u, d, z, y, x - 1);
  if (y > 0) div -= (c - at(u, d, z, y - 1, x)) / gradientNorm(u, d, z, y - 1, x);
  if (d.z > 1) {
    div += (at(u, d, z + 1, y, x) - c) / nc;
    if (z > 0) div -= (c - at(u, d, z - 1, y, x)) / gradientNorm(u, d, z - 1, y, x);
  }
  float denominator = fmaxf(1.f - lambda * div, 1e-4f);
  next[i] = c * correction[i] / denominator;
}

// Biggs–Andrews: dots[0] += g·gPrevious, dots[1] += gPrevious·gPrevious, with g = x − y.
__global__ void accelerationDots(const float* __restrict__ x, const float* __restrict__ y,
                                 const float* __restrict__ gPrevious, float* __restrict__ g,
                                 int64_t n, double* dots) {
  using Reduce = cub::BlockReduce<double, 256>;
  __shared__ typename Reduce::TempStorage temp;
  double a = 0, b = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float gi = x[i] - y[i], gp = gPrevious[i];
    a += double(gi) * gp;
    b += double(gp) * gp;
    g[i] = gi;
  }
  double sa = Reduce(temp).Sum(a);
  __syncthreads();
  double sb = Reduce(temp).Sum(b);
  if (threadIdx.x == 0) {
    atomicAdd(&dots[0], sa);
    atomicAdd(&dots[1], sb);
  }
}

// y = max(x + α (x − xPrevious), 0), α = clamp(dots[0] / dots[1], 0, 1), read on the device.
__global__ void accelerationPredict(const float* __restrict__ x,
                                    const float* __restrict__ xPrevious, float* __restrict__ y,
                                    int64_t n, const double* dots) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  double alpha = dots[1] > 0 ? dots[0] / dots[1] : 0.0;
  float a = static_cast<float>(fmin(fmax(alpha, 0.0), 1.0));
  float xi = x[i];
  y[i] = fmaxf(xi + a * (xi - xPrevious[i]), 0.f);
}

bool isSmooth(int64_t n) {
  for (int64_t f : {2, 3, 5, 7})
    while (n % f == 0) n /= f;
  return n == 1;
}
int64_t nextSmooth(int64_t n) {
  while (!isSmooth(n)) ++n;
  return n;
}

// One Richardson–Lucy problem (a slice or the whole volume) in a padded frame of fixed shape.
class RichardsonLucySolver {
 public:
  RichardsonLucySolver(const ContextPtr& ctx, Dims image, const float* psf, Dims psfDims,
                       const DeconvolveParams& p)
      : ctx_(ctx), image_(image), p_(p) {
    const int64_t psfSizes[3] = {psfDims.z, psfDims.y, psfDims.x};
    const int64_t sizes[3] = {image.z, image.y, image.x};
    int64_t frame[3], lo[3];
    for (int a = 0; a < 3; ++a) {
      if (p.boundary == Boundary::Periodic || sizes[a] == 1) {
        lo[a] = 0;
        frame[a] = sizes[a];
      } else {
        lo[a] = psfSizes[a] / 2;
        frame[a] = nextSmooth(sizes[a] + 2 * (psfSizes[a] / 2));
      }
    }
    frame_ = {frame[0], frame[1], frame[2]};
    lo_ = {lo[0], lo[1], lo[2]};
    n_ = frame_.count();
    nc_ = frame_.z * frame_.y * (frame_.x / 2 + 1);
    plans_ = &ctx->fftPlans(frame_.z, frame_.y, frame_.x);
    observed_ = DeviceArray<float>(ctx, n_);
    estimate_ = DeviceArray<float>(ctx, n_);
    work_ = DeviceArray<float>(ctx, n_);
    spectrum_ = DeviceArray<cufftComplex>(ctx, nc_);
    otf_ = DeviceArray<cufftComplex>(ctx, nc_);
    if (p.tvLambda > 0) next_ = DeviceArray<float>(ctx, n_);
    if (p.accelerate) {
      previous_ = DeviceArray<float>(ctx, n_);
      predicted_ = DeviceArray<float>(ctx, n_);
      g_ = DeviceArray<float>(ctx, n_);
      gPrevious_ = DeviceArray<float>(ctx, n_);
      dots_ = DeviceArray<double>(ctx, 2);
    }
    // The OTF, scaled by 1/N so that C2R(R2C(u)·OTF) is the normalised convolution.
    cudaStream_t st = ctx->stream();
    SL_CUDA(cudaMemsetAsync(work_.get(), 0, n_ * sizeof(float), st));
    placePsf<<<blocksFor(psfDims.count(), 256), 256, 0, st>>>(psf, psfDims, work_.get(), frame_,
                                                              1.f);
    SL_LAUNCHED();
    SL_CUFFT(cufftExecR2C(plans_->forward, work_.get(), otf_.get()));
    scaleSpectrum<<<blocksFor(nc_, 256), 256, 0, st>>>(otf_.get(), nc_, 1.f / float(n_));
    SL_LAUNCHED();
  }

  static size_t bytesPerVoxel(const DeconvolveParams& p) {
    // observed, estimate, work, spectrum, OTF (complex: about 2 floats per voxel each), FFT work.
    size_t b = 4 * 3 + 8 * 2 + 8;
    if (p.tvLambda > 0) b += 4;
    if (p.accelerate) b += 4 * 4;
    return b;
  }

  void run(const float* in, float* out, const Job& job, double progressBase, double progressSpan) {
    cudaStream_t st = ctx_->stream();
    const unsigned blocks = blocksFor(n_, 256);
    padObserved<<<blocks, 256, 0, st>>>(in, image_, observed_.get(), frame_, lo_,
                                        static_cast<int>(p_.boundary));
    SL_LAUNCHED();
    // The first estimate is the observed data itself.
    SL_CUDA(cudaMemcpyAsync(estimate_.get(), observed_.get(), n_ * sizeof(float),
                            cudaMemcpyDeviceToDevice, st));
    if (p_.accelerate) {
      SL_CUDA(cudaMemcpyAsync(previous_.get(), observed_.get(), n_ * sizeof(float),
                              cudaMemcpyDeviceToDevice, st));
      SL_CUDA(cudaMemsetAsync(gPrevious_.get(), 0, n_ * sizeof(float), st));
    }
    // Keep at most a few iterations queued ahead of the GPU, so a cancellation takes effect soon
    // without a synchronisation that would leave the GPU idle.
    constexpr int kAhead = 3;
    std::vector<cudaEvent_t> done(p_.iterations, nullptr);
    struct EventsGuard {
      std::vector<cudaEvent_t>& e;
      ~EventsGuard() {
        for (cudaEvent_t x : e)
          if (x) cudaEventDestroy(x);
      }
    } guard{done};
    for (int it = 0; it < p_.iterations; ++it) {
      if (it >= kAhead) {
        SL_CUDA(cudaEventSynchronize(done[it - kAhead]));
        job.report(progressBase + progressSpan * (it - kAhead + 1) / p_.iterations);
      }
      job.checkCancelled();
      float* x = estimate_.get();
      if (p_.accelerate && it >= 2) {
        // y = x + α (x − x_prev), α from the last two steps' changes.
        SL_CUDA(cudaMemsetAsync(dots_.get(), 0, 2 * sizeof(double), st));
        unsigned grid = std::min<unsigned>(blocks, ctx_->smCount() * 8);
        accelerationDots<<<grid, 256, 0, st>>>(estimate_.get(), predicted_.get(), gPrevious_.get(),
                                               g_.get(), n_, dots_.get());
        accelerationPredict<<<blocks, 256, 0, st>>>(estimate_.get(), previous_.get(),
                                                    predicted_.get(), n_, dots_.get());
        SL_LAUNCHED();
        std::swap(g_, gPrevious_);
        SL_CUDA(cudaMemcpyAsync(previous_.get(), estimate_.get(), n_ * sizeof(float),
                                cudaMemcpyDeviceToDevice, st));
        x = predicted_.get();
      } else if (p_.accelerate) {
        if (it == 1) {
          unsigned grid = std::min<unsigned>(blocks, ctx_->smCount() * 8);
          SL_CUDA(cudaMemsetAsync(dots_.get(), 0, 2 * sizeof(double), st));
          accelerationDots<<<grid, 256, 0, st>>>(estimate_.get(), predicted_.get(),
                                                 gPrevious_.get(), g_.get(), n_, dots_.get());
          SL_LAUNCHED();
          std::swap(g_, gPrevious_);
        }
        SL_CUDA(cudaMemcpyAsync(previous_.get(), estimate_.get(), n_ * sizeof(float),
                                cudaMemcpyDeviceToDevice, st));
        SL_CUDA(cudaMemcpyAsync(predicted_.get(), estimate_.get(), n_ * sizeof(float),
                                cudaMemcpyDeviceToDevice, st));
        x = predicted_.get();
      }
      step(x);
      if (!done[it]) SL_CUDA(cudaEventCreateWithFlags(&done[it], cudaEventDisableTiming));
      SL_CUDA(cudaEventRecord(done[it], st));
    }
    cropEstimate<<<blocksFor(image_.count(), 256), 256, 0, st>>>(estimate_.get(), frame_, lo_, out,
                                                                 image_);
    SL_LAUNCHED();
    SL_CUDA(cudaStreamSynchronize(st));
  }

 private:
  // estimate ← RL update of x (x is the estimate itself, or the accelerated prediction).
  void step(const float* x) {
    cudaStream_t st = ctx_->stream();
    const unsigned blocks = blocksFor(n_, 256), cblocks = blocksFor(nc_, 256);
    SL_CUFFT(cufftExecR2C(plans_->forward, const_cast<float*>(x), spectrum_.get()));
    multiplySpectrum<false><<<cblocks, 256, 0, st>>>(spectrum_.get(), otf_.get(), nc_);
    SL_CUFFT(cufftExecC2R(plans_->inverse, spectrum_.get(), work_.get()));
    ratioKernel<<<blocks, 256, 0, st>>>(observed_.get(), work_.get(), n_, p_.epsilon);
    SL_CUFFT(cufftExecR2C(plans_->forward, work_.get(), spectrum_.get()));
    multiplySpectrum<true><<<cblocks, 256, 0, st>>>(spectrum_.get(), otf_.get(), nc_);
    SL_CUFFT(cufftExecC2R(plans_->inverse, spectrum_.get(), work_.get()));
    if (p_.tvLambda > 0) {
      updateTotalVariation<<<blocks, 256, 0, st>>>(x, work_.get(), next_.get(), frame_,
                                                   static_cast<float>(p_.tvLambda));
      std::swap(estimate_, next_);
    } else {
      if (x != estimate_.get())
        SL_CUDA(
            cudaMemcpyAsync(estimate_.get(), x, n_ * sizeof(float), cudaMemcpyDeviceToDevice, st));
      updatePlain<<<blocks, 256, 0, st>>>(estimate_.get(), work_.get(), n_);
    }
    SL_LAUNCHED();
  }

  ContextPtr ctx_;
  Dims image_;
  DeconvolveParams p_;
  Dims frame_{}, lo_{};
  int64_t n_ = 0, nc_ = 0;
  Context::FftPlans* plans_ = nullptr;
  DeviceArray<float> observed_, estimate_, work_, next_, previous_, predicted_, g_, gPrevious_;
  DeviceArray<cufftComplex> spectrum_, otf_;
  DeviceArray<double> dots_;
};

}  // namespace

Image richardsonLucy(const ContextPtr& ctx, const Image& input, const Image& psfInput,
                     const DeconvolveParams& p, const Job& job) {
  if (p.iterations < 0) throw InvalidArgument("Richardson-Lucy: iterations must be >= 0");
  if (!(p.tvLambda >= 0)) throw InvalidArgument("Richardson-Lucy: TV lambda must be >= 0");
  if (!(p.epsilon > 0)) throw InvalidArgument("Richardson-Lucy: epsilon must be positive");
  if (input.empty()) throw InvalidArgument("Richardson-Lucy: the image is empty");
  if (psfInput.empty()) throw InvalidArgument("Richardson-Lucy: the PSF is empty");
  const Shape s = input.shape();
  const bool volume = p.threeD && s.z > 1;
  // The PSF on the host (it is small): the centre slice for 2D work, normalised to sum 1.
  Image psfHost = psfInput;
  if (!psfHost.onHost()) {
    Image h = Image::host(psfInput.shape());
    readBack(ctx, h.data(), psfInput.data(), psfInput.shape().count());
    psfHost = h;
  }
  Shape ps = psfHost.shape();
  const float* psfStart = psfHost.data();
  if (!volume && ps.z > 1) {
    psfStart = psfHost.slice(ps.z / 2);
    ps.z = 1;
  }
  double sum = 0;
  for (int64_t i = 0; i < ps.count(); ++i) {
    if (!std::isfinite(psfStart[i]) || psfStart[i] < 0)
      throw InvalidArgument("Richardson-Lucy: the PSF has negative or non-finite values");
    sum += psfStart[i];
  }
  if (!(sum > 0)) throw InvalidArgument("Richardson-Lucy: the PSF sums to zero");
  std::vector<float> psfNorm(ps.count());
  for (int64_t i = 0; i < ps.count(); ++i) psfNorm[i] = static_cast<float>(psfStart[i] / sum);
  DeviceArray<float> psf(ctx, psfNorm.size());
  SL_CUDA(cudaMemcpyAsync(psf.get(), psfNorm.data(), psfNorm.size() * sizeof(float),
                          cudaMemcpyHostToDevice, ctx->stream()));
  SL_CUDA(cudaStreamSynchronize(ctx->stream()));

  Image in = onDevice(ctx, input);
  Image out = deviceBuffer<float>(ctx, s);
  out.spacing = in.spacing;
  Dims image = volume ? Dims{s.z, s.y, s.x} : Dims{1, s.y, s.x};
  Dims psfDims{ps.z, ps.y, ps.x};
  // Plan the memory before launching anything big.
  size_t need = RichardsonLucySolver::bytesPerVoxel(p) *
                size_t(image.z + (volume && p.boundary != Boundary::Periodic ? ps.z : 0)) *
                size_t(image.y + (p.boundary != Boundary::Periodic ? ps.y : 0)) *
                size_t(image.x + (p.boundary != Boundary::Periodic ? ps.x : 0));
  if (need + 2 * in.bytes() > ctx->budget())
    throw DeviceOutOfMemory("Richardson-Lucy needs about " + std::to_string(need >> 20) +
                            " MiB of GPU memory; the budget is " +
                            std::to_string(ctx->budget() >> 20) + " MiB");
  RichardsonLucySolver solver(ctx, image, psf.get(), psfDims, p);
  if (volume) {
    solver.run(in.data(), out.data(), job, 0.0, 1.0);
  } else {
    for (int64_t z = 0; z < s.z; ++z)
      solver.run(in.slice(z), out.slice(z), job, double(z) / s.z, 1.0 / s.z);
  }
  return out;
}

}  // namespace stacklens::compute::cuda
