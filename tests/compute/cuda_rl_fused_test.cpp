// Richardson–Lucy on our fused FFT passes (power-of-two frames, compute/cuda/cuda_rl_fused.cu)
// against the same solver on cuFFT (STACKLENS_CUDA_RL_FFT=cufft) and against the CPU backend
// (FFTW): every supported row and column length, an asymmetric PSF (so that the adjoint's
// conjugate and the axes' orientation matter), every boundary whose frame is a power of two, TV
// and the acceleration. Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "compute/backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/rl_cases.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::randomImage;
using stacklens::testing::relativeL2;
using stacklens::testing::rlBoundaryAndOptionCases;

using stacklens::testing::GpuTest;

struct FusedAndCufft {
  Image fused, cufft;
};
FusedAndCufft runFusedAndCufft(Backend* gpu, const Image& in, const Image& psf,
                               const DeconvolveParams& p) {
  FusedAndCufft r;
  unsetenv("STACKLENS_CUDA_RL_FFT");
  r.fused = gpu->download(gpu->richardsonLucy(in, psf, p));
  setenv("STACKLENS_CUDA_RL_FFT", "cufft", 1);
  r.cufft = gpu->download(gpu->richardsonLucy(in, psf, p));
  unsetenv("STACKLENS_CUDA_RL_FFT");
  return r;
}

using CudaRlFused = GpuTest;

Image pointSymmetric(Shape s, unsigned seed);

// Frames pairing every column length 64 … 4096 with every row length 128 … 8192.
TEST_F(CudaRlFused, EveryLengthMatchesCufft) {
  Image psf = randomImage({1, 7, 5}, 3, 0.1f);
  DeconvolveParams p;
  p.iterations = 3;
  p.boundary = Boundary::Periodic;
  for (int64_t h = 64; h <= 4096; h *= 2) {
    const int64_t w = 64 * 8192 / h;
    Image in = randomImage({1, h, w}, static_cast<unsigned>(h), 0.1f);
    FusedAndCufft r = runFusedAndCufft(gpu, in, psf, p);
    const double d = relativeL2(r.fused, r.cufft);
    EXPECT_LT(d, 1e-5) << h << "x" << w;
    // A broken transform gives a result far from the input's scale, not 1e-5 away.
    EXPECT_GT(relativeL2(r.fused, in), 1e-3) << h << "x" << w;
  }
}

// Mixed lengths (24^k · r): every column length 144 … 3456 with a row of each mixed length, in
// periodic frames, against cuFFT; complex and real OTFs.
TEST_F(CudaRlFused, EveryMixedLengthMatchesCufft) {
  const int64_t lengths[] = {144, 288, 576, 1152, 1728, 2304, 3456};
  DeconvolveParams p;
  p.iterations = 3;
  p.boundary = Boundary::Periodic;
  for (size_t i = 0; i < 7; ++i) {
    const int64_t h = lengths[i], w = 2 * lengths[6 - i];
    for (bool symmetric : {false, true}) {
      Image psf = symmetric ? pointSymmetric({1, 9, 7}, 41) : randomImage({1, 7, 5}, 40, 0.1f);
      Image in = randomImage({1, h, w}, static_cast<unsigned>(h + w), 0.1f);
      FusedAndCufft r = runFusedAndCufft(gpu, in, psf, p);
      EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << h << "x" << w << " " << symmetric;
      EXPECT_GT(relativeL2(r.fused, in), 1e-3) << h << "x" << w;
    }
  }
  // Mixed depths, and a volume mixed on every axis.
  p.threeD = true;
  Image psf3 = randomImage({5, 7, 3}, 42, 0.1f);
  for (const Shape s : {Shape{144, 64, 128}, Shape{576, 64, 128}, Shape{144, 288, 576}}) {
    Image vol = randomImage(s, static_cast<unsigned>(s.z + s.y), 0.1f);
    FusedAndCufft r = runFusedAndCufft(gpu, vol, psf3, p);
    EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << s.z << "x" << s.y << "x" << s.x;
    EXPECT_GT(relativeL2(r.fused, vol), 1e-3) << s.z << "x" << s.y << "x" << s.x;
  }
}

// Reflect and zero frames that the shared rule (compute/rl_frame.h) makes mixed: 258 + 30 → 288
// rows, 1000 + 30 → 1152 columns (not the smooth 1050); in 3D 280 + 8 → 288 slices. Against
// cuFFT on the same frame and the CPU.
TEST_F(CudaRlFused, ReflectAndZeroFramesTakeTheMixedLengths) {
  Image in = randomImage({2, 258, 1000}, 43, 0.1f);
  Image psf = randomImage({1, 31, 31}, 44, 0.f);
  for (const auto& [what, p] : rlBoundaryAndOptionCases()) {
    if (p.boundary == Boundary::Periodic) continue;
    FusedAndCufft r = runFusedAndCufft(gpu, in, psf, p);
    // Radix-24 stages round a little more than radix-32 ones (their twiddles are products of
    // two table values); the accelerated and TV runs amplify it to about 1.1e-5.
    EXPECT_LT(relativeL2(r.fused, r.cufft), 3e-5) << what;
    EXPECT_LT(relativeL2(r.fused, cpu->richardsonLucy(in, psf, p)), 1e-4) << what;
  }
  DeconvolveParams p;
  p.iterations = 4;
  p.threeD = true;
  Image vol = randomImage({280, 120, 248}, 45, 0.1f);
  Image psf3 = randomImage({9, 9, 9}, 46, 0.f);
  FusedAndCufft r = runFusedAndCufft(gpu, vol, psf3, p);
  EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << "3D";
  EXPECT_LT(relativeL2(r.fused, cpu->richardsonLucy(vol, psf3, p)), 1e-4) << "3D";
}

// Boundaries whose padded frames are powers of two (226 + 2·15 = 256, 98 + 30 = 128), the options,
// two slices through one solver; against cuFFT and the CPU backend.
TEST_F(CudaRlFused, OptionsAndBoundariesMatchCufftAndCpu) {
  Image in = randomImage({2, 226, 98}, 5, 0.1f);
  Image psf = randomImage({1, 31, 31}, 6, 0.f);
  // Rows of 256 and 1024 samples: 16 and 32 values per thread in the row passes.
  const Image periodicIns[] = {randomImage({2, 128, 256}, 7, 0.1f),
                               randomImage({2, 64, 1024}, 17, 0.1f)};
  for (const auto& [what, p] : rlBoundaryAndOptionCases())
    for (const Image& periodicIn : periodicIns) {
      if (p.boundary != Boundary::Periodic && &periodicIn != periodicIns) continue;
      const Image& x = p.boundary == Boundary::Periodic ? periodicIn : in;
      FusedAndCufft r = runFusedAndCufft(gpu, x, psf, p);
      Image want = cpu->richardsonLucy(x, psf, p);
      EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << what << " " << x.shape().x;
      EXPECT_LT(relativeL2(r.fused, want), 1e-4) << what << " " << x.shape().x;
    }
}

// Volumes: every depth 64 … 512 along z with small planes, against the cuFFT path (3D callbacks),
// and the options against the CPU.
TEST_F(CudaRlFused, VolumesMatchCufftAndCpu) {
  Image psf = randomImage({5, 7, 3}, 4, 0.1f);
  DeconvolveParams p;
  p.iterations = 3;
  p.threeD = true;
  p.boundary = Boundary::Periodic;
  for (int64_t d = 64; d <= 512; d *= 2) {
    Image in = randomImage({d, 64, 128}, static_cast<unsigned>(d), 0.1f);
    FusedAndCufft r = runFusedAndCufft(gpu, in, psf, p);
    EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << "depth " << d;
    EXPECT_GT(relativeL2(r.fused, in), 1e-3) << "depth " << d;
  }
  Image vol = randomImage({64, 64, 128}, 8, 0.1f);
  for (int variant = 0; variant < 3; ++variant) {
    p.iterations = 10;
    p.accelerate = variant == 1;
    p.tvLambda = variant == 2 ? 0.002 : 0.0;
    FusedAndCufft r = runFusedAndCufft(gpu, vol, psf, p);
    Image want = cpu->richardsonLucy(vol, psf, p);
    EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << "variant " << variant;
    EXPECT_LT(relativeL2(r.fused, want), 1e-4) << "variant " << variant;
  }
}

// A random PSF made point-symmetric about its centre (odd sides): its OTF is real, so the fused
// passes keep only the real part and use one pass for convolution and correlation.
Image pointSymmetric(Shape s, unsigned seed) {
  Image psf = randomImage(s, seed, 0.f);
  const int64_t n = s.count();
  for (int64_t i = 0; i < n / 2; ++i) psf.data()[n - 1 - i] = psf.data()[i];
  return psf;
}

// The real-OTF passes against the cuFFT path (which keeps the complex OTF) on every column length,
// 3D, the boundaries and options, and the CPU.
TEST_F(CudaRlFused, PointSymmetricPsfsMatchCufftAndCpu) {
  DeconvolveParams p;
  p.iterations = 3;
  p.boundary = Boundary::Periodic;
  Image psf = pointSymmetric({1, 9, 7}, 21);
  for (int64_t h = 64; h <= 4096; h *= 2) {
    const int64_t w = 32 * 8192 / h;
    Image in = randomImage({1, h, w}, static_cast<unsigned>(h + 1), 0.1f);
    FusedAndCufft r = runFusedAndCufft(gpu, in, psf, p);
    EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << h << "x" << w;
    EXPECT_GT(relativeL2(r.fused, in), 1e-3) << h << "x" << w;
  }
  p.threeD = true;
  for (int64_t d = 64; d <= 256; d *= 4) {
    Image vol = randomImage({d, 32, 64}, static_cast<unsigned>(d + 1), 0.1f);
    FusedAndCufft r = runFusedAndCufft(gpu, vol, pointSymmetric({5, 3, 7}, 22), p);
    EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << "depth " << d;
    EXPECT_LT(relativeL2(r.fused, cpu->richardsonLucy(vol, pointSymmetric({5, 3, 7}, 22), p)), 1e-4)
        << "depth " << d;
  }
  Image in = randomImage({2, 226, 98}, 23, 0.1f);
  const Image periodicIns[] = {randomImage({2, 128, 256}, 24, 0.1f),
                               randomImage({2, 64, 1024}, 26, 0.1f)};
  Image wide = pointSymmetric({1, 31, 31}, 25);
  for (const auto& [what, q] : rlBoundaryAndOptionCases())
    for (const Image& periodicIn : periodicIns) {
      if (q.boundary != Boundary::Periodic && &periodicIn != periodicIns) continue;
      const Image& x = q.boundary == Boundary::Periodic ? periodicIn : in;
      FusedAndCufft r = runFusedAndCufft(gpu, x, wide, q);
      EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << what << " " << x.shape().x;
      EXPECT_LT(relativeL2(r.fused, cpu->richardsonLucy(x, wide, q)), 1e-4)
          << what << " " << x.shape().x;
    }
}

// The OTF made by one call is kept for the next with the same PSF and frame (the slider's case):
// a different PSF, frame or layout must not get it, and the same again must give the same result.
TEST_F(CudaRlFused, TheKeptOtfIsUsedOnlyForTheSamePsfFrameAndLayout) {
  Image in = randomImage({1, 128, 256}, 12, 0.1f);
  Image psfA = randomImage({1, 9, 7}, 13, 0.f), psfB = randomImage({1, 9, 7}, 14, 0.f);
  DeconvolveParams p;
  p.iterations = 5;
  p.boundary = Boundary::Periodic;
  unsetenv("STACKLENS_CUDA_RL_FFT");
  Image a1 = gpu->download(gpu->richardsonLucy(in, psfA, p));
  Image b = gpu->download(gpu->richardsonLucy(in, psfB, p));
  Image a2 = gpu->download(gpu->richardsonLucy(in, psfA, p));
  EXPECT_EQ(relativeL2(a2, a1), 0.0) << "the same PSF again";
  EXPECT_LT(relativeL2(b, cpu->richardsonLucy(in, psfB, p)), 1e-4) << "another PSF";
  EXPECT_GT(relativeL2(b, a1), 1e-3) << "another PSF";
  setenv("STACKLENS_CUDA_RL_FFT", "cufft", 1);  // same PSF and frame, cuFFT's layout
  Image a3 = gpu->download(gpu->richardsonLucy(in, psfA, p));
  unsetenv("STACKLENS_CUDA_RL_FFT");
  EXPECT_LT(relativeL2(a3, a1), 1e-5) << "the other layout";
  p.boundary = Boundary::Reflect;  // another frame (128 + 8 → 140 rows)
  Image r = gpu->download(gpu->richardsonLucy(in, psfA, p));
  EXPECT_LT(relativeL2(r, cpu->richardsonLucy(in, psfA, p)), 1e-4) << "another frame";
}

// Benchmark-sized frames (2048², 128×512², 20 iterations): by hand with
// STACKLENS_LARGE_GPU_TESTS=1.
TEST_F(CudaRlFused, BenchmarkFrameMatchesCufft) {
  const char* large = std::getenv("STACKLENS_LARGE_GPU_TESTS");
  if (!large || std::string(large) != "1") GTEST_SKIP() << "set STACKLENS_LARGE_GPU_TESTS=1";
  Image in = randomImage({1, 2048, 2048}, 9, 0.1f);
  Image psf = gaussianPsf(3.0, 3.0, 3.0);
  DeconvolveParams p;
  p.iterations = 20;
  p.boundary = Boundary::Periodic;
  FusedAndCufft r = runFusedAndCufft(gpu, in, psf, p);
  EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << "2048²";
  Image vol = randomImage({128, 512, 512}, 10, 0.1f);
  p.threeD = true;
  r = runFusedAndCufft(gpu, vol, gaussianPsf(3.0, 2.0, 2.0), p);
  EXPECT_LT(relativeL2(r.fused, r.cufft), 1e-5) << "128×512²";
}

}  // namespace
