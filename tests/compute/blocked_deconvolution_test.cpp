// Blocked 3D Richardson–Lucy (compute/blocked/): the plan tiles the volume and fits the budget,
// a one-block plan is the unblocked run, blocked results agree with the unblocked run (closely
// away from the seams), periodic halos wrap, cancellation stops the run, CPU and GPU agree.
#include "compute/blocked/blocked_deconvolution.h"
#include "compute/blocked/slab_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;
using stacklens::testing::GpuTest;
using stacklens::testing::relativeL2;

namespace {

// Beads blurred over a smooth background with a little noise: positive, like microscopy data.
Image beads(Shape s, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> pos(0.0, 1.0);
  std::normal_distribution<float> noise(0.f, 0.5f);
  Image im = Image::host(s);
  std::vector<std::array<double, 4>> b;
  for (int i = 0; i < 40; ++i)
    b.push_back({pos(rng) * s.z, pos(rng) * s.y, pos(rng) * s.x, 50 + 100 * pos(rng)});
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        double v = 10.0 + 0.1 * x + 0.05 * y;
        for (const auto& c : b) {
          const double d2 =
              (z - c[0]) * (z - c[0]) + (y - c[1]) * (y - c[1]) + (x - c[2]) * (x - c[2]);
          v += c[3] * std::exp(-d2 / 4.0);
        }
        im.data()[(z * s.y + y) * s.x + x] = static_cast<float>(std::max(0.0, v + noise(rng)));
      }
  return im;
}

DeconvolveParams params3d(int iterations, Boundary boundary = Boundary::Reflect) {
  DeconvolveParams p;
  p.iterations = iterations;
  p.threeD = true;
  p.boundary = boundary;
  return p;
}

// Relative L2 over the voxels farther than `margin` from every interior face between blocks and
// from the volume's faces.
double relativeL2AwayFromSeams(const Image& a, const Image& b, const BlockPlan& plan,
                               Shape margin) {
  const Shape s = a.shape();
  auto nearSeam = [](int64_t i, int64_t n, int64_t pieces, int64_t m) {
    if (i < m || i >= n - m) return true;
    for (int64_t k = 1; k < pieces; ++k) {
      const int64_t seam = n * k / pieces;
      if (i >= seam - m && i < seam + m) return true;
    }
    return false;
  };
  double num = 0, den = 0;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        if (nearSeam(z, s.z, plan.counts.z, margin.z) ||
            nearSeam(y, s.y, plan.counts.y, margin.y) || nearSeam(x, s.x, plan.counts.x, margin.x))
          continue;
        const int64_t i = (z * s.y + y) * s.x + x;
        num += double(a.data()[i] - b.data()[i]) * (a.data()[i] - b.data()[i]);
        den += double(b.data()[i]) * b.data()[i];
      }
  return std::sqrt(num / den);
}

// A budget that makes the plan cut the volume into several blocks.
size_t budgetFor(Shape volume, Shape psf, const DeconvolveParams& p, double fraction) {
  return static_cast<size_t>(fraction * blockBytes(volume, psf, p, frameBytesPerVoxel("cpu", p)));
}

TEST(BlockPlan, InteriorsTileTheVolumeAndReadsAddTheHalo) {
  const Shape volume{37, 50, 45}, psf{7, 9, 5};
  const DeconvolveParams p = params3d(5);
  const BlockPlan plan =
      planBlocks(volume, psf, p, budgetFor(volume, psf, p, 0.2), frameBytesPerVoxel("cpu", p));
  ASSERT_GT(plan.count(), 1);
  EXPECT_EQ(plan.halo, (Shape{4, 5, 3}));  // half the PSF, rounded up
  EXPECT_LE(plan.bytesPerBlock, plan.budget);
  EXPECT_EQ(plan.blocks.size(), size_t(plan.count()));
  std::vector<int> covered(static_cast<size_t>(volume.count()), 0);
  for (const Block& b : plan.blocks) {
    for (int64_t z = b.interior.z0; z < b.interior.z1; ++z)
      for (int64_t y = b.interior.y0; y < b.interior.y1; ++y)
        for (int64_t x = b.interior.x0; x < b.interior.x1; ++x)
          ++covered[size_t((z * volume.y + y) * volume.x + x)];
    // The read box holds the interior and the halo (clipped to the volume), and has the same
    // shape for every block.
    EXPECT_LE(b.read.z0, std::max<int64_t>(0, b.interior.z0 - (plan.counts.z > 1 ? 4 : 0)));
    EXPECT_GE(b.read.x1, std::min<int64_t>(45, b.interior.x1 + (plan.counts.x > 1 ? 3 : 0)));
    EXPECT_GE(b.read.y0, 0);
    EXPECT_LE(b.read.y1, 50);
    EXPECT_EQ(b.read.shape(), plan.blocks.front().read.shape());
    EXPECT_LE(blockBytes(b.read.shape(), psf, p, frameBytesPerVoxel("cpu", p)), plan.budget);
  }
  for (int c : covered) ASSERT_EQ(c, 1);
  EXPECT_NE(plan.describe(5).find("blocks " + std::to_string(plan.count())), std::string::npos);
}

TEST(BlockPlan, ABudgetTooSmallForOneBlockIsAClearError) {
  const Shape volume{40, 40, 40}, psf{21, 21, 21};
  const DeconvolveParams p = params3d(5);
  try {
    planBlocks(volume, psf, p, size_t(1) << 20, frameBytesPerVoxel("cpu", p));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("budget of 1 MiB"), std::string::npos) << e.what();
  }
}

TEST(BlockPlan, APsfLargerThanABlockAxisStillGetsItsHalo) {
  const Shape volume{64, 64, 64}, psf{31, 31, 31};
  const DeconvolveParams p = params3d(5);
  const BlockPlan plan =
      planBlocks(volume, psf, p, budgetFor(volume, psf, p, 0.5), frameBytesPerVoxel("cpu", p));
  ASSERT_GT(plan.count(), 1);
  for (const Block& b : plan.blocks) {
    // Every interior face between blocks has 16 voxels of real data past it, or all there is.
    EXPECT_GE(b.interior.z0 - b.read.z0, std::min<int64_t>(16, b.interior.z0));
    EXPECT_GE(b.read.z1 - b.interior.z1, std::min<int64_t>(16, 64 - b.interior.z1));
    EXPECT_GE(b.read.z0, 0);
    EXPECT_LE(b.read.z1, 64);
  }
}

TEST(BlockedDeconvolution, AOneBlockPlanIsTheUnblockedRun) {
  auto cpu = makeCpuBackend(2);
  const Image volume = beads({12, 20, 18}, 3);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(6);
  const BlockPlan plan =
      planBlocks(volume.shape(), psf.shape(), p, size_t(1) << 30, frameBytesPerVoxel("cpu", p));
  ASSERT_EQ(plan.count(), 1);
  const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan);
  const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
  for (int64_t i = 0; i < volume.shape().count(); ++i)
    ASSERT_EQ(blocked.data()[i], whole.data()[i]) << i;
}

// The unblocked run against blocks that do not divide the volume, reflect boundaries. Away from
// the seams and the volume's faces (by more than the halo) they agree to float rounding after
// one iteration and within the bounds below after ten. Within the halo of a face the unblocked
// run itself reaches across the volume: its frame is padded by half the PSF and convolved
// circularly, so the padding of one face sees the far face; a block's frame sees its own far end
// instead. That difference, at most 4e-2 of a voxel's value next to the face after ten
// iterations, is most of the whole-volume figure.
TEST(BlockedDeconvolution, BlocksAgreeWithTheUnblockedRun) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{20, 70, 33};
  const Image volume = beads(shape, 7);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);  // 9³
  struct Case {
    int iterations;
    int64_t halo;  // −1: half the PSF
    double all, away;
  };
  // Measured on the development VM: 3.0e-5 / 1.4e-7, 8.2e-4 / 1.5e-5, 1.3e-3 / 1.7e-6.
  for (const Case c :
       {Case{1, -1, 1e-4, 1e-6}, Case{10, -1, 3e-3, 1e-4}, Case{10, 8, 3e-3, 1e-5}}) {
    const DeconvolveParams p = params3d(c.iterations);
    const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
    const BlockPlan plan = planBlocks(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.75),
                                      frameBytesPerVoxel("cpu", p), {c.halo, c.halo, c.halo});
    ASSERT_GE(plan.count(), 2);
    BlockedRunReport report;
    const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan, {}, &report);
    EXPECT_EQ(report.blocks, plan.count());
    const double all = relativeL2(blocked, whole);
    const double away = relativeL2AwayFromSeams(blocked, whole, plan, plan.halo);
    EXPECT_LT(all, c.all) << c.iterations << " iterations, halo " << plan.halo.z;
    EXPECT_LT(away, c.away) << c.iterations << " iterations, halo " << plan.halo.z;
  }
}

TEST(BlockedDeconvolution, PeriodicHalosWrapAroundTheVolume) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{16, 48, 20};
  const Image volume = beads(shape, 11);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(4, Boundary::Periodic);
  const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
  // Two blocks along y, forced by their size; halos of 8 wrap around every face.
  const BlockPlan plan = planBlocks(shape, psf.shape(), p, size_t(1) << 30,
                                    frameBytesPerVoxel("cpu", p), {8, 8, 8}, {0, 24, 0});
  ASSERT_EQ(plan.counts, (Shape{1, 2, 1}));
  EXPECT_EQ(plan.blocks.front().read, (Box{-8, 24, -8, 32, -8, 28}));
  const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan);
  // Measured on the development VM: 1.2e-5.
  EXPECT_LT(relativeL2(blocked, whole), 1e-4);
}

TEST(BlockedDeconvolution, CancelStopsBetweenBlocks) {
  auto cpu = makeCpuBackend(1);
  const Shape shape{20, 30, 30};
  const Image volume = beads(shape, 5);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(3);
  const BlockPlan plan = planBlocks(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.3),
                                    frameBytesPerVoxel("cpu", p));
  ASSERT_GE(plan.count(), 3);
  std::atomic<bool> cancel{false};
  int written = 0;
  auto write = [&](const Box&, const float*) {
    if (++written == 1) cancel = true;
  };
  EXPECT_THROW(deconvolveBlocked(*cpu, boxReader(volume), write, psf, p, plan, Job(&cancel)),
               Cancelled);
  EXPECT_EQ(written, 1);
}

// Reading from a stack slice by slice: the slab limit cuts z, each slice is read once per row of
// blocks (plus halos), and the result is the in-memory run's.
TEST(BlockedDeconvolution, ASlabReaderGivesTheSameResultWithinItsSlices) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{30, 40, 36};
  const Image volume = beads(shape, 17);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(4);
  const size_t sliceBytes = 40 * 36 * sizeof(float);
  const BlockPlan plan =
      planBlocks(shape, psf.shape(), p, size_t(1) << 30, frameBytesPerVoxel("cpu", p), {-1, -1, -1},
                 {0, 0, 0}, 20 * sliceBytes);
  ASSERT_GT(plan.counts.z, 1);
  // The slices a block reads and three copies of its box fit the host budget.
  EXPECT_LE(plan.hostBytesPerBlock, 20 * sliceBytes);
  EXPECT_GT(plan.slabSlices, 0);
  EXPECT_NE(plan.describe(4).find("host memory per block"), std::string::npos);
  for (const Block& b : plan.blocks) {
    EXPECT_LE(b.read.shape().z, plan.slabSlices);
    EXPECT_LE(size_t(b.read.shape().z) * sliceBytes + 3 * size_t(b.read.shape().count()) * 4,
              20 * sliceBytes);
  }
  std::atomic<int> reads{0};
  const BoxReader fromSlices = slabReader(
      shape,
      [&](int64_t z, float* out) {
        ++reads;
        std::memcpy(out, volume.slice(z), sliceBytes);
      },
      20);
  Image streamed = Image::host(shape);
  const BoxReader inMemory = boxReader(volume);
  auto writeInto = [&](Image& into) {
    return [&into, shape](const Box& box, const float* data) {
      const Shape b = box.shape();
      for (int64_t z = 0; z < b.z; ++z)
        for (int64_t y = 0; y < b.y; ++y)
          std::memcpy(into.data() + ((box.z0 + z) * shape.y + box.y0 + y) * shape.x + box.x0,
                      data + (z * b.y + y) * b.x, size_t(b.x) * sizeof(float));
    };
  };
  deconvolveBlocked(*cpu, fromSlices, writeInto(streamed), psf, p, plan);
  const Image direct = deconvolveBlocked(*cpu, volume, psf, p, plan);
  for (int64_t i = 0; i < shape.count(); ++i) ASSERT_EQ(streamed.data()[i], direct.data()[i]) << i;
  // Row bands read for each box give the same.
  Image byRows = Image::host(shape);
  deconvolveBlocked(*cpu,
                    rowReader(shape,
                              [&](int64_t z, int64_t y0, int64_t y1, float* out) {
                                std::memcpy(out, volume.slice(z) + y0 * shape.x,
                                            size_t((y1 - y0) * shape.x) * sizeof(float));
                              }),
                    writeInto(byRows), psf, p, plan);
  for (int64_t i = 0; i < shape.count(); ++i) ASSERT_EQ(byRows.data()[i], direct.data()[i]) << i;
  // A row reader needs no whole slices: the same host budget holds larger blocks.
  const BlockPlan rowsPlan =
      planBlocks(shape, psf.shape(), p, size_t(1) << 30, frameBytesPerVoxel("cpu", p), {-1, -1, -1},
                 {0, 0, 0}, 20 * sliceBytes, false);
  EXPECT_LE(rowsPlan.hostBytesPerBlock, 20 * sliceBytes);
  EXPECT_LE(rowsPlan.count(), plan.count());
  // z-major order: the slices of one row of blocks stay while its blocks are read, and the halo
  // slices the next row shares are still there: every slice is read once.
  EXPECT_EQ(reads.load(), shape.z);
  // A box taller than the slices kept, and a slab that cannot hold one block.
  std::vector<float> box(size_t(21 * 2 * 2));
  EXPECT_THROW(fromSlices(Box{0, 21, 0, 2, 0, 2}, box.data()), InvalidArgument);
  EXPECT_THROW(planBlocks(shape, psf.shape(), p, size_t(1) << 30, frameBytesPerVoxel("cpu", p),
                          {-1, -1, -1}, {0, 0, 0}, 5 * sliceBytes),
               InvalidArgument);
}

class CudaBlockedDeconvolution : public GpuTest {};

TEST_F(CudaBlockedDeconvolution, CpuAndGpuBlocksAgree) {
  const Shape shape{28, 52, 47};
  const Image volume = beads(shape, 13);
  const Image psf = gaussianPsf(1.5, 1.0, 1.0);
  const DeconvolveParams p = params3d(10);
  const BlockPlan plan = planBlocks(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.3),
                                    frameBytesPerVoxel("cpu", p));
  ASSERT_GT(plan.count(), 1);
  const Image onCpu = deconvolveBlocked(*cpu, volume, psf, p, plan);
  const Image onGpu = deconvolveBlocked(*gpu, volume, psf, p, plan);
  EXPECT_LT(relativeL2(onGpu, onCpu), 1e-4);
}

}  // namespace
