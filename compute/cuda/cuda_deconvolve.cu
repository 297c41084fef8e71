// Richardson–Lucy deconvolution on the GPU. Frames whose sides are powers of two or the mixed
// lengths 288, 576, 1152, 2304, 3456 (periodic frames of such images, and the reflect and zero
// frames that compute/rl_frame.h chooses for both backends) run on our own fused FFT passes
// (cuda_rl_fused.cu); other frames on cuFFT (plans cached per padded shape and reused across
// slices): per iteration two R2C and two C2R transforms, with the element-wise work (the two OTF
// products, the ratio, the update with its clamp, TV and change tracking) either in the
// transforms' store callbacks (cuFFT LTO callbacks, compute/cuda/lto/; the default for 3D
// frames) or in four separate fused passes (the default for 2D, where it is faster, and the
// fallback where cuFFT cannot link callbacks). The OTF of the last call is kept for the next with
// the same PSF and frame (rl_otf_cache.cuh); the Biggs–Andrews step size is computed and applied
// on the device, and there is no host synchronisation inside the loop. Semantics are the CPU
// backend's (compute/cpu/richardson_lucy.cpp). The kernels are in kernels/deconvolve.cuh.
#include <cufftXt.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "compute/cuda/cuda_rl_fused.cuh"
#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/host/rl_otf_cache.cuh"
#include "compute/cuda/host/rl_prepared_psf.cuh"
#include "compute/cuda/kernels/deconvolve.cuh"
#include "compute/cuda/lto/rl_callback_args.h"
#include "compute/cuda/psf_symmetry.h"
#include "compute/cuda/reflect_exact.cuh"
#include "compute/cuda/tuning/deconvolve.cuh"
#include "compute/log.h"
#include "compute/rl_frame.h"
#include "rl_callbacks_fatbin.h"

namespace stacklens::compute::cuda {
namespace {

// The four transforms of one iteration with their store callbacks, for one frame shape, and the
// device copy of the callbacks' arguments; made once per shape and kept in the context, since
// making them links the callbacks, which is slow.
struct CallbackPlans {
  cufftHandle blur = 0, ratio = 0, correlate = 0, update = 0;
  void* workArea = nullptr;
  RlCallbackArgs* args = nullptr;
};

class CallbackPlanCache : public Context::Extension {
 public:
  explicit CallbackPlanCache(Context* ctx) : ctx_(ctx) {}
  ~CallbackPlanCache() override {
    for (auto& [shape, p] : plans_) destroy(p);
  }

  // The plans for a frame, or null (said once per process through the log) when cuFFT cannot link
  // callbacks here: no nvJitLink, or a driver too old for the embedded LTO-IR.
  CallbackPlans* get(Dims frame) {
    if (unavailable_) return nullptr;
    auto key = std::make_tuple(frame.z, frame.y, frame.x);
    auto it = plans_.find(key);
    if (it != plans_.end()) return &it->second;
    // A few shapes at most: each holds a work area for the context's life.
    if (plans_.size() >= Policy::callbackPlanShapes) {
      SL_CUDA(cudaStreamSynchronize(ctx_->stream()));
      destroy(plans_.begin()->second);
      plans_.erase(plans_.begin());
    }
    CallbackPlans p;
    std::string failure;
    try {
      failure = make(frame, &p);
    } catch (...) {
      destroy(p);
      throw;
    }
    if (!failure.empty()) {
      destroy(p);
      unavailable_ = true;
      static std::atomic<bool> said{false};
      if (!said.exchange(true))
        logMessage(LogLevel::Warning, "cuFFT callbacks unavailable (" + failure +
                                          "); Richardson-Lucy on the GPU uses separate "
                                          "element-wise kernels");
      return nullptr;
    }
    return &plans_.emplace(key, p).first->second;
  }

 private:
  std::string make(Dims frame, CallbackPlans* p) {
    p->args = static_cast<RlCallbackArgs*>(ctx_->allocate(sizeof(RlCallbackArgs)));
    void* info = p->args;
    long long dims[3] = {frame.z, frame.y, frame.x};
    int rank = frame.z > 1 ? 3 : 2;
    long long* n = frame.z > 1 ? dims : dims + 1;
    size_t work = 0;
    struct Spec {
      cufftHandle* handle;
      const char* symbol;
      cufftXtCallbackType type;
      cufftType transform;
    } specs[] = {{&p->blur, "stacklensRlBlurStore", CUFFT_CB_ST_COMPLEX, CUFFT_R2C},
                 {&p->ratio, "stacklensRlRatioStore", CUFFT_CB_ST_REAL, CUFFT_C2R},
                 {&p->correlate, "stacklensRlCorrelateStore", CUFFT_CB_ST_COMPLEX, CUFFT_R2C},
                 {&p->update, "stacklensRlUpdateStore", CUFFT_CB_ST_REAL, CUFFT_C2R}};
    for (const Spec& s : specs) {
      cufftResult r = cufftCreate(s.handle);
      if (r == CUFFT_SUCCESS) r = cufftSetAutoAllocation(*s.handle, 0);
      if (r == CUFFT_SUCCESS)
        r = cufftXtSetJITCallback(*s.handle, s.symbol, rl_callbacks_fatbin,
                                  sizeof(rl_callbacks_fatbin), s.type, &info);
      size_t w = 0;
      if (r == CUFFT_SUCCESS)
        r = cufftMakePlanMany64(*s.handle, rank, n, nullptr, 1, 0, nullptr, 1, 0, s.transform, 1,
                                &w);
      if (r == CUFFT_SUCCESS) r = cufftSetStream(*s.handle, ctx_->stream());
      if (r != CUFFT_SUCCESS)
        return std::string("making a plan with ") + s.symbol + " gave cuFFT error " +
               std::to_string(static_cast<int>(r));
      work = std::max(work, w);
    }
    // One work area for the four plans (they run one after another on the same stream).
    p->workArea = ctx_->allocate(std::max<size_t>(work, 256));
    for (const Spec& s : specs) SL_CUFFT(cufftSetWorkArea(*s.handle, p->workArea));
    return {};
  }

  void destroy(CallbackPlans& p) {
    for (cufftHandle h : {p.blur, p.ratio, p.correlate, p.update})
      if (h) cufftDestroy(h);
    ctx_->release(p.workArea);
    ctx_->release(p.args);
    p = CallbackPlans{};
  }

  Context* ctx_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, CallbackPlans> plans_;
  bool unavailable_ = false;
};

CallbackPlans* callbackPlans(const ContextPtr& ctx, Dims frame) {
  std::unique_ptr<Context::Extension>& slot = ctx->extension("richardson_lucy.callback_plans");
  if (!slot) slot = std::make_unique<CallbackPlanCache>(ctx.get());
  return static_cast<CallbackPlanCache&>(*slot).get(frame);
}

// The four transforms of an iteration, as bits of a callback mask.
constexpr unsigned kBlur = 1, kRatio = 2, kCorrelate = 4, kUpdate = 8, kAllTransforms = 15;
// Which transforms carry their element-wise work in a callback by default, per frame kind
// (Policy::callbacksIn2D, Policy::callbacksIn3D; measured in compute/BENCHMARKS.md).
constexpr unsigned kDefaultCallbacks2D = Policy::callbacksIn2D ? kAllTransforms : 0,
                   kDefaultCallbacks3D = Policy::callbacksIn3D ? kAllTransforms : 0;

// The mask for a frame: STACKLENS_CUDA_FFT_CALLBACKS=0 (none), =1 (all) or four 0/1 digits for
// blur, ratio, correlate, update (for measurements), else the default.
unsigned callbackMask(Dims frame) {
  unsigned fallback = frame.z > 1 ? kDefaultCallbacks3D : kDefaultCallbacks2D;
  const char* env = std::getenv("STACKLENS_CUDA_FFT_CALLBACKS");
  if (!env) return fallback;
  if (std::strcmp(env, "0") == 0) return 0;
  if (std::strcmp(env, "1") == 0) return kAllTransforms;
  if (std::strlen(env) != 4) return fallback;
  unsigned mask = 0;
  for (int i = 0; i < 4; ++i)
    if (env[i] == '1') mask |= 1u << i;
  return mask;
}

// Our fused FFT passes (cuda_rl_fused.cu) for the frames they take, unless
// STACKLENS_CUDA_RL_FFT=cufft asks for cuFFT (for comparisons).
bool useFusedTransforms(Dims frame) {
  if (!FusedRlTransforms::supports(frame.z, frame.y, frame.x)) return false;
  const char* env = std::getenv("STACKLENS_CUDA_RL_FFT");
  return !(env && std::strcmp(env, "cufft") == 0);
}

// One Richardson–Lucy problem (a slice, or the stack in 3D mode) in a padded frame of fixed shape.
class RichardsonLucySolver {
 public:
  // The padded frame, as the CPU backend: z is deconvolved only in 3D mode; periodic and
  // reflect-exact axes are not padded; others are padded by psf/2 on both sides, then at the end to
  // the frame's length (compute/rl_frame.h).
  static Dims frameFor(Dims image, Dims psf, const DeconvolveParams& p, Dims* lo) {
    const int64_t n[3] = {image.z, image.y, image.x}, ps[3] = {psf.z, psf.y, psf.x};
    int64_t need[3], l[3];
    std::array<bool, 3> padded{};
    for (int a = 0; a < 3; ++a) {
      padded[a] = (a > 0 || p.threeD) && p.boundary != Boundary::Periodic &&
                  p.boundary != Boundary::ReflectExact;
      l[a] = padded[a] ? ps[a] / 2 : 0;
      need[a] = n[a] + 2 * l[a];
    }
    if (lo) *lo = {l[0], l[1], l[2]};
    const Shape f = rlFrame({need[0], need[1], need[2]}, padded);
    return {f.z, f.y, f.x};
  }

  static size_t bytesPerVoxel(const DeconvolveParams& p, Dims frame) {
    // image and estimate (4 each), spectrum and OTF (≈ 4 each: n/2+1 complex per row); cuFFT
    // adds a work array (4) and its FFT work area (≈ 8), the fused passes nothing.
    size_t b = 4 * 2 + 4 * 2 + (useFusedTransforms(frame) ? 0 : 4 + 8);
    if (p.tvLambda > 0) b += 4;
    if (p.accelerate) b += 4 * 3;
    return b;
  }

  // psf: the normalised PSF on the device; psfValues: the same on the host (the OTF cache's key).
  RichardsonLucySolver(const ContextPtr& ctx, Dims image, const float* psf, Dims psfDims,
                       const std::vector<float>& psfValues, const DeconvolveParams& p)
      : ctx_(ctx), image_(image), p_(p), reflectExact_(p.boundary == Boundary::ReflectExact) {
    frame_ = frameFor(image, psfDims, p, &lo_);
    n_ = frame_.count();
    nc_ = frame_.z * frame_.y * (frame_.x / 2 + 1);
    observed_ = deviceBuffer<float>(ctx, {frame_.z, frame_.y, frame_.x});
    estimate_ = DeviceArray<float>(ctx, n_);
    if (p.tvLambda > 0) divergence_ = DeviceArray<float>(ctx, n_);
    if (p.accelerate) {
      previous_ = DeviceArray<float>(ctx, n_);
      change_ = DeviceArray<float>(ctx, n_);
      changePrevious_ = DeviceArray<float>(ctx, n_);
      dots_ = DeviceArray<double>(ctx, 2);
    }
    const bool fused = useFusedTransforms(frame_);
    if (!fused) {
      work_ = DeviceArray<float>(ctx, n_);
      spectrum_ = DeviceArray<cufftComplex>(ctx, nc_);
    }
    // The OTF, scaled by 1/N so that C2R(R2C(u)·OTF) is the normalised convolution: from the
    // cache when the last call had the same PSF and frame, else made here from the PSF wrapped
    // into a frame.
    // (The key's PSF values decide realOtf, so a kept OTF always has the layout asked for.)
    const bool realOtf =
        fused && !reflectExact_ && isPointSymmetric(psfValues, psfDims.z, psfDims.y, psfDims.x);
    RlOtfCache::Key key{{frame_.z, frame_.y, frame_.x},
                        {psfDims.z, psfDims.y, psfDims.x},
                        fused,
                        psfValues,
                        reflectExact_};
    RlOtfCache& cache = RlOtfCache::of(ctx);
    otf_ = cache.find(key);
    const bool makeOtf = !otf_;
    if (makeOtf)
      otf_ = cache.make(ctx, std::move(key),
                        fused ? FusedRlTransforms::otfFloats(frame_.z, frame_.y, frame_.x, realOtf)
                              : size_t(2) * nc_);
    cudaStream_t st = ctx->stream();
    if (reflectExact_) {
      // The transfer pairs straight from the PSF (reflect_exact.cuh), in the fused passes' layout
      // or cuFFT's half spectrum; no callbacks (the convolution mixes values).
      if (fused) {
        fused_ = std::make_unique<FusedRlTransforms>(ctx, frame_.z, frame_.y, frame_.x, otf_.get(),
                                                     /*realOtf=*/false, /*reflectExact=*/true);
        if (makeOtf) fused_->makeReflectExactOtf(psf, psfDims.z, psfDims.y, psfDims.x);
        return;
      }
      plans_ = &ctx->fftPlans(frame_.z, frame_.y, frame_.x);
      if (makeOtf)
        reflect_exact::makeTransfer(ctx, psf, psfDims.z, psfDims.y, psfDims.x, frame_.z, frame_.y,
                                    frame_.x, frame_.x / 2 + 1, 1.f / float(n_), otfSpectrum());
      return;
    }
    DeviceArray<float> placed;
    if (makeOtf) {
      placed = DeviceArray<float>(ctx, n_);
      SL_CUDA(cudaMemsetAsync(placed.get(), 0, n_ * sizeof(float), st));
      placePsf<<<blocksFor(psfDims.count(), kThreads), kThreads, 0, st>>>(psf, psfDims,
                                                                          placed.get(), frame_);
      SL_LAUNCHED();
    }
    if (fused) {
      fused_ = std::make_unique<FusedRlTransforms>(ctx, frame_.z, frame_.y, frame_.x, otf_.get(),
                                                   realOtf);
      if (makeOtf) fused_->makeOtf(placed.get());
      return;
    }
    cufftComplex* otf = otfSpectrum();
    callbackMask_ = callbackMask(frame_);
    if (callbackMask_) callbacks_ = callbackPlans(ctx, frame_);
    if (!callbacks_) callbackMask_ = 0;
    // With the blur transform's callback, the OTF is that transform of the placed PSF with no
    // OTF set yet (it stores the spectrum scaled by 1/N); else the plain plans make it.
    const bool otfByCallback = makeOtf && uses(kBlur);
    if (callbackMask_ != kAllTransforms || (makeOtf && !otfByCallback))
      plans_ = &ctx->fftPlans(frame_.z, frame_.y, frame_.x);
    if (callbacks_) {
      RlCallbackArgs a{};
      a.otf = otfByCallback ? nullptr : otf;
      a.inverseCount = 1.f / float(n_);
      a.observed = observed_.data();
      a.epsilon = p.epsilon;
      a.estimate = estimate_.get();
      a.divergence = p.tvLambda > 0 ? divergence_.get() : nullptr;
      a.lambda = static_cast<float>(p.tvLambda);
      a.change = nullptr;
      // Pageable copies: staged before the calls return, ordered on the stream.
      SL_CUDA(cudaMemcpyAsync(callbacks_->args, &a, sizeof a, cudaMemcpyHostToDevice, st));
      if (otfByCallback) {
        SL_CUFFT(cufftExecR2C(callbacks_->blur, placed.get(), otf));
        a.otf = otf;
        SL_CUDA(cudaMemcpyAsync(callbacks_->args, &a, sizeof a, cudaMemcpyHostToDevice, st));
      }
    }
    if (makeOtf && !otfByCallback) {
      SL_CUFFT(cufftExecR2C(plans_->forward, placed.get(), otf));
      scaleSpectrum<<<blocksFor(nc_, kThreads), kThreads, 0, st>>>(otf, nc_, 1.f / float(n_));
      SL_LAUNCHED();
    }
  }

  // Whether the frame is the image itself (no padding to crop).
  bool frameIsImage() const {
    return frame_.z == image_.z && frame_.y == image_.y && frame_.x == image_.x;
  }

  // run() with the result written over the observed data, which is not needed by then, and
  // returned: a frame that is the image then needs no output array besides the solver's own.
  Image runIntoObserved(const float* in, const Job& job) {
    Image out = observed_;
    run(in, nullptr, job, 0.0, 1.0);
    return out;
  }

  // out: null for runIntoObserved.
  void run(const float* in, float* out, const Job& job, double progressBase, double progressSpan) {
    cudaStream_t st = ctx_->stream();
    const unsigned blocks = blocksFor(n_, kThreads);
    // The first estimate is the (padded or permuted) image itself.
    if (reflectExact_)
      permuteObserved<<<blocks, kThreads, 0, st>>>(in, frame_, observed_.data(), estimate_.get(),
                                                   p_.accelerate ? previous_.get() : nullptr);
    else
      padObserved<<<blocks, kThreads, 0, st>>>(in, image_, observed_.data(), frame_, lo_,
                                               static_cast<int>(p_.boundary), estimate_.get(),
                                               p_.accelerate ? previous_.get() : nullptr);
    SL_LAUNCHED();
    // At most a few iterations are queued ahead of the GPU, so a cancellation takes effect soon
    // without a synchronisation that would leave the GPU idle.
    constexpr int kAhead = Policy::iterationsAhead;
    std::vector<cudaEvent_t> done(p_.iterations, nullptr);
    struct EventsGuard {
      std::vector<cudaEvent_t>& events;
      ~EventsGuard() {
        for (cudaEvent_t e : events)
          if (e) cudaEventDestroy(e);
      }
    } guard{done};
    bool haveChange = false;
    if (fused_) fused_->forward(estimate_.get());
    for (int k = 0; k < p_.iterations; ++k) {
      if (k >= kAhead) {
        ctx_->waitFor(done[k - kAhead]);
        job.report(progressBase + progressSpan * (k - kAhead + 1) / p_.iterations);
      }
      job.checkCancelled();
      const bool last = k + 1 == p_.iterations;
      if (fused_)
        fusedStep(/*forwardNext=*/!last && !p_.accelerate);
      else
        step();
      if (p_.accelerate && k + 1 < p_.iterations) {
        const double* dots = nullptr;
        if (haveChange) {
          SL_CUDA(cudaMemsetAsync(dots_.get(), 0, 2 * sizeof(double), st));
          unsigned grid = std::min<unsigned>(blocks, ctx_->smCount() * Policy::dotBlocksPerSm);
          accelerationDots<<<grid, kThreads, 0, st>>>(change_.get(), changePrevious_.get(), n_,
                                                      dots_.get());
          dots = dots_.get();
        }
        extrapolate<<<blocks, kThreads, 0, st>>>(estimate_.get(), previous_.get(), n_, dots);
        SL_LAUNCHED();
        if (fused_) fused_->forward(estimate_.get());
        std::swap(change_, changePrevious_);
        haveChange = true;
      }
      // Blocking: past the polling, the host sleeps through the queued iterations.
      SL_CUDA(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming | cudaEventBlockingSync));
      SL_CUDA(cudaEventRecord(done[k], st));
    }
    if (!out) out = observed_.data();  // runIntoObserved
    if (reflectExact_)
      unpermuteEstimate<<<blocksFor(image_.count(), kThreads), kThreads, 0, st>>>(estimate_.get(),
                                                                                  frame_, in, out);
    else
      cropEstimate<<<blocksFor(image_.count(), kThreads), kThreads, 0, st>>>(
          estimate_.get(), frame_, lo_, in, out, image_);
    SL_LAUNCHED();
    ctx_->waitFor(st);
    job.report(progressBase + progressSpan);
  }

 private:
  // An iteration on the fused passes; the spectrum holds the estimate's row transforms on entry
  // and, when forwardNext, the new estimate's on return.
  void fusedStep(bool forwardNext) {
    float* est = estimate_.get();
    const bool tv = p_.tvLambda > 0;
    if (tv) {
      tvDivergence<<<blocksFor(n_, kThreads), kThreads, 0, ctx_->stream()>>>(est, divergence_.get(),
                                                                             frame_);
      SL_LAUNCHED();
    }
    fused_->blurAndRatio(observed_.data(), p_.epsilon);
    fused_->correlateAndUpdate(est, tv ? divergence_.get() : nullptr,
                               static_cast<float>(p_.tvLambda),
                               p_.accelerate ? change_.get() : nullptr, forwardNext);
  }

  void step() {
    cudaStream_t st = ctx_->stream();
    const unsigned blocks = blocksFor(n_, kThreads), cblocks = blocksFor(nc_, kThreads);
    float* est = estimate_.get();
    cufftComplex* spec = spectrum_.get();
    float* work = work_.get();
    if (p_.tvLambda > 0) tvDivergence<<<blocks, kThreads, 0, st>>>(est, divergence_.get(), frame_);
    // spectrum = FFT(est)·OTF; work = observed / max(blurred, ε); spectrum = FFT(work)·conj(OTF);
    // est updated in place (with a callback, work is only the last transform's nominal output).
    // Each product in a store callback or in its own pass (see kDefaultCallbacks*).
    if (uses(kBlur)) {
      SL_CUFFT(cufftExecR2C(callbacks_->blur, est, spec));
    } else {
      SL_CUFFT(cufftExecR2C(plans_->forward, est, spec));
      multiplyByOtf<false>(spec, cblocks);
    }
    if (uses(kRatio)) {
      SL_CUFFT(cufftExecC2R(callbacks_->ratio, spec, work));
    } else {
      SL_CUFFT(cufftExecC2R(plans_->inverse, spec, work));
      ratioKernel<<<blocks, kThreads, 0, st>>>(observed_.data(), work, n_, p_.epsilon);
    }
    if (uses(kCorrelate)) {
      SL_CUFFT(cufftExecR2C(callbacks_->correlate, work, spec));
    } else {
      SL_CUFFT(cufftExecR2C(plans_->forward, work, spec));
      multiplyByOtf<true>(spec, cblocks);
    }
    if (uses(kUpdate)) {
      if (p_.accelerate) setChangeTarget<<<1, 1, 0, st>>>(callbacks_->args, change_.get());
      SL_CUFFT(cufftExecC2R(callbacks_->update, spec, work));
    } else {
      SL_CUFFT(cufftExecC2R(plans_->inverse, spec, work));
      updateEstimate<<<blocks, kThreads, 0, st>>>(
          est, work, p_.tvLambda > 0 ? divergence_.get() : nullptr, static_cast<float>(p_.tvLambda),
          p_.accelerate ? change_.get() : nullptr, n_);
    }
    SL_LAUNCHED();
  }

  // spectrum ← spectrum·OTF (Conjugate: ·conj(OTF)), or the reflect-exact convolution (its PSF is
  // symmetric: convolution and correlation are the same).
  template <bool Conjugate>
  void multiplyByOtf(cufftComplex* spec, unsigned cblocks) {
    cudaStream_t st = ctx_->stream();
    if (reflectExact_) {
      reflect_exact::convolve(st, spec, otfSpectrum(), frame_.z, frame_.y, frame_.x,
                              frame_.x / 2 + 1);
      return;
    }
    multiplySpectrum<Conjugate><<<cblocks, kThreads, 0, st>>>(spec, otfSpectrum(), nc_);
  }

  bool uses(unsigned transform) const { return (callbackMask_ & transform) != 0; }
  cufftComplex* otfSpectrum() const { return reinterpret_cast<cufftComplex*>(otf_.get()); }

  ContextPtr ctx_;
  Dims image_;
  DeconvolveParams p_;
  bool reflectExact_ = false;
  Dims frame_{}, lo_{};
  int64_t n_ = 0, nc_ = 0;
  Context::FftPlans* plans_ = nullptr;
  CallbackPlans* callbacks_ = nullptr;
  unsigned callbackMask_ = 0;
  Image observed_;  // an Image, so that runIntoObserved can hand it out as the result
  DeviceArray<float> estimate_, work_, divergence_, previous_, change_, changePrevious_;
  DeviceArray<cufftComplex> spectrum_;
  std::shared_ptr<float> otf_;  // complex values, cuFFT's layout or the fused passes'

  DeviceArray<double> dots_;
  std::unique_ptr<FusedRlTransforms> fused_;
};

}  // namespace

size_t richardsonLucySliceBytes(Shape slice, Shape psf, const DeconvolveParams& p) {
  DeconvolveParams twoD = p;
  twoD.threeD = false;
  const Dims frame =
      RichardsonLucySolver::frameFor({1, slice.y, slice.x}, {1, psf.y, psf.x}, twoD, nullptr);
  return RichardsonLucySolver::bytesPerVoxel(p, frame) * static_cast<size_t>(frame.count());
}

Image richardsonLucy(const ContextPtr& ctx, const Image& input, const Image& psfInput,
                     const DeconvolveParams& p, const Job& job) {
  validate(p);
  if (input.empty()) throw InvalidArgument("richardson_lucy: the image is empty");
  if (psfInput.empty()) throw InvalidArgument("richardson_lucy: the PSF is empty");
  const Shape s = input.shape();
  // The PSF on the host (it is small), prepared once for calls with the same PSF.
  Image psfHost = psfInput;
  if (!psfHost.onHost()) {
    Image h = Image::host(psfInput.shape());
    readBack(ctx, h.data(), psfInput.data(), psfInput.shape().count());
    psfHost = h;
  }
  const PreparedPsf& prepared = PreparedPsfCache::of(ctx, psfHost, p);
  const Shape ps = prepared.shape;
  const std::vector<float>& psfNorm = prepared.values;
  if (p.boundary == Boundary::Periodic && (ps.y > s.y || ps.x > s.x || (p.threeD && ps.z > s.z)))
    throw InvalidArgument(
        "richardson_lucy: the PSF is larger than the image for periodic "
        "boundaries");

  Image in = onDevice(ctx, input);
  {
    DeviceArray<int> flag(ctx, 1);
    SL_CUDA(cudaMemsetAsync(flag.get(), 0, sizeof(int), ctx->stream()));
    anyFinite<<<blocksFor(s.count(), kThreads), kThreads, 0, ctx->stream()>>>(in.data(), s.count(),
                                                                              flag.get());
    SL_LAUNCHED();
    int any = 0;
    readBack(ctx, &any, flag.get(), 1);
    if (!any) {  // nothing to deconvolve: every value comes back unchanged (as the CPU's)
      Image out = deviceBuffer<float>(ctx, s);
      SL_CUDA(cudaMemcpyAsync(out.data(), in.data(), size_t(s.count()) * sizeof(float),
                              cudaMemcpyDeviceToDevice, ctx->stream()));
      // Finished on return, as the iterations' result is: whole-stack runs read the result on
      // a copy stream of their own.
      SL_CUDA(cudaStreamSynchronize(ctx->stream()));
      out.spacing = in.spacing;
      return out;
    }
  }
  Dims image = p.threeD ? Dims{s.z, s.y, s.x} : Dims{1, s.y, s.x};
  Dims psfDims{ps.z, ps.y, ps.x};
  // Plan the memory before launching anything big.
  Dims frame = RichardsonLucySolver::frameFor(image, psfDims, p, nullptr);
  size_t need = RichardsonLucySolver::bytesPerVoxel(p, frame) * size_t(frame.count());
  size_t have = ctx->budget() > 2 * in.bytes() ? ctx->budget() - 2 * in.bytes() : 0;
  if (need > have)
    throw DeviceOutOfMemory("Richardson-Lucy needs about " + std::to_string(need >> 20) +
                            " MiB of GPU memory besides the data; the budget leaves " +
                            std::to_string(have >> 20) + " MiB");
  DeviceArray<float> psf(ctx, psfNorm.size());
  SL_CUDA(cudaMemcpyAsync(psf.get(), psfNorm.data(), psfNorm.size() * sizeof(float),
                          cudaMemcpyHostToDevice, ctx->stream()));
  RichardsonLucySolver solver(ctx, image, psf.get(), psfDims, psfNorm, p);
  // A 3D frame that is the volume (reflect-exact, periodic) returns its observed array as the
  // result: the largest runs (whole-stack blocks) then fit one array more.
  Image out = p.threeD && solver.frameIsImage() ? Image() : deviceBuffer<float>(ctx, s);
  if (p.threeD && out.empty()) {
    out = solver.runIntoObserved(in.data(), job);
  } else if (p.threeD) {
    solver.run(in.data(), out.data(), job, 0.0, 1.0);
  } else {
    for (int64_t z = 0; z < s.z; ++z)
      solver.run(in.slice(z), out.slice(z), job, double(z) / s.z, 1.0 / s.z);
  }
  out.spacing = in.spacing;
  return out;
}

}  // namespace stacklens::compute::cuda
