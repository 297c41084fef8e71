// The PSF as Richardson–Lucy uses it: the mode's part (the centre slice in 2D mode),
// reflect-exact's symmetric part (compute/mirror_psf.h), normalised to sum 1; validated on the way.
// Kept in the context for the next call with the same PSF and mode: a blocked run passes the same
// PSF for every block, and preparing a large one (a 128³ PSF is 2 M samples) costs host time that,
// from the second block on, competes with the writing of the block before.
#pragma once

#include <cmath>
#include <cstring>
#include <vector>

#include "compute/cuda/cuda_context.cuh"
#include "compute/mirror_psf.h"

namespace stacklens::compute::cuda {

struct PreparedPsf {
  Shape shape;
  std::vector<float> values;  // normalised to sum 1
};

// psf on the host. Throws InvalidArgument for NaN or Inf, a sum ≤ 0, or (reflect-exact) a PSF
// that is not symmetric.
inline PreparedPsf preparePsf(const Image& psf, const DeconvolveParams& p) {
  Shape shape = psf.shape();
  const float* start = psf.data();
  if (!p.threeD) {
    start = psf.slice(shape.z / 2);
    shape.z = 1;
  }
  double sum = 0;
  for (int64_t i = 0; i < shape.count(); ++i) {
    if (!std::isfinite(start[i]))
      throw InvalidArgument("richardson_lucy: the PSF contains NaN or Inf");
    sum += start[i];
  }
  if (!(sum > 0)) throw InvalidArgument("richardson_lucy: the PSF must sum to more than 0");
  std::vector<float> mirrored;
  if (p.boundary == Boundary::ReflectExact) {
    const Shape before = shape;
    mirrored = mirrorSymmetricPsf(start, shape);
    start = mirrored.data();
    if (!(shape == before)) {  // samples were dropped
      sum = 0;
      for (float v : mirrored) sum += v;
    }
  }
  PreparedPsf out{shape, std::vector<float>(size_t(shape.count()))};
  for (int64_t i = 0; i < shape.count(); ++i)
    out.values[size_t(i)] = static_cast<float>(start[i] / sum);
  return out;
}

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
      cache.prepared_ = preparePsf(psf, p);
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
