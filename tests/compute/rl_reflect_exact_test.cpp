// Richardson–Lucy with Boundary::ReflectExact (every convolution reads the data reflected past the
// edges; DCT on the CPU, the FFT of permuted data on CUDA) against the same iterations written out
// in double with reflected indices (rl_reference.h): 2D and 3D, even and odd sides, a PSF longer
// than the image, 2D mode on a stack, the fused CUDA passes and cuFFT's, and CPU against CUDA with
// the acceleration. The CUDA cases skip without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/params.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/rl_reference.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::randomImage;
using stacklens::testing::relativeL2;
using stacklens::testing::rlReflectedReference;

// A random PSF equal to its mirror image along each axis (every side odd).
Image axisSymmetric(Shape s, unsigned seed) {
  Image psf = randomImage(s, seed, 0.05f, 1.f);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x)
        psf.at(z, y, x) =
            psf.at(std::min(z, s.z - 1 - z), std::min(y, s.y - 1 - y), std::min(x, s.x - 1 - x));
  return psf;
}

// The reference for one volume (3D) or each slice (2D mode), as the backends normalise the PSF.
Image reference(const Image& in, const Image& psf, const DeconvolveParams& p) {
  const Shape s = in.shape(), ps = psf.shape();
  const Shape block = p.threeD ? s : Shape{1, s.y, s.x};
  const Shape kernel = p.threeD ? ps : Shape{1, ps.y, ps.x};
  const int64_t kernelStart = p.threeD ? 0 : ps.z / 2 * ps.y * ps.x;
  std::vector<double> k(kernel.count());
  double sum = 0;
  for (int64_t i = 0; i < kernel.count(); ++i) sum += psf.data()[kernelStart + i];
  for (int64_t i = 0; i < kernel.count(); ++i) k[i] = psf.data()[kernelStart + i] / sum;
  Image out = Image::host(s);
  for (int64_t b = 0; b < s.count() / block.count(); ++b) {
    std::vector<double> obs(in.data() + b * block.count(), in.data() + (b + 1) * block.count());
    const std::vector<double> r =
        rlReflectedReference(obs, block, k, kernel, p.iterations, p.epsilon);
    for (int64_t i = 0; i < block.count(); ++i)
      out.data()[b * block.count() + i] = static_cast<float>(r[i]);
  }
  return out;
}

std::string text(Shape s) {
  return std::to_string(s.z) + "x" + std::to_string(s.y) + "x" + std::to_string(s.x);
}

struct ShapeCase {
  Shape image, psf;
  bool threeD;
};

void expectMatchesReference(Backend* backend, const ShapeCase& c, unsigned seed) {
  DeconvolveParams p;
  p.boundary = Boundary::ReflectExact;
  p.iterations = 4;
  p.threeD = c.threeD;
  const Image in = randomImage(c.image, seed, 0.1f);
  const Image psf = axisSymmetric(c.psf, seed + 1);
  const Image got = backend->download(backend->richardsonLucy(in, psf, p));
  const Image want = reference(in, psf, p);
  EXPECT_LT(relativeL2(got, want), 1e-5) << text(c.image) << " psf " << text(c.psf);
  // Far from the input: a transform that did nothing would not pass the line above by chance.
  EXPECT_GT(relativeL2(want, in), 1e-2) << text(c.image);
}

const ShapeCase kCpuCases[] = {
    {{1, 24, 37}, {1, 7, 5}, false},  // 2D, odd and even sides
    {{1, 8, 12}, {1, 9, 41}, false},  // a PSF longer than the image: reflected again and again
    {{3, 16, 10}, {5, 3, 7}, false},  // 2D mode on a stack: each slice, the PSF's centre slice
    {{10, 13, 16}, {5, 3, 7}, true},  // 3D
    {{7, 1, 30}, {3, 1, 5}, true},    // 3D with a line of length 1
};

TEST(RlReflectExact, CpuMatchesReflectedIterations) {
  std::unique_ptr<Backend> cpu = makeCpuBackend();
  unsigned seed = 10;
  for (const ShapeCase& c : kCpuCases) expectMatchesReference(cpu.get(), c, seed += 2);
}

TEST(RlReflectExact, RejectsAsymmetricPsfAndTv) {
  std::unique_ptr<Backend> cpu = makeCpuBackend();
  DeconvolveParams p;
  p.boundary = Boundary::ReflectExact;
  const Image in = randomImage({1, 16, 16}, 3, 0.1f);
  EXPECT_THROW(cpu->richardsonLucy(in, randomImage({1, 5, 5}, 4, 0.1f), p), InvalidArgument);
  EXPECT_THROW(cpu->richardsonLucy(in, axisSymmetric({1, 4, 5}, 4), p), InvalidArgument);
  p.tvLambda = 0.01;
  EXPECT_THROW(cpu->richardsonLucy(in, axisSymmetric({1, 5, 5}, 4), p), InvalidParameter);
}

// A Gaussian (σ² = 0.6) sampled on even sides of 10 or more: the first sample on each even axis
// has no mirror partner, and those samples add up to 10⁻⁹ of the PSF's sum.
Image evenGaussian(Shape s) {
  Image psf = Image::host(s);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        const double dz = double(z - s.z / 2), dy = double(y - s.y / 2), dx = double(x - s.x / 2);
        psf.at(z, y, x) = float(std::exp(-(dz * dz + dy * dy + dx * dx) / 1.2));
      }
  return psf;
}

// A PSF symmetric to within rounding is taken as its symmetric part: an even-sided Gaussian
// deconvolves as the reference does with the same (uncropped) PSF, and so does one whose two
// halves differ by an ulp; a PSF further from symmetric is refused, saying by how much.
void expectRoundingIsTakenAsSymmetric(Backend* backend, bool threeD) {
  DeconvolveParams p;
  p.boundary = Boundary::ReflectExact;
  p.iterations = 4;
  p.threeD = threeD;
  const Shape image = threeD ? Shape{12, 20, 18} : Shape{2, 30, 26};
  const Image in = randomImage(image, 8, 0.1f);
  Image psf = evenGaussian(threeD ? Shape{10, 12, 10} : Shape{3, 12, 10});
  const Image want = reference(in, psf, p);
  Image got = backend->download(backend->richardsonLucy(in, psf, p));
  EXPECT_LT(relativeL2(got, want), 1e-5);
  EXPECT_GT(relativeL2(want, in), 1e-2);
  psf.at(psf.shape().z / 2, 3, 4) = std::nextafter(psf.at(psf.shape().z / 2, 3, 4), 1.f);
  got = backend->download(backend->richardsonLucy(in, psf, p));
  EXPECT_LT(relativeL2(got, want), 1e-5);
  psf.at(psf.shape().z / 2, 3, 4) *= 1.01f;
  try {
    backend->richardsonLucy(in, psf, p);
    ADD_FAILURE() << "an asymmetric PSF was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("differs from that by"), std::string::npos) << e.what();
  }
  // After a refusal the backend takes a good PSF as before (CUDA keeps the last prepared one).
  got = backend->download(
      backend->richardsonLucy(in, evenGaussian(threeD ? Shape{10, 12, 10} : Shape{3, 12, 10}), p));
  EXPECT_LT(relativeL2(got, want), 1e-5);
}

TEST(RlReflectExact, CpuTakesRoundingAsSymmetric) {
  std::unique_ptr<Backend> cpu = makeCpuBackend();
  expectRoundingIsTakenAsSymmetric(cpu.get(), false);
  expectRoundingIsTakenAsSymmetric(cpu.get(), true);
}

using RlReflectExactGpu = stacklens::testing::GpuTest;

// Fused frames (powers of two and a mixed length) and cuFFT's (any other shape).
TEST_F(RlReflectExactGpu, CudaMatchesReflectedIterations) {
  const ShapeCase cases[] = {
      {{1, 64, 128}, {1, 7, 5}, false},   // fused, 2D
      {{1, 144, 256}, {1, 9, 9}, false},  // fused, a mixed column length
      {{64, 64, 128}, {5, 3, 7}, true},   // fused, 3D
      {{1, 24, 37}, {1, 7, 5}, false},    // cuFFT, 2D
      {{1, 8, 12}, {1, 9, 41}, false},    // cuFFT, a PSF longer than the image
      {{3, 16, 10}, {5, 3, 7}, false},    // cuFFT, 2D mode on a stack
      {{10, 13, 16}, {5, 3, 7}, true},    // cuFFT, 3D
  };
  unsigned seed = 30;
  for (const ShapeCase& c : cases) expectMatchesReference(gpu, c, seed += 2);
}

// CPU and CUDA on fresh inputs, with the acceleration, in a fused and a cuFFT frame.
TEST_F(RlReflectExactGpu, CudaMatchesCpuAccelerated) {
  DeconvolveParams p;
  p.boundary = Boundary::ReflectExact;
  p.iterations = 8;
  p.accelerate = true;
  for (Shape s : {Shape{1, 256, 256}, Shape{1, 100, 90}}) {
    const Image in = randomImage(s, static_cast<unsigned>(s.y), 0.1f);
    const Image psf = axisSymmetric({1, 11, 9}, 5);
    const Image a = cpu->richardsonLucy(in, psf, p);
    const Image b = gpu->download(gpu->richardsonLucy(in, psf, p));
    EXPECT_LT(relativeL2(a, b), 1e-5) << text(s);
    EXPECT_GT(relativeL2(a, in), 1e-2) << text(s);
  }
}

TEST_F(RlReflectExactGpu, CudaTakesRoundingAsSymmetric) {
  expectRoundingIsTakenAsSymmetric(gpu, false);
  expectRoundingIsTakenAsSymmetric(gpu, true);
}

}  // namespace
