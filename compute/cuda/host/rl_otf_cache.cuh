// The Richardson–Lucy OTF made last, kept in the context for the next call with the same PSF and
// frame (every slider step of a live deconvolution, every repeat of a benchmark), since making it
// costs a pass over the whole frame per axis. One entry; the solver holds a reference while it
// runs, so replacing or dropping the entry never frees an OTF in use. (For compute/cuda/*.cu.)
#pragma once

#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/tuning/deconvolve.cuh"

namespace stacklens::compute::cuda {

class RlOtfCache : public Context::Extension {
 public:
  // What an OTF depends on: the frame, the PSF's shape and normalised values, and the layout
  // (cuFFT's or the fused passes', an OTF or reflect-exact pairs).
  struct Key {
    std::tuple<int64_t, int64_t, int64_t> frame, psfShape;
    bool fused = false;
    std::vector<float> psf;
    bool reflectExact = false;  // transfer pairs (reflect_exact.cuh), not an OTF
    bool operator==(const Key& o) const {
      return frame == o.frame && psfShape == o.psfShape && fused == o.fused && psf == o.psf &&
             reflectExact == o.reflectExact;
    }
  };

  static RlOtfCache& of(const ContextPtr& ctx) {
    std::unique_ptr<Context::Extension>& slot = ctx->extension("richardson_lucy.otf");
    if (!slot) slot = std::make_unique<RlOtfCache>();
    return static_cast<RlOtfCache&>(*slot);
  }

  // The cached OTF for `key`, or null.
  std::shared_ptr<float> find(const Key& key) const { return otf_ && key == key_ ? otf_ : nullptr; }

  // A new OTF buffer of `floats` for the caller to fill; kept for the next call when it is a
  // small part of the memory budget (tuning::RichardsonLucyPolicy::otfCacheBudgetDivisor).
  std::shared_ptr<float> make(const ContextPtr& ctx, Key key, size_t floats) {
    otf_.reset();  // the previous one goes first (its memory may be needed)
    float* p = static_cast<float*>(ctx->allocate(floats * sizeof(float)));
    // A plain pointer to the context: a ContextPtr here would keep the context (which owns this
    // cache) alive for ever. The context outlives every holder: this cache and the solver, which
    // holds a ContextPtr itself.
    Context* owner = ctx.get();
    std::shared_ptr<float> otf(p, [owner](float* q) { owner->release(q); });
    if (floats * sizeof(float) <=
        ctx->budget() / tuning::RichardsonLucyPolicy::otfCacheBudgetDivisor) {
      key_ = std::move(key);
      otf_ = otf;
    }
    return otf;
  }

 private:
  Key key_;
  std::shared_ptr<float> otf_;
};

}  // namespace stacklens::compute::cuda
