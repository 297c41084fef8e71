// Richardson–Lucy on the GPU with its element-wise work in cuFFT store callbacks against the
// same solver with separate kernels (STACKLENS_CUDA_FFT_CALLBACKS=0, the fallback where cuFFT
// cannot link callbacks): both within 1e-5 relative L2 of each other, and the fallback within
// 1e-4 of the CPU backend, for every boundary, option, 2D and 3D. Skipped without a CUDA device.
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

using stacklens::testing::testBackends;

// The GPU result with the default callbacks (where cuFFT can link them), with callbacks on all
// four transforms, and with separate kernels.
struct EachCallbackChoice {
  Image callbacks, all, kernels;
};
EachCallbackChoice runEachCallbackChoice(Backend* gpu, const Image& in, const Image& psf,
                                         const DeconvolveParams& p) {
  EachCallbackChoice r;
  unsetenv("STACKLENS_CUDA_FFT_CALLBACKS");
  r.callbacks = gpu->download(gpu->richardsonLucy(in, psf, p));
  setenv("STACKLENS_CUDA_FFT_CALLBACKS", "1", 1);
  r.all = gpu->download(gpu->richardsonLucy(in, psf, p));
  setenv("STACKLENS_CUDA_FFT_CALLBACKS", "0", 1);
  r.kernels = gpu->download(gpu->richardsonLucy(in, psf, p));
  unsetenv("STACKLENS_CUDA_FFT_CALLBACKS");
  return r;
}

TEST(CudaRlCallbacks, MatchSeparateKernelsAndTheCpu) {
  if (!testBackends().gpu) GTEST_SKIP() << testBackends().why;
  Backend* cpu = testBackends().cpu.get();
  Backend* gpu = testBackends().gpu.get();
  // An odd-sized stack: the reflect and zero frames are padded to 2,3,5,7-smooth lengths.
  Image in = randomImage({2, 97, 83}, 11, 0.1f);
  Image psf = gaussianPsf(1.0, 2.0, 1.5);
  for (const auto& [what, p] : rlBoundaryAndOptionCases()) {
    EachCallbackChoice got = runEachCallbackChoice(gpu, in, psf, p);
    Image want = cpu->richardsonLucy(in, psf, p);
    EXPECT_LT(relativeL2(got.callbacks, got.kernels), 1e-5) << what;
    EXPECT_LT(relativeL2(got.all, got.kernels), 1e-5) << what;
    EXPECT_LT(relativeL2(got.kernels, want), 1e-4) << what;
  }
  for (Boundary b : {Boundary::Reflect, Boundary::Periodic}) {
    Image vol = randomImage({14, 40, 36}, 12, 0.1f);
    DeconvolveParams p3;
    p3.threeD = true;
    p3.boundary = b;
    p3.accelerate = b == Boundary::Periodic;
    EachCallbackChoice got = runEachCallbackChoice(gpu, vol, psf, p3);
    Image want = cpu->richardsonLucy(vol, psf, p3);
    EXPECT_LT(relativeL2(got.callbacks, got.kernels), 1e-5) << "3D boundary " << int(b);
    EXPECT_LT(relativeL2(got.all, got.kernels), 1e-5) << "3D boundary " << int(b);
    EXPECT_LT(relativeL2(got.kernels, want), 1e-4) << "3D boundary " << int(b);
  }
}

}  // namespace

namespace {

// Frames of benchmark size, where cuFFT picks other (multi-kernel) algorithms: run by hand on a
// GPU machine with STACKLENS_LARGE_GPU_TESTS=1 (too big for CI's small-test budget).
TEST(CudaRlCallbacks, LargeFramesMatchSeparateKernels) {
  if (!testBackends().gpu) GTEST_SKIP() << testBackends().why;
  const char* large = std::getenv("STACKLENS_LARGE_GPU_TESTS");
  if (!large || std::string(large) != "1") GTEST_SKIP() << "set STACKLENS_LARGE_GPU_TESTS=1";
  Backend* gpu = testBackends().gpu.get();
  Image psf = gaussianPsf(2.0, 2.0, 2.0);
  DeconvolveParams p;
  p.iterations = 20;
  Image plane = randomImage({1, 2048, 2048}, 21, 0.1f);
  EachCallbackChoice got = runEachCallbackChoice(gpu, plane, psf, p);
  EXPECT_LT(relativeL2(got.callbacks, got.kernels), 1e-5) << "2048² periodic";
  p.boundary = Boundary::Reflect;
  got = runEachCallbackChoice(gpu, plane, psf, p);
  EXPECT_LT(relativeL2(got.callbacks, got.kernels), 1e-5) << "2048² reflect";
  Image vol = randomImage({128, 512, 512}, 22, 0.1f);
  p.threeD = true;
  p.boundary = Boundary::Periodic;
  got = runEachCallbackChoice(gpu, vol, psf, p);
  EXPECT_LT(relativeL2(got.callbacks, got.kernels), 1e-5) << "128×512² periodic";
}

}  // namespace
