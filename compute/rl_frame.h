// The padded frame of Richardson–Lucy, one rule for both backends so that they compute the same
// thing. An axis padded for a reflect or zero boundary needs its data and half the PSF on each
// side; the frame's length is then either the next 2,3,5,7-smooth length (FFTW and cuFFT are
// fast there) or the next length our fused CUDA passes take (compute/cuda/kernels/block_fft.cuh:
// powers of two and 288, 576, 1152, 2304, 3456), whichever the whole frame favours: the fused
// lengths when every axis has one and the frame has at most kFastFrameGrowth times the voxels. The
// padding past half the PSF continues the boundary rule, so the length changes only how far the
// padded region reaches, not the data's reflection.
#pragma once

#include <array>
#include <cstdint>

#include "compute/image.h"

namespace stacklens::compute {

constexpr double kFastFrameGrowth = 1.5;

// Lengths with fused CUDA passes on every axis (and as a row of real samples).
bool isFastFrameLength(int64_t n);
// The next such length ≥ n, or 0 when there is none.
int64_t nextFastFrameLength(int64_t n);
// The next length ≥ n whose prime factors are 2, 3, 5, 7.
int64_t nextSmoothLength(int64_t n);

// need: the samples each axis needs (data plus padding); padded: which axes are padded (the
// others keep their length, and a frame is fast only if they are fast lengths too). Axes of
// length 1 are not transformed.
Shape rlFrame(Shape need, std::array<bool, 3> padded);

}  // namespace stacklens::compute
