// The CUDA backend's operations against brute-force references written here (skipped where no
// CUDA device is usable), plus the device-selection behaviour that CI checks without a GPU.
#include <gtest/gtest.h>

#include "tests/compute/log_capture.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/brute_force.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/rl_reference.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::randomImage;
using stacklens::testing::rlPeriodicReference;

class CudaOps : public stacklens::testing::GpuTest {};

double relativeL2(const Image& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = double(got.data()[i]) - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

// ---- device selection (runs everywhere) ----------------------------------------------------

TEST(CudaBackendChoice, CudaWithoutUsableDeviceIsUnavailableAndAutoFallsBackToCpu) {
  std::string why;
  if (cudaUsable(&why)) {
    auto b = makeCudaBackend();
    EXPECT_EQ(b->name(), "cuda");
    EXPECT_NE(b->deviceName().find("driver"), std::string::npos) << b->deviceName();
    std::string note;
    EXPECT_EQ(makeBackend("auto", &note)->name(), "cuda");
    return;
  }
  EXPECT_FALSE(why.empty());
  EXPECT_THROW(makeCudaBackend(), BackendUnavailable);
  EXPECT_THROW(makeBackend("cuda"), BackendUnavailable);
  std::string note;
  EXPECT_EQ(makeBackend("auto", &note)->name(), "cpu");
  EXPECT_NE(note.find("CPU"), std::string::npos) << note;
}

// ---- device timing -----------------------------------------------------------------------

TEST_F(CudaOps, LastDeviceMsReportsTheLastOperationsDeviceTime) {
  auto fresh = makeCudaBackend();
  EXPECT_LT(fresh->lastDeviceMs(), 0.0) << "no operation has run yet";
  Image in = fresh->upload(randomImage({4, 256, 256}, 30));
  EXPECT_LT(fresh->lastDeviceMs(), 0.0) << "an upload is not an operation";
  BlurParams p;
  p.sigmaY = p.sigmaX = 2.0;
  Image out = fresh->gaussianBlur(in, p);
  const double blurMs = fresh->lastDeviceMs();  // waits for the blur itself
  EXPECT_GT(blurMs, 0.0);
  EXPECT_LT(blurMs, 10000.0);
  ClipStats stats = fresh->sigmaClip(out, ClipParams{});
  EXPECT_GT(stats.iterations, 0);
  const double clipMs = fresh->lastDeviceMs();
  EXPECT_GT(clipMs, 0.0);
  EXPECT_NE(clipMs, blurMs);  // a new figure for the new operation
  // A failed operation leaves no figure rather than the previous one.
  EXPECT_THROW(fresh->medianFilter(in, 4), InvalidArgument);
  EXPECT_LT(fresh->lastDeviceMs(), 0.0);
}

// ---- buffers -----------------------------------------------------------------------------

TEST_F(CudaOps, UploadDownloadRoundTripsAndResultsStayOnTheDevice) {
  // Larger than one staging chunk (16 MiB), not a multiple of it.
  Image in = randomImage({5, 1000, 1001}, 1);
  Image dev = gpu->upload(in);
  EXPECT_EQ(dev.location(), Location::Cuda);
  Image back = gpu->download(dev);
  ASSERT_EQ(back.shape(), in.shape());
  for (int64_t i = 0; i < in.shape().count(); ++i) ASSERT_EQ(back.data()[i], in.data()[i]) << i;
  Image blurred = gpu->gaussianBlur(dev, BlurParams{});
  EXPECT_EQ(blurred.location(), Location::Cuda);
  // A device input and a host input give the same result.
  Image fromHost = gpu->download(gpu->medianFilter(in, 3));
  Image fromDevice = gpu->download(gpu->medianFilter(dev, 3));
  for (int64_t i = 0; i < in.shape().count(); ++i)
    ASSERT_EQ(fromHost.data()[i], fromDevice.data()[i]) << i;
}

// ---- Richardson–Lucy ---------------------------------------------------------------------

int64_t smooth(int64_t n) {
  for (;; ++n) {
    int64_t m = n;
    for (int64_t f : {2, 3, 5, 7})
      while (m % f == 0) m /= f;
    if (m == 1) return n;
  }
}

TEST_F(CudaOps, RichardsonLucyMatchesDirectSumsForEachBoundary) {
  Shape s{2, 12, 11};
  Image in = randomImage(s, 10, 0.2f, 1.f);
  // An asymmetric PSF (not normalised: the backend normalises it), 3 slices: 2D uses the middle.
  Image psf = Image::host({3, 5, 3});
  for (int64_t i = 0; i < psf.shape().count(); ++i) psf.data()[i] = 1.f + float(i % 7);
  std::vector<double> psf2d(15);
  double sum = 0;
  for (int64_t i = 0; i < 15; ++i) sum += psf.slice(1)[i];
  for (int64_t i = 0; i < 15; ++i) psf2d[i] = psf.slice(1)[i] / sum;
  for (Boundary b : {Boundary::Periodic, Boundary::Reflect, Boundary::Zero}) {
    DeconvolveParams p;
    p.iterations = 6;
    p.boundary = b;
    Image got = gpu->download(gpu->richardsonLucy(in, psf, p));
    std::vector<double> want(s.count());
    for (int64_t z = 0; z < s.z; ++z) {
      // The frame: reflected or zero-padded by the PSF half-size, grown to a 2,3,5,7-smooth size.
      Shape f{1, s.y, s.x};
      int64_t ly = 0, lx = 0;
      if (b != Boundary::Periodic) {
        ly = 2, lx = 1;
        f.y = smooth(s.y + 4);
        f.x = smooth(s.x + 2);
      }
      std::vector<double> obs(f.count());
      for (int64_t y = 0; y < f.y; ++y)
        for (int64_t x = 0; x < f.x; ++x) {
          int64_t sy = y - ly, sx = x - lx;
          bool inside = sy >= 0 && sy < s.y && sx >= 0 && sx < s.x;
          obs[y * f.x + x] =
              b == Boundary::Zero && !inside
                  ? 0.0
                  : in.at(z, brute_force::reflect(sy, s.y), brute_force::reflect(sx, s.x));
        }
      std::vector<double> est = rlPeriodicReference(obs, f, psf2d, {1, 5, 3}, 6, 1e-12);
      for (int64_t y = 0; y < s.y; ++y)
        for (int64_t x = 0; x < s.x; ++x)
          want[(z * s.y + y) * s.x + x] = est[(y + ly) * f.x + (x + lx)];
    }
    EXPECT_LT(relativeL2(got, want), 1e-5) << "boundary " << int(b);
  }
}

TEST_F(CudaOps, RichardsonLucy3DMatchesDirectSums) {
  Shape s{6, 8, 10};
  Image in = randomImage(s, 11, 0.2f, 1.f);
  Image psf = randomImage({3, 3, 3}, 12, 0.1f, 1.f);
  std::vector<double> p(27);
  double sum = 0;
  for (int i = 0; i < 27; ++i) sum += psf.data()[i];
  for (int i = 0; i < 27; ++i) p[i] = psf.data()[i] / sum;
  DeconvolveParams dp;
  dp.iterations = 5;
  dp.threeD = true;
  dp.boundary = Boundary::Periodic;
  std::vector<double> obs(in.data(), in.data() + s.count());
  EXPECT_LT(relativeL2(gpu->download(gpu->richardsonLucy(in, psf, dp)),
                       rlPeriodicReference(obs, s, p, {3, 3, 3}, 5, 1e-12)),
            1e-5);
}

double residual(const Image& est, const Image& observed, const Image& psf) {
  // ‖PSF ⊛ est − observed‖ with periodic sums (the problems below are periodic).
  Shape s = est.shape();
  std::vector<double> e(est.data(), est.data() + s.count()),
      k(psf.data(), psf.data() + psf.shape().count());
  double sum = 0;
  for (double x : k) sum += x;
  for (double& x : k) x /= sum;
  const std::vector<double>& c = e;
  double r = 0;
  for (int64_t y = 0; y < s.y; ++y)
    for (int64_t x = 0; x < s.x; ++x) {
      double acc = 0;
      for (int64_t b = 0; b < psf.shape().y; ++b)
        for (int64_t a = 0; a < psf.shape().x; ++a) {
          int64_t yy = ((y - (b - psf.shape().y / 2)) % s.y + s.y) % s.y;
          int64_t xx = ((x - (a - psf.shape().x / 2)) % s.x + s.x) % s.x;
          acc += k[b * psf.shape().x + a] * c[yy * s.x + xx];
        }
      double d = acc - observed.data()[y * s.x + x];
      r += d * d;
    }
  return std::sqrt(r);
}

TEST_F(CudaOps, RichardsonLucyAccelerationConvergesFasterAndTotalVariationSmooths) {
  // Sparse bright points blurred by a Gaussian: the classic case where acceleration pays off.
  Shape s{1, 32, 32};
  Image truth = randomImage(s, 13, 0.05f, 0.1f);
  truth.at(0, 8, 9) = 5.f;
  truth.at(0, 20, 22) = 3.f;
  truth.at(0, 25, 5) = 4.f;
  Image psf = gaussianPsf(0, 1.5, 1.5);
  DeconvolveParams blurOnly;
  blurOnly.iterations = 0;
  blurOnly.boundary = Boundary::Periodic;
  BlurParams bp{0.0, 1.5, 1.5, 4.0, false};
  Image observed = gpu->download(gpu->gaussianBlur(truth, bp));
  DeconvolveParams plain;
  plain.iterations = 10;
  plain.boundary = Boundary::Periodic;
  DeconvolveParams fast = plain;
  fast.accelerate = true;
  Image a = gpu->download(gpu->richardsonLucy(observed, psf, plain));
  Image b = gpu->download(gpu->richardsonLucy(observed, psf, fast));
  for (int64_t i = 0; i < s.count(); ++i)
    ASSERT_TRUE(std::isfinite(b.data()[i]) && b.data()[i] >= 0);
  EXPECT_LT(residual(b, observed, psf), residual(a, observed, psf));

  DeconvolveParams tv = plain;
  tv.tvLambda = 0.01;
  Image t = gpu->download(gpu->richardsonLucy(observed, psf, tv));
  auto totalVariation = [&](const Image& im) {
    double v = 0;
    for (int64_t y = 0; y + 1 < s.y; ++y)
      for (int64_t x = 0; x + 1 < s.x; ++x)
        v += std::abs(im.at(0, y, x + 1) - im.at(0, y, x)) +
             std::abs(im.at(0, y + 1, x) - im.at(0, y, x));
    return v;
  };
  EXPECT_LT(totalVariation(t), totalVariation(a));
  // Zero iterations are refused, as by the CPU backend.
  EXPECT_THROW(gpu->richardsonLucy(observed, psf, blurOnly), InvalidArgument);
}

TEST_F(CudaOps, RichardsonLucyStopsWhenCancelled) {
  std::atomic<bool> cancel{true};
  Job job(&cancel);
  DeconvolveParams p;
  p.iterations = 50;
  EXPECT_THROW(gpu->richardsonLucy(randomImage({1, 64, 64}, 14), gaussianPsf(0, 2, 2), p, job),
               Cancelled);
  // And the backend stays usable.
  EXPECT_NO_THROW(gpu->download(gpu->gaussianBlur(randomImage({1, 8, 8}, 15), BlurParams{})));
}

// ---- bad input ---------------------------------------------------------------------------

TEST_F(CudaOps, BadParametersAreRejectedWithTheirName) {
  Image im = randomImage({1, 8, 8}, 17);
  auto expectInvalid = [](const std::function<void()>& f, const std::string& word) {
    try {
      f();
      ADD_FAILURE() << "no exception; expected one naming " << word;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expectInvalid(
      [&] {
        gpu->richardsonLucy(im, Image::host({1, 3, 3}), DeconvolveParams{});
      },
      "PSF");
}

}  // namespace

namespace {

// ---- memory budget: split into slice groups, then the CPU ----------------------------------

TEST_F(CudaOps, OverBudgetWorkIsSplitIntoSliceGroupsThenSentToTheCpu) {
  stacklens::testing::LogCapture logged;
  Image in = randomImage({3, 256, 256}, 18, 0.1f, 1.f);
  Image psf = gaussianPsf(0, 1.0, 1.0);
  DeconvolveParams p;
  p.iterations = 3;
  Image whole = gpu->download(gpu->richardsonLucy(in, psf, p));
  // One 270×270 frame needs about 2 MiB: 3 MiB holds it with one slice, not with the stack.
  setenv("STACKLENS_CUDA_BUDGET_MB", "3", 1);
  auto small = makeCudaBackend();
  setenv("STACKLENS_CUDA_BUDGET_MB", "1", 1);
  auto tiny = makeCudaBackend();
  unsetenv("STACKLENS_CUDA_BUDGET_MB");
  logged.take();
  Image split = small->download(small->richardsonLucy(in, psf, p));
  std::string log = logged.take();
  EXPECT_NE(log.find("groups of slices"), std::string::npos) << log;
  for (int64_t i = 0; i < in.shape().count(); ++i) ASSERT_EQ(split.data()[i], whole.data()[i]) << i;

  Image onCpu;
  try {
    onCpu = makeCpuBackend()->richardsonLucy(in, psf, p);
  } catch (const InvalidArgument& e) {
    GTEST_SKIP() << "CPU backend: " << e.what();
  }
  logged.take();
  Image fellBack = tiny->download(tiny->richardsonLucy(in, psf, p));
  log = logged.take();
  EXPECT_NE(log.find("running it on the CPU"), std::string::npos) << log;
  for (int64_t i = 0; i < in.shape().count(); ++i)
    ASSERT_EQ(fellBack.data()[i], onCpu.data()[i]) << i;
}

}  // namespace
