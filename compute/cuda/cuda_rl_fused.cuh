// Richardson–Lucy's transforms for frames whose sides are powers of two (64 … 4096 planes and
// rows, 128 … 8192 columns) or mixed lengths of block_fft.cuh (planes and rows 144 … 3456,
// columns 288 … 6912), done by our own FFT passes with the element-wise work inside them,
// instead of cuFFT's transforms plus element-wise passes: per iteration, twice, the last axis
// (y in 2D, z in 3D) forward, ·OTF or ·conj(OTF) and inverse in one pass, in 3D an inverse y pass,
// then the rows' inverse real FFT, the ratio or the update and their forward real FFT in one pass,
// in 3D a forward y pass. (For compute/cuda/*.cu only.)
#pragma once

#include <cstdint>

#include "compute/cuda/host/cuda_context.cuh"

namespace stacklens::compute::cuda {

class FusedRlTransforms {
 public:
  // depth 1: a 2D frame.
  static bool supports(int64_t depth, int64_t height, int64_t width);

  // Passes for a depth × height × width frame with its OTF in `otf` (otfFloats() floats, kept
  // by the caller for the object's life; made by makeOtf, or by an earlier object of the same
  // shape). realOtf: the PSF is point-symmetric about its centre (psf_symmetry.h), so its OTF
  // is real and only that is kept and read: half the OTF's memory traffic, and convolution and
  // correlation are the same pass.
  // reflectExact: Boundary::ReflectExact's convolution (reflect_exact.cuh) on data permuted by
  // the caller; `otf` then holds the transfer pairs (otfFloats(…, false) floats, made by
  // makeReflectExactOtf) and realOtf is ignored.
  FusedRlTransforms(const ContextPtr& ctx, int64_t depth, int64_t height, int64_t width, float* otf,
                    bool realOtf, bool reflectExact = false);
  static size_t otfFloats(int64_t depth, int64_t height, int64_t width, bool realOtf);

  // otf ← the transform of `placedPsf` (a real frame with the PSF's centre at the origin) scaled
  // by 1 / (depth·height·width), so that the passes below are normalised convolutions.
  void makeOtf(const float* placedPsf);
  // otf ← the transfer pairs of the PSF on the device (centred at size / 2, symmetric on every
  // axis), scaled as makeOtf's.
  void makeReflectExactOtf(const float* psf, int64_t psfDepth, int64_t psfHeight, int64_t psfWidth);

  // spectrum ← transform of `estimate` (before the first iteration, or after the estimate was
  // changed outside these passes).
  void forward(const float* estimate);
  // spectrum ← transform of observed / max(PSF ⊛ estimate, ε): the first half of an iteration.
  void blurAndRatio(const float* observed, float epsilon);
  // estimate ← max(estimate · (PSF ⋆ ratio) [/ max(1 − λ·divergence, 10⁻³)], 0), change ←
  // new − old when not null; then spectrum ← transform of the estimate when `forwardNext`.
  void correlateAndUpdate(float* estimate, const float* divergence, float lambda, float* change,
                          bool forwardNext);

  // Where the passes work: the spectrum and the OTF as depth × height rows of `pitch` complex
  // values (interleaved; width/2 + 1 used), and the unit-root tables e^(−2πi j / n), j < n.
  struct Layout {
    int64_t depth, height, width, pitch;
    float* spectrum;
    float* otf;
    bool realOtf;
    const float *rowRoots, *columnRoots, *depthRoots;
    // Reflect-exact: e^(−iπk / 2n) for each axis (z, y, x), k < n (reflect_exact.cuh).
    const float* twiddles[3] = {nullptr, nullptr, nullptr};
  };

 private:
  void convolveLastAxis(bool correlate, cudaStream_t stream);

  ContextPtr ctx_;
  bool reflectExact_ = false;
  DeviceArray<float> spectrum_;
  Layout layout_{};
};

}  // namespace stacklens::compute::cuda
