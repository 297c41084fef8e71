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
// allocated inside the iteration loop. The FFT runs as its slab and column passes
// (slab_column_fft) with that work inside them, so that each array is swept once per pass.
//
// The frame, its buffers and the iteration are compute/cpu/rl_deconvolver's.
#include <cmath>
#include <cstring>
#include <string>

#include "compute/cpu/operations.h"
#include "compute/cpu/rl_deconvolver.h"
#include "compute/rl_psf.h"

namespace stacklens::compute::cpu {

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
