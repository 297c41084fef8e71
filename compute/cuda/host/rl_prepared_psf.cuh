// The PSF as Richardson–Lucy uses it (compute/rl_psf.h), kept in the context for the next call with
// the same PSF and mode: a blocked run passes the same PSF for every block, and preparing a large
// one (a 128³ PSF is 2 M samples) costs host time that, from the second block on, competes with the
// writing of the block before.
#pragma once

#include <cstring>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/rl_psf.h"

namespace stacklens::compute::cuda {

struct PreparedPsf {
  Shape shape;
  std::vector<float> values;  // normalised to sum 1
};

class PreparedPsfCache : public Context::Extension {
 public:
  static const PreparedPsf& of(const ContextPtr& ctx, const Image& psf, const DeconvolveParams& p) {
    std::unique_ptr<Context::Extension>& slot = ctx->extension("richardson_lucy.psf");
    if (!slot) slot = std::make_unique<PreparedPsfCache>();
    auto& cache = static_cast<PreparedPsfCache&>(*slot);
    const bool reflectExact = p.boundary == Boundary::ReflectExact;
    const size_t n = size_t(psf.shape().count());
    if (cache.raw_.size() != n || !(cache.shape_ == psf.shape()) || cache.threeD_ != p.threeD ||
        cache.reflectExact_ != reflectExact ||
        std::memcmp(cache.raw_.data(), psf.data(), n * sizeof(float)) != 0) {
      cache.raw_.clear();  // a failed preparation leaves nothing to match
      const Image prepared = rlPsf(psf, p);
      cache.prepared_ = {
          prepared.shape(),
          std::vector<float>(prepared.data(), prepared.data() + prepared.shape().count())};
      cache.raw_.assign(psf.data(), psf.data() + n);
      cache.shape_ = psf.shape();
      cache.threeD_ = p.threeD;
      cache.reflectExact_ = reflectExact;
    }
    return cache.prepared_;
  }

 private:
  Shape shape_;
  std::vector<float> raw_;
  bool threeD_ = false, reflectExact_ = false;
  PreparedPsf prepared_;
};

}  // namespace stacklens::compute::cuda
