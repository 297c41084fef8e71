// The pipeline over a whole stack: each output slice is the live pipeline's result at that slice
// (the slab clamped to the stack), every slice is read once, written in order, and the tables
// carry the slice index; cancelling stops the writes. Checked with the fake backend's closed
// forms, against runPipeline on slabs assembled here, and CPU against CUDA.
#include "compute/pipeline_over_stack.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <random>

#include "compute/source_table.h"
#include "tests/compute/fake_backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;
using stacklens::testing::FakeBackend;

namespace {

Image randomStack(Shape s, unsigned seed) { return stacklens::testing::randomImage(s, seed); }

struct StackRun {
  Image out;
  std::map<int64_t, int> reads;
  std::vector<int64_t> writeOrder;
  StackPipelineReport report;
};

StackRun runOver(Backend& backend, const Pipeline& p, const Image& stack, const Job& job = {}) {
  StackRun r;
  const Shape s = stack.shape();
  r.out = Image::host(s);
  r.report = runPipelineOverStack(
      backend, p, s, {},
      [&](int64_t z, float* out) {
        ++r.reads[z];
        std::copy_n(stack.slice(z), s.sliceCount(), out);
      },
      [&](int64_t z, const float* data) {
        r.writeOrder.push_back(z);
        std::copy_n(data, s.sliceCount(), r.out.slice(z));
      },
      job);
  return r;
}

// Slices z0 … z1 of stack, copied.
Image slabOf(const Image& stack, int64_t z0, int64_t z1) {
  const Shape s = stack.shape();
  Image slab = Image::host({z1 - z0 + 1, s.y, s.x});
  for (int64_t k = z0; k <= z1; ++k)
    std::copy_n(stack.slice(k), s.sliceCount(), slab.slice(k - z0));
  return slab;
}

}  // namespace

// The fake RL adds 1000 × the slice's index within its slab: the output shows where each slab
// began, so it shows the clamping at both ends.
TEST(PipelineOverStack, EachSliceIsTheLiveResultOfItsClampedSlab) {
  FakeBackend backend;
  Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.threeD = true;
  p.deconvolution.params.iterations = 1;
  p.deconvolution.slabHalfWidth = 2;
  const Image stack = stacklens::testing::rampSlab(7, 3, 4);
  const StackRun r = runOver(backend, p, stack);
  for (int64_t z = 0; z < 7; ++z) {
    const int64_t indexInSlab = z - std::max<int64_t>(0, z - 2);
    for (int64_t y = 0; y < 3; ++y)
      for (int64_t x = 0; x < 4; ++x)
        EXPECT_FLOAT_EQ(r.out.at(z, y, x), stack.at(z, y, x) + 1000.f * float(indexInSlab))
            << z << " " << y << " " << x;
  }
  EXPECT_EQ(r.writeOrder, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(r.reads.size(), 7u);
  for (const auto& [z, n] : r.reads) EXPECT_EQ(n, 1) << "slice " << z << " read " << n << " times";
}

TEST(PipelineOverStack, MatchesRunPipelineOnEverySliceOnTheCpu) {
  auto cpu = makeCpuBackend(2);
  Pipeline p;
  p.blur.enabled = true;
  p.blur.params = {0.8, 1.2, 1.0};  // σz 0.8: 3 slices on each side
  p.statistics.enabled = true;
  p.segmentation.enabled = true;
  p.segmentation.params.nSigma = 2.0;
  const Image stack = randomStack({9, 21, 17}, 7);
  const StackRun r = runOver(*cpu, p, stack);
  ASSERT_EQ(r.report.statistics.size(), 9u);
  size_t sources = 0;
  for (int64_t z = 0; z < 9; ++z) {
    const int64_t z0 = std::max<int64_t>(0, z - 3), z1 = std::min<int64_t>(8, z + 3);
    const PipelineResult want = runPipeline(*cpu, slabOf(stack, z0, z1), z - z0, p);
    for (int64_t i = 0; i < 21 * 17; ++i)
      ASSERT_EQ(r.out.slice(z)[i], want.image.data()[i]) << "slice " << z << " pixel " << i;
    EXPECT_EQ(r.report.statistics[size_t(z)].first, z);
    EXPECT_EQ(r.report.statistics[size_t(z)].second.clipped.median,
              want.statistics->clipped.median);
    for (const Source& s : want.segmentation->sources) {
      ASSERT_LT(sources, r.report.sources.size());
      const Source& got = r.report.sources[sources++];
      EXPECT_EQ(got.z, z);
      EXPECT_EQ(got.label, s.label);
      EXPECT_EQ(got.flux, s.flux);
    }
  }
  EXPECT_EQ(sources, r.report.sources.size());
  EXPECT_GT(sources, 0u);
  // The CSV table has a header and one row per source, z last.
  const std::string csv = sourcesCsv(r.report.sources, true);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), std::ptrdiff_t(sources + 1));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "label,x,y,flux,npix,peak,peak_x,peak_y,xmin,xmax,ymin,ymax,z");
}

TEST(PipelineOverStack, WithoutAnImageStageTheInputIsWrittenUnchanged) {
  FakeBackend backend;
  Pipeline p;
  p.statistics.enabled = true;
  const Image stack = stacklens::testing::rampSlab(3, 2, 2);
  const StackRun r = runOver(backend, p, stack);
  for (int64_t i = 0; i < stack.shape().count(); ++i) EXPECT_EQ(r.out.data()[i], stack.data()[i]);
  EXPECT_EQ(r.report.statistics.size(), 3u);
}

TEST(PipelineOverStack, NothingEnabledIsRefused) {
  FakeBackend backend;
  EXPECT_THROW(runOver(backend, Pipeline{}, stacklens::testing::rampSlab(2, 2, 2)),
               InvalidArgument);
}

TEST(PipelineOverStack, CancelStopsTheWrites) {
  FakeBackend backend;
  Pipeline p;
  p.blur.enabled = true;
  std::atomic<bool> stop{false};
  int written = 0;
  const Image stack = stacklens::testing::rampSlab(20, 2, 2);
  EXPECT_THROW(runPipelineOverStack(
                   backend, p, stack.shape(), {},
                   [&](int64_t z, float* out) { std::copy_n(stack.slice(z), 4, out); },
                   [&](int64_t, const float*) {
                     if (++written == 5) stop = true;
                   },
                   Job(&stop)),
               Cancelled);
  EXPECT_EQ(written, 5);
}

class PipelineOverStackGpu : public stacklens::testing::GpuTest {};

// CPU and CUDA agree over a whole stack with a 3D slab (blur across slices, then 2D RL).
TEST_F(PipelineOverStackGpu, CpuAndCudaAgree) {
  Pipeline p;
  p.blur.enabled = true;
  p.blur.params = {1.0, 1.0, 1.5};
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 5;
  const Image stack = randomStack({6, 40, 36}, 11);
  const StackRun a = runOver(*cpu, p, stack), b = runOver(*gpu, p, stack);
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < stack.shape().count(); ++i) {
    diff += std::pow(double(a.out.data()[i]) - b.out.data()[i], 2);
    norm += std::pow(double(a.out.data()[i]), 2);
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-4);
}
