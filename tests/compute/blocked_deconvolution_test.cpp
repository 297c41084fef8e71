// Blocked 3D Richardson–Lucy (compute/blocked/), overlapping blocks: the plan tiles the volume
// and fits the budget, a one-block plan is the unblocked run, blocked results agree with the
// unblocked run (closely away from the seams), periodic halos wrap, cancellation stops the run,
// CPU and GPU agree. These plans come from planBlocks, the scheme every backend has and the CPU
// falls back to; the CPU's blocks that exchange halos are tests/compute/blocked_exchange_test.cpp.
#include "compute/blocked/blocked_deconvolution.h"
#include "compute/blocked/planned_run.h"
#include "compute/blocked/slab_reader.h"
#include "compute/blocked/slab_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tests/compute/blocked_cases.h"
#include "tests/compute/forwarding_backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;
using stacklens::testing::beads;
using stacklens::testing::budgetFor;
using stacklens::testing::cpuPlan;
using stacklens::testing::GpuTest;
using stacklens::testing::params3d;
using stacklens::testing::relativeL2;

namespace {

// Relative L2 over the voxels farther than `margin` from every interior face between blocks and
// from the volume's faces.
double relativeL2AwayFromSeams(const Image& a, const Image& b, const BlockPlan& plan,
                               Shape margin) {
  const Shape s = a.shape();
  std::vector<int64_t> seams[3];  // where interiors start, past the volume's first face
  for (const Block& block : plan.blocks) {
    const int64_t starts[3] = {block.interior.z0, block.interior.y0, block.interior.x0};
    for (int axis = 0; axis < 3; ++axis)
      if (starts[axis] > 0) seams[axis].push_back(starts[axis]);
  }
  auto nearSeam = [&](int axis, int64_t i, int64_t n, int64_t m) {
    if (i < m || i >= n - m) return true;
    for (int64_t seam : seams[axis])
      if (i >= seam - m && i < seam + m) return true;
    return false;
  };
  double num = 0, den = 0;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        if (nearSeam(0, z, s.z, margin.z) || nearSeam(1, y, s.y, margin.y) ||
            nearSeam(2, x, s.x, margin.x))
          continue;
        const int64_t i = (z * s.y + y) * s.x + x;
        num += double(a.data()[i] - b.data()[i]) * (a.data()[i] - b.data()[i]);
        den += double(b.data()[i]) * b.data()[i];
      }
  return std::sqrt(num / den);
}

// Between blocks, what the frame's length leaves beyond interior + halo is split between the two
// sides (a wider halo for nothing): y in two interiors of 50, a halo of 5, and a 2,3-smooth
// frame of 64 (CUDA's lengths) leave 4 to share.
TEST(BlockPlan, TheFramesRoomToSpareWidensBothHalos) {
  const Shape volume{20, 100, 30}, psf{9, 9, 9};
  const DeconvolveParams p = params3d(5);
  const BlockPlan plan = planBlocks(volume, psf, p, frameCosts("cuda", p), size_t(1) << 32,
                                    {-1, -1, -1}, {0, 50, 0}, 1);
  ASSERT_EQ(plan.counts, (Shape{1, 2, 1}));
  ASSERT_EQ(plan.frame.y, 64);
  for (const Block& b : plan.blocks) {
    EXPECT_EQ(b.interior.y0 - b.frame.y0, 7);
    EXPECT_EQ(b.frame.y1 - b.interior.y1, 7);
  }
}

TEST(BlockPlan, InteriorsTileTheVolumeAndFramesAddTheHalo) {
  const Shape volume{37, 50, 45}, psf{7, 9, 5};
  const DeconvolveParams p = params3d(5);
  const BlockPlan plan = cpuPlan(volume, psf, p, budgetFor(volume, psf, p, 0.2));
  ASSERT_GT(plan.count(), 1);
  EXPECT_EQ(plan.halo, (Shape{4, 5, 3}));  // half the PSF, rounded up
  EXPECT_LE(plan.bytesPerBlock, plan.budget);
  EXPECT_EQ(plan.bytesPerBlock, size_t(plan.frame.count()) * frameCosts("cpu", p).bytesPerVoxel);
  EXPECT_EQ(plan.blocks.size(), size_t(plan.count()));
  std::vector<int> covered(static_cast<size_t>(volume.count()), 0);
  for (const Block& b : plan.blocks) {
    for (int64_t z = b.interior.z0; z < b.interior.z1; ++z)
      for (int64_t y = b.interior.y0; y < b.interior.y1; ++y)
        for (int64_t x = b.interior.x0; x < b.interior.x1; ++x)
          ++covered[size_t((z * volume.y + y) * volume.x + x)];
    // Every frame holds its interior and the halo (half the PSF at a face of the volume), and
    // has the plan's shape, of FFT-friendly lengths.
    EXPECT_EQ(b.frame.shape(), plan.frame);
    EXPECT_LE(b.frame.z0, b.interior.z0 - (plan.counts.z > 1 ? 4 : 3));
    EXPECT_GE(b.frame.z1, b.interior.z1 + (plan.counts.z > 1 ? 4 : 3));
    EXPECT_LE(b.frame.y0, b.interior.y0 - (plan.counts.y > 1 ? 5 : 4));
    EXPECT_GE(b.frame.y1, b.interior.y1 + (plan.counts.y > 1 ? 5 : 4));
    EXPECT_LE(b.frame.x0, b.interior.x0 - 2);
    EXPECT_GE(b.frame.x1, b.interior.x1 + 2);
  }
  for (int64_t n : {plan.frame.z, plan.frame.y, plan.frame.x}) {
    for (int64_t f : {2, 3, 5, 7})
      while (n % f == 0) n /= f;
    EXPECT_EQ(n, 1);
  }
  for (int c : covered) ASSERT_EQ(c, 1);
  const std::string text = plan.describe(5);
  EXPECT_NE(text.find("blocks " + std::to_string(plan.count())), std::string::npos) << text;
  EXPECT_NE(text.find("expected compute"), std::string::npos) << text;
}

TEST(BlockPlan, ABudgetTooSmallForOneBlockIsAClearError) {
  // The smallest block: an interior of one voxel and a halo of 21 on each side.
  const Shape volume{40, 40, 40}, psf{41, 41, 41};
  const DeconvolveParams p = params3d(5);
  try {
    planBlocks(volume, psf, p, frameCosts("cpu", p), size_t(1) << 20);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("budget of 1 MiB"), std::string::npos) << e.what();
  }
}

TEST(BlockPlan, APsfLargerThanABlockAxisStillGetsItsHalo) {
  const Shape volume{64, 64, 64}, psf{31, 31, 31};
  const DeconvolveParams p = params3d(5);
  EXPECT_THROW(planBlocks(volume, psf, p, frameCosts("cpu", p), size_t(1) << 30, {16, 15, 16}),
               InvalidArgument);
  const BlockPlan plan = cpuPlan(volume, psf, p, budgetFor(volume, psf, p, 0.5));
  ASSERT_GT(plan.count(), 1);
  for (const Block& b : plan.blocks) {
    EXPECT_LE(b.frame.z0, b.interior.z0 - 15);
    EXPECT_GE(b.frame.z1, b.interior.z1 + 15);
    EXPECT_LE(b.frame.y0, b.interior.y0 - 15);
    EXPECT_GE(b.frame.x1, b.interior.x1 + 15);
  }
}

// On the GPU the fast (power-of-two) frames cost about half as much per voxel: the plan takes
// them where they are not much larger, and otherwise 2, 3-smooth lateral lengths.
TEST(BlockPlan, OnTheGpuFramesFollowTheFastLengths) {
  DeconvolveParams p = params3d(100);
  const FrameCosts cuda = frameCosts("cuda", p);
  const size_t budget = size_t(64) << 30;
  const BlockPlan pow2 = planBlocks({192, 448, 448}, {64, 64, 64}, p, cuda, budget);
  EXPECT_TRUE(pow2.fastFrame);
  EXPECT_EQ(pow2.frame, (Shape{256, 512, 512}));
  EXPECT_NE(pow2.describe(100).find("fast transforms"), std::string::npos);
  // The seed job (950 × 2048 × 2048, PSF 128³): a few blocks whose frames add little work.
  const BlockPlan seed = planBlocks({950, 2048, 2048}, {128, 128, 128}, p, cuda, budget);
  EXPECT_LE(seed.bytesPerBlock, budget);
  EXPECT_LE(seed.count(), 8);
  EXPECT_LT(seed.work(), 1.5);
  for (int64_t n : {seed.frame.y, seed.frame.x}) {
    while (n % 2 == 0) n /= 2;
    while (n % 3 == 0) n /= 3;
    EXPECT_EQ(n, 1) << seed.describe(100);
  }
  EXPECT_GT(seed.secondsPerIteration, 0.0);
}

// Reflect-exact frames lie inside the volume, so two pieces of an axis need frames adding up to
// the axis and two halos, not twice the longer piece: the seed job's 950 planes with halos of 64
// take frames of 576 and 512, not two of 576. Interiors still tile the axis, every frame holds
// its interior and the halo, and the plan's frame is the longest.
TEST(BlockPlan, ReflectExactFramesMayDifferInLength) {
  const DeconvolveParams p = params3d(100, Boundary::ReflectExact);
  const FrameCosts cuda = frameCosts("cuda", p);
  const Shape volume{950, 2048, 2048}, psf{127, 127, 127};
  const BlockPlan seed = planBlocks(volume, psf, p, cuda, size_t(70000) << 20);
  ASSERT_EQ(seed.counts, (Shape{2, 1, 1})) << seed.describe(100);
  // The longer frame first: the memory the first block takes holds the second.
  EXPECT_EQ(seed.blocks[0].frame, (Box{0, 576, 0, 2048, 0, 2048}));
  EXPECT_EQ(seed.blocks[1].frame, (Box{950 - 512, 950, 0, 2048, 0, 2048}));
  EXPECT_EQ(seed.frame, (Shape{576, 2048, 2048}));
  EXPECT_EQ(seed.bytesPerBlock, cuda.bytes(seed.frame));
  // 10 voxels to spare, 5 to each seam's side.
  EXPECT_EQ(seed.blocks[0].interior.z1, 576 - 64 - 5);
  EXPECT_EQ(seed.blocks[1].interior.z0, 576 - 64 - 5);
  EXPECT_NEAR(seed.work(), (512.0 + 576.0) / 950.0, 1e-12);
  EXPECT_NEAR(
      seed.secondsPerIteration,
      cuda.secondsPerIteration({512, 2048, 2048}) + cuda.secondsPerIteration({576, 2048, 2048}),
      1e-12);
  const std::string text = seed.describe(100);
  EXPECT_NE(text.find("frames 512 x 2048 x 2048 (1), 576 x 2048 x 2048 (1)"), std::string::npos)
      << text;
  // Two devices take a block each: the longer one sets the time.
  const BlockPlan two =
      planBlocks(volume, psf, p, cuda, size_t(70000) << 20, {-1, -1, -1}, {0, 0, 0}, 2);
  EXPECT_NEAR(two.secondsPerIteration, cuda.secondsPerIteration({576, 2048, 2048}), 1e-12);
  // Five pieces of an awkward axis: lengths of two kinds at most, interiors tiling the axis.
  const BlockPlan five = planBlocks({37, 50, 45}, {7, 9, 5}, p, frameCosts("cpu", p),
                                    size_t(1) << 30, {-1, -1, -1}, {8, 0, 0});
  ASSERT_EQ(five.counts.z, 5);
  int64_t next = 0;
  for (const Block& b : five.blocks) {
    EXPECT_EQ(b.interior.z0, next);
    EXPECT_LE(b.interior.z1 - b.interior.z0, 8);  // no longer than asked
    next = b.interior.z1;
    EXPECT_GE(b.frame.z0, 0);
    EXPECT_LE(b.frame.z1, 37);
    EXPECT_TRUE(b.interior.z0 == 0 ? b.frame.z0 == 0 : b.interior.z0 - b.frame.z0 >= 4);
    EXPECT_TRUE(b.interior.z1 == 37 ? b.frame.z1 == 37 : b.frame.z1 - b.interior.z1 >= 4);
  }
  EXPECT_EQ(next, 37);
  // Interiors of one voxel: every piece still gets its own.
  const BlockPlan thin = planBlocks({6, 10, 45}, {7, 9, 5}, p, frameCosts("cpu", p),
                                    size_t(1) << 30, {-1, -1, -1}, {0, 0, 1});
  ASSERT_EQ(thin.counts.x, 45);
  for (const Block& b : thin.blocks) EXPECT_EQ(b.interior.x1 - b.interior.x0, 1);
}

TEST(BlockPlan, SlabsFitTheHostBudget) {
  const Shape volume{30, 40, 36}, psf{9, 9, 9};
  const DeconvolveParams p = params3d(4);
  BlockPlan plan = planBlocks(volume, psf, p, frameCosts("cpu", p), size_t(1) << 30);
  const size_t slice = 40 * 36 * sizeof(float);
  planSlabs(plan, 40 * slice, true);
  EXPECT_GE(plan.slabSlices, 1);
  EXPECT_LT(plan.slabSlices, plan.frame.z);
  EXPECT_LE(plan.hostBytes, 40 * slice);
  EXPECT_NE(plan.describe(4).find("slices at a time"), std::string::npos);
  EXPECT_THROW(planSlabs(plan, slice, true), InvalidArgument);
}

// The boundary fill against a voxel-by-voxel reference, for boxes reaching past every face (and
// past the whole volume).
TEST(FrameFill, TheOutsideFollowsTheBoundaryRule) {
  const Shape v{5, 7, 6};
  Image volume = Image::host(v);
  for (int64_t i = 0; i < v.count(); ++i) volume.data()[i] = float(i + 1);
  auto reflect = [](int64_t i, int64_t n) {
    const int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
    return m < n ? m : 2 * n - 1 - m;
  };
  for (Boundary b : {Boundary::Reflect, Boundary::Zero, Boundary::Periodic})
    for (const Box& box : {Box{-3, 4, -2, 9, 1, 5}, Box{-12, 14, -9, 20, -13, 8},
                           Box{1, 3, 2, 5, 0, 6}, Box{4, 9, -1, 2, 5, 7}}) {
      const Shape s = box.shape();
      std::vector<float> out(size_t(s.count()), -1.f);
      int reads = 0;
      const BoxReader read = [&](const Box& inside, float* o) {
        ++reads;
        ASSERT_TRUE(inside.z0 >= 0 && inside.z1 <= v.z && inside.y0 >= 0 && inside.y1 <= v.y &&
                    inside.x0 >= 0 && inside.x1 <= v.x);
        boxReader(volume)(inside, o);
      };
      readWithBoundary(read, v, b, box, out.data());
      for (int64_t z = 0; z < s.z; ++z)
        for (int64_t y = 0; y < s.y; ++y)
          for (int64_t x = 0; x < s.x; ++x) {
            const int64_t gz = box.z0 + z, gy = box.y0 + y, gx = box.x0 + x;
            const bool inside = gz >= 0 && gz < v.z && gy >= 0 && gy < v.y && gx >= 0 && gx < v.x;
            float want = 0.f;
            if (inside || b != Boundary::Zero) {
              auto map = [&](int64_t i, int64_t n) {
                return b == Boundary::Periodic ? ((i % n) + n) % n : reflect(i, n);
              };
              want = volume.at(map(gz, v.z), map(gy, v.y), map(gx, v.x));
            }
            ASSERT_EQ(out[size_t((z * s.y + y) * s.x + x)], want)
                << int(b) << " at " << gz << "," << gy << "," << gx;
          }
      EXPECT_GT(reads, 0);
    }
}

TEST(BlockedDeconvolution, AOneBlockPlanIsTheUnblockedRun) {
  auto cpu = makeCpuBackend(2);
  const Image volume = beads({12, 20, 18}, 3);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  for (Boundary b :
       {Boundary::Reflect, Boundary::Zero, Boundary::Periodic, Boundary::ReflectExact}) {
    const DeconvolveParams p = params3d(6, b);
    const BlockPlan plan = cpuPlan(volume.shape(), psf.shape(), p, size_t(1) << 30);
    ASSERT_EQ(plan.count(), 1);
    const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan);
    const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
    for (int64_t i = 0; i < volume.shape().count(); ++i)
      ASSERT_EQ(blocked.data()[i], whole.data()[i]) << int(b) << " at " << i;
  }
}

// The unblocked run against blocks that do not divide the volume, reflect boundaries. Away from
// the seams and the volume's faces (by more than the halo) they agree to float rounding after
// one iteration and within the bounds below after ten. Within the halo of a face the unblocked
// run itself reaches across the volume: its frame is padded by half the PSF and convolved
// circularly, so the padding of one face sees the far face; a block's frame sees its own far end
// instead. That difference, next to the faces, is most of the whole-volume figure.
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
  // Measured on the development VM (all / away): 2.6e-5 / 1.3e-7, 1.2e-3 / 2.3e-5,
  // 7.7e-4 / 1.3e-6.
  for (const Case c :
       {Case{1, -1, 1e-4, 1e-6}, Case{10, -1, 3e-3, 1e-4}, Case{10, 8, 3e-3, 1e-5}}) {
    const DeconvolveParams p = params3d(c.iterations);
    const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
    const BlockPlan plan = cpuPlan(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.75),
                                   {c.halo, c.halo, c.halo});
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

// The progress a run reports never steps back (a block counts as done once written, after its
// worker began the next; the CLI once printed 10 %, 0 %, 10 %, ...), and ends at 1.
TEST(BlockedDeconvolution, ProgressNeverStepsBack) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{20, 70, 33};
  const Image volume = beads(shape, 7);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(6);
  const BlockPlan plan =
      cpuPlan(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.5), {-1, -1, -1});
  ASSERT_GE(plan.count(), 3);
  std::vector<double> seen;
  std::mutex lock;
  const std::atomic<bool> never{false};
  const Job job(&never, [&](double f) {
    std::lock_guard hold(lock);
    seen.push_back(f);
  });
  deconvolveBlocked(*cpu, volume, psf, p, plan, job);
  ASSERT_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) ASSERT_GE(seen[i], seen[i - 1]) << "report " << i;
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// Reflect-exact frames lie inside the volume and the blocks at its faces start there, so each
// block reflects exactly where the volume does: only the seams differ from the unblocked run.
TEST(BlockedDeconvolution, ReflectExactBlocksReflectOnlyAtTheVolumesFaces) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{20, 70, 33};
  const Image volume = beads(shape, 7);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);  // 9³
  const DeconvolveParams p = params3d(10, Boundary::ReflectExact);
  const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
  const BlockPlan plan =
      cpuPlan(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.25), {-1, -1, -1});
  ASSERT_GE(plan.count(), 2);
  const int64_t n[3] = {shape.z, shape.y, shape.x};
  for (const Block& b : plan.blocks) {
    const int64_t f0[3] = {b.frame.z0, b.frame.y0, b.frame.x0},
                  f1[3] = {b.frame.z1, b.frame.y1, b.frame.x1},
                  i0[3] = {b.interior.z0, b.interior.y0, b.interior.x0},
                  i1[3] = {b.interior.z1, b.interior.y1, b.interior.x1},
                  h[3] = {plan.halo.z, plan.halo.y, plan.halo.x};
    for (int a = 0; a < 3; ++a) {
      EXPECT_GE(f0[a], 0);
      EXPECT_LE(f1[a], n[a]);
      if (i0[a] == 0) {
        EXPECT_EQ(f0[a], 0);
      }
      if (i1[a] == n[a]) {
        EXPECT_EQ(f1[a], n[a]);
      }
      if (i0[a] > 0) {
        EXPECT_GE(i0[a] - f0[a], h[a]);
      }
      if (i1[a] < n[a]) {
        EXPECT_GE(f1[a] - i1[a], h[a]);
      }
    }
  }
  const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan);
  const double all = relativeL2(blocked, whole);
  const double away = relativeL2AwayFromSeams(blocked, whole, plan, plan.halo);
  EXPECT_LT(all, 1e-3);
  EXPECT_LT(away, 1e-5);
  std::printf("reflect-exact, %lld blocks: all %.2e, away from seams %.2e\n",
              (long long)plan.count(), all, away);
}

TEST(BlockedDeconvolution, PeriodicHalosWrapAroundTheVolume) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{16, 48, 20};
  const Image volume = beads(shape, 11);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(4, Boundary::Periodic);
  const Image whole = cpu->download(cpu->richardsonLucy(volume, psf, p));
  // Two blocks along y, forced by their size; halos of 8 wrap around the volume's faces; the
  // other axes are whole and wrap onto themselves.
  const BlockPlan plan = cpuPlan(shape, psf.shape(), p, size_t(1) << 30, {8, 8, 8}, {0, 24, 0});
  ASSERT_EQ(plan.counts, (Shape{1, 2, 1}));
  EXPECT_EQ(plan.blocks.front().frame, (Box{0, 16, -8, 32, 0, 20}));
  const Image blocked = deconvolveBlocked(*cpu, volume, psf, p, plan);
  EXPECT_LT(relativeL2(blocked, whole), 1e-4);
}

TEST(BlockedDeconvolution, CancelStopsTheRun) {
  auto cpu = makeCpuBackend(1);
  const Shape shape{20, 30, 30};
  const Image volume = beads(shape, 5);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(3);
  const BlockPlan plan = cpuPlan(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.3));
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

// Frames filled a few slices at a time, from whole slices (an LRU of them) or row bands, give
// the in-memory run's result.
TEST(BlockedDeconvolution, SlabsAndReadersGiveTheSameResult) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{30, 40, 36};
  const Image volume = beads(shape, 17);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(4);
  const size_t sliceBytes = 40 * 36 * sizeof(float);
  BlockPlan plan = cpuPlan(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.5));
  ASSERT_GT(plan.count(), 1);
  const Image direct = deconvolveBlocked(*cpu, volume, psf, p, plan);
  planSlabs(plan, 40 * sliceBytes, true);
  ASSERT_LT(plan.slabSlices, plan.frame.z);
  std::atomic<int> reads{0};
  const BoxReader fromSlices = slabReader(
      shape,
      [&](int64_t z, float* out) {
        ++reads;
        std::memcpy(out, volume.slice(z), sliceBytes);
      },
      plan.slabSlices);
  Image streamed = Image::host(shape);
  deconvolveBlocked(*cpu, fromSlices, boxWriter(streamed), psf, p, plan);
  for (int64_t i = 0; i < shape.count(); ++i) ASSERT_EQ(streamed.data()[i], direct.data()[i]) << i;
  EXPECT_GE(reads.load(), shape.z);
  Image byRows = Image::host(shape);
  deconvolveBlocked(
      *cpu,
      rowReader(shape,
                [&](int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1, float* out) {
                  for (int64_t y = y0; y < y1; ++y)
                    out = std::copy(volume.slice(z) + y * shape.x + x0,
                                    volume.slice(z) + y * shape.x + x1, out);
                }),
      boxWriter(byRows), psf, p, plan);
  for (int64_t i = 0; i < shape.count(); ++i) ASSERT_EQ(byRows.data()[i], direct.data()[i]) << i;
  // A box taller than the slices kept is refused.
  std::vector<float> box(size_t((plan.slabSlices + 1) * 2 * 2));
  EXPECT_THROW(fromSlices(Box{0, plan.slabSlices + 1, 0, 2, 0, 2}, box.data()), InvalidArgument);
}

// Frames are filled by several threads, each taking row bands of a slab's slices: a slice is
// decoded once however many threads want it at once, and a failed decode reaches each of them.
TEST(SlabReader, DecodesASliceOnceForThreadsReadingItsRowBands) {
  const Shape shape{6, 32, 8};
  std::atomic<int> decodes[6] = {};
  std::atomic<bool> failOnce{true};
  const BoxReader read = slabReader(
      shape,
      [&](int64_t z, float* out) {
        ++decodes[z];
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // others arrive meanwhile
        if (z == 5 && failOnce.exchange(false)) throw std::runtime_error("slice 5 unreadable");
        for (int64_t i = 0; i < shape.y * shape.x; ++i) out[i] = float(z * 1000 + i);
      },
      6);
  std::atomic<int> wrong{0}, failures{0};
  std::vector<std::thread> threads;
  for (int band = 0; band < 8; ++band)
    threads.emplace_back([&, band] {
      for (int64_t z = 0; z < shape.z; ++z) {
        std::vector<float> rows(size_t(4 * shape.x));
        try {
          read(Box{z, z + 1, band * 4, band * 4 + 4, 0, shape.x}, rows.data());
        } catch (const std::runtime_error&) {
          ++failures;
          continue;
        }
        for (int64_t i = 0; i < 4 * shape.x; ++i)
          if (rows[size_t(i)] != float(z * 1000 + band * 4 * shape.x + i)) ++wrong;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  for (int64_t z = 0; z < 5; ++z) EXPECT_EQ(decodes[z].load(), 1) << z;
  // Slice 5's first decode failed for every thread that waited on it; a later read decodes anew.
  EXPECT_GE(failures.load(), 1);
  EXPECT_EQ(decodes[5].load(), failures.load() < 8 ? 2 : 1);
  std::vector<float> row(size_t(shape.x));
  read(Box{5, 6, 0, 1, 0, shape.x}, row.data());
  EXPECT_EQ(row[3], 5003.0f);
}

// A GPU stand-in: the CPU backend's results, but 3D Richardson–Lucy on a frame of more than
// `capacity` voxels runs out of "device memory".
class SmallDevice final : public stacklens::testing::ForwardingBackend, public DeviceControl {
 public:
  explicit SmallDevice(int64_t capacity) : capacity_(capacity) {}
  std::string name() const override { return "small-device"; }
  DeviceControl& device() override { return *this; }
  void setCpuFallback(bool allowed) override { fallback = allowed; }
  Image richardsonLucy(const Image& in, const Image& psf, const DeconvolveParams& p,
                       const Job& j) override {
    ++calls;
    if (in.shape().count() > capacity_) {
      if (!fallback) throw OutOfDeviceMemory("a frame of " + std::to_string(in.shape().count()));
      ++fellBack;
    }
    return ForwardingBackend::richardsonLucy(in, psf, p, j);
  }
  bool fallback = true;
  int calls = 0, fellBack = 0;

 private:
  int64_t capacity_;
};

// Out of device memory: smaller blocks (the result those blocks give), then the CPU; the
// backend never falls back block by block on its own meanwhile, and is left as it was.
TEST(PlannedRun, OutOfDeviceMemoryPlansSmallerBlocksThenUsesTheCpu) {
  const Shape shape{24, 40, 36};
  const Image volume = beads(shape, 19);
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  PlannedRunRequest r;
  r.volume = shape;
  r.psf = psf.shape();
  r.params = params3d(3);
  r.slabBudget = size_t(1) << 30;
  r.cpuFrameBudget = size_t(1) << 30;
  const FrameCosts costs = frameCosts("small-device", r.params);
  r.frameBudget = costs.bytes({32, 48, 48}) * 3;  // one block of the whole volume
  std::vector<std::string> notes;
  auto note = [&](const std::string& n) { notes.push_back(n); };
  Image out = Image::host(shape);
  const BoxWriter write = boxWriter(out);
  const ReaderForPlan read = [&](const BlockPlan&) { return boxReader(volume); };
  auto cpu = makeCpuBackend(2);
  {
    // Room for half the first plan's frame: the halos make frames shrink more slowly than the
    // budget, so a few halvings later a plan fits.
    const BlockPlan first = planBlocks(shape, r.psf, r.params, costs, r.frameBudget);
    SmallDevice device(first.frame.count() / 2);
    const PlannedRunResult run = planAndDeconvolve(device, r, read, write, psf, {}, note);
    EXPECT_EQ(run.backend, "small-device");
    EXPECT_LE(run.plan.frame.count(), first.frame.count() / 2);
    EXPECT_GE(notes.size(), 1u);
    EXPECT_NE(notes.front().find("smaller blocks"), std::string::npos) << notes.front();
    EXPECT_EQ(device.fellBack, 0);
    EXPECT_TRUE(device.fallback);  // restored
    const Image want = deconvolveBlocked(*cpu, volume, psf, r.params, run.plan);
    for (int64_t i = 0; i < shape.count(); ++i) ASSERT_EQ(out.data()[i], want.data()[i]) << i;
  }
  notes.clear();
  {
    SmallDevice device(1);  // nothing fits
    const PlannedRunResult run = planAndDeconvolve(device, r, read, write, psf, {}, note);
    EXPECT_EQ(run.backend, "cpu");
    ASSERT_EQ(notes.size(), 4u);
    EXPECT_NE(notes.back().find("on the CPU"), std::string::npos) << notes.back();
    EXPECT_EQ(device.calls, 4);
    const Image want = deconvolveBlocked(*cpu, volume, psf, r.params, run.plan);
    for (int64_t i = 0; i < shape.count(); ++i) ASSERT_EQ(out.data()[i], want.data()[i]) << i;
  }
}

// Slab by slab, with the operation's reach along z, a 3D blur, a median and outlier removal give
// the whole-stack result; a budget that cannot hold one slice is a clear error.
TEST(SlabStream, LocalOperationsGiveTheWholeStackResult) {
  auto cpu = makeCpuBackend(2);
  const Shape shape{23, 30, 28};
  const Image volume = beads(shape, 23);
  BlurParams blur3d{1.5, 1.0, 1.0, 4.0, false};
  OutlierParams outliers;
  outliers.size = 3;
  outliers.threshold = 5;
  struct Case {
    const char* name;
    int64_t reach;
    SlabOperation op;
  };
  const std::vector<Case> cases{
      {"blur 3d", 6, [&](Backend& b, const Image& in) { return b.gaussianBlur(in, blur3d); }},
      {"median", 0, [](Backend& b, const Image& in) { return b.medianFilter(in, 3); }},
      {"outliers", 0, [&](Backend& b, const Image& in) { return b.removeOutliers(in, outliers); }}};
  for (const Case& c : cases) {
    const Image whole = cpu->download(c.op(*cpu, volume));
    for (int64_t slab : {1, 4, 7, 23}) {
      Image out = Image::host(shape);
      std::vector<int64_t> starts;
      const SlabStreamReport report = streamSlabs(
          *cpu, boxReader(volume),
          [&](const Box& b, const float* data) {
            starts.push_back(b.z0);
            std::memcpy(out.slice(b.z0), data, size_t(b.shape().count()) * sizeof(float));
          },
          shape, c.reach, slab, c.op);
      EXPECT_EQ(report.slabs, int((shape.z + slab - 1) / slab));
      EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end()));
      for (int64_t i = 0; i < shape.count(); ++i)
        ASSERT_NEAR(out.data()[i], whole.data()[i], 1e-5f * std::abs(whole.data()[i]) + 1e-6f)
            << c.name << ", slabs of " << slab << ", at " << i;
    }
  }
  // Too little reach for a 3D blur shows at the seams (the test can fail).
  Image out = Image::host(shape);
  streamSlabs(*cpu, boxReader(volume), boxWriter(out), shape, 1, 4, cases[0].op);
  EXPECT_GT(relativeL2(out, cpu->download(cases[0].op(*cpu, volume))), 1e-4);
  const size_t slice = size_t(shape.y * shape.x) * sizeof(float);
  EXPECT_EQ(slabSlicesFor(shape, 0, 1000 * slice), shape.z);
  EXPECT_EQ(slabSlicesFor(shape, 2, 50 * slice), 6);  // 50 / 5 copies − 2 · 2
  EXPECT_THROW(slabSlicesFor(shape, 6, 40 * slice), InvalidArgument);
}

class CudaBlockedDeconvolution : public GpuTest {};

TEST_F(CudaBlockedDeconvolution, CpuAndGpuBlocksAgree) {
  const Shape shape{28, 52, 47};
  const Image volume = beads(shape, 13);
  const Image psf = gaussianPsf(1.5, 1.0, 1.0);
  const DeconvolveParams p = params3d(10);
  const BlockPlan plan = cpuPlan(shape, psf.shape(), p, budgetFor(shape, psf.shape(), p, 0.3));
  ASSERT_GT(plan.count(), 1);
  const Image onCpu = deconvolveBlocked(*cpu, volume, psf, p, plan);
  const Image onGpu = deconvolveBlocked(*gpu, volume, psf, p, plan);
  EXPECT_LT(relativeL2(onGpu, onCpu), 1e-4);
}

// A NaN-blanked mosaic: blocks whose frames hold no finite value come back as they were, NaN
// for NaN, and are read only once their copy on the device is done (the writer reads on a
// stream of its own; it used to read the block while the copy was still in flight).
TEST_F(CudaBlockedDeconvolution, BlocksWithoutAFiniteValueComeBackAsTheyWere) {
  const Shape shape{24, 64, 160};
  Image volume = beads(shape, 17);
  for (int64_t z = 0; z < shape.z; ++z)
    for (int64_t y = 0; y < shape.y; ++y)
      for (int64_t x = 40; x < shape.x; ++x)
        volume.data()[(z * shape.y + y) * shape.x + x] = std::numeric_limits<float>::quiet_NaN();
  const Image psf = gaussianPsf(1.0, 1.0, 1.0);
  const DeconvolveParams p = params3d(4);
  const BlockPlan plan =
      cpuPlan(shape, psf.shape(), p, size_t(1) << 30, {-1, -1, -1}, {shape.z, shape.y, 20});
  ASSERT_GE(plan.count(), 6);  // most of them in the blank
  const Image onCpu = deconvolveBlocked(*cpu, volume, psf, p, plan);
  for (int round = 0; round < 4; ++round) {  // the race, if any, has several chances to show
    const Image onGpu = deconvolveBlocked(*gpu, volume, psf, p, plan);
    double num = 0, den = 0;
    for (int64_t i = 0; i < shape.count(); ++i) {
      const float v = volume.data()[i], g = onGpu.data()[i], c = onCpu.data()[i];
      ASSERT_EQ(std::isnan(g), std::isnan(v)) << "round " << round << " at " << i;
      if (std::isnan(v)) continue;
      num += double(g - c) * (g - c);
      den += double(c) * c;
    }
    EXPECT_LT(std::sqrt(num / den), 1e-4) << "round " << round;
  }
}

}  // namespace
