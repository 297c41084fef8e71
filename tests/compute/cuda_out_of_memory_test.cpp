// The CUDA backend's out-of-memory paths, driven by a simulated device capacity
// (STACKLENS_CUDA_SIMULATED_CAPACITY_MB, compute/cuda/host/cuda_context.cuh): the host-stack
// pipeline halves its chunks, a device stack is split into halving groups of slices, and when not
// even one slice fits the CPU runs the operation with a message; each result equals the CPU
// backend's. A memory budget (STACKLENS_CUDA_BUDGET_MB) below the stack's need takes the same two
// steps. Skipped without a GPU.
#include <gtest/gtest.h>

#include "tests/compute/log_capture.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "compute/backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/scoped_variable.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::copyOf;
using stacklens::testing::expectIdentical;
using stacklens::testing::relativeL2;

constexpr const char* kCapacityVariable = "STACKLENS_CUDA_SIMULATED_CAPACITY_MB";
// Large enough that the budget alone plans each stack below in a single chunk.
constexpr size_t kBudget = size_t(256) << 20;

using stacklens::test::ScopedVariable;

// A CUDA backend whose context refuses allocations beyond `mib` MiB in all. The variable is set
// only while the backend is made (the context reads it then), so no other backend sees it.
std::unique_ptr<Backend> cudaBackendWithCapacity(double mib) {
  std::unique_ptr<Backend> b;
  {
    ScopedVariable capacity(kCapacityVariable, std::to_string(mib));
    b = makeCudaBackend();
  }
  b->device().setMemoryBudget(kBudget);
  return b;
}

// Values in [0.1, 1), plus hot pixels for the median (Richardson-Lucy gets none, as in the
// parity test that sets its 1e-4 tolerance).
Image stackWithHotPixels(Shape s, unsigned seed, bool hotPixels = true) {
  Image im = stacklens::testing::randomImage(s, seed, 0.1f, 1.f);
  if (hotPixels)
    for (int64_t i = 37; i < s.count(); i += 1013) im.data()[i] = 50.f;
  return im;
}

bool contains(const std::string& log, const char* text) {
  return log.find(text) != std::string::npos;
}

class CudaOutOfMemory : public stacklens::testing::GpuTest {
 protected:
  stacklens::testing::LogCapture logged;  // what the backend says about its fall-backs
};

// 16 slices of 128×128 (64 KiB each, 1 MiB in all); the budget plans them as one chunk, but the
// pipeline's two input buffers for 16 slices alone (2 MiB) exceed the 1.5 MiB device, so the
// pipeline must halve (to 8, then 4 or 2 slices per chunk; one slice with Richardson-Lucy's FFT
// frame needs well under 1 MiB).
TEST_F(CudaOutOfMemory, TheHostStackPipelineHalvesItsChunksAndMatchesTheCpu) {
  const Shape shape{16, 128, 128};
  const Image in = stackWithHotPixels(shape, 11);
  const Image before = copyOf(in);

  // Without the simulated capacity the same budget goes in one chunk.
  const Job onHost = Job().onHost();  // a host result: the stack streams through in chunks
  gpu->device().setMemoryBudget(kBudget);
  gpu->medianFilter(in, 3, onHost);
  EXPECT_EQ(gpu->device().lastChunkCount(), 1);
  gpu->device().setMemoryBudget(0);

  auto small = cudaBackendWithCapacity(1.5);
  const Image wantMedian = cpu->medianFilter(in, 3);
  logged.take();
  const Image median = small->download(small->medianFilter(in, 3, onHost));
  const int medianChunks = small->device().lastChunkCount();
  const std::string medianLog = logged.take();
  EXPECT_GT(medianChunks, 1) << medianLog;
  EXPECT_TRUE(contains(medianLog, "out of GPU memory with chunks of 16 slices")) << medianLog;
  EXPECT_TRUE(contains(medianLog, "simulated capacity")) << medianLog;
  EXPECT_FALSE(contains(medianLog, "on the CPU")) << medianLog;
  expectIdentical(median, wantMedian, "median through halved chunks");

  const Image rlInput = stackWithHotPixels(shape, 21, false);
  const Image psf = gaussianPsf(0, 1.5, 1.5);
  const DeconvolveParams p;  // 20 iterations, reflecting boundaries, 2D per slice
  const Image wantRl = cpu->richardsonLucy(rlInput, psf, p);
  logged.take();
  const Image rl = small->download(small->richardsonLucy(rlInput, psf, p, onHost));
  const int rlChunks = small->device().lastChunkCount();
  const std::string rlLog = logged.take();
  EXPECT_GT(rlChunks, 1) << rlLog;
  EXPECT_TRUE(contains(rlLog, "out of GPU memory with chunks of 16 slices")) << rlLog;
  EXPECT_FALSE(contains(rlLog, "on the CPU")) << rlLog;
  ASSERT_TRUE(rl.onHost());
  EXPECT_LT(relativeL2(rl, wantRl), 1e-4);

  expectIdentical(in, before, "input after the operations");
}

// A device stack of 16 slices of 128×128 (1 MiB) on a 1.75 MiB device: its upload fits, but not
// a whole-stack result beside it (2 MiB), nor a group of 8 slices' copy and result (1 MiB more);
// groups of 4 (0.5 MiB more) do.
TEST_F(CudaOutOfMemory, ADeviceStackIsSplitIntoHalvingGroupsOfSlicesAndMatchesTheCpu) {
  const Shape shape{16, 128, 128};
  const Image in = stackWithHotPixels(shape, 12);
  const Image want = cpu->medianFilter(in, 3);
  auto small = cudaBackendWithCapacity(1.75);
  const Image dev = small->upload(in);
  ASSERT_FALSE(dev.onHost());
  logged.take();
  const Image out = small->medianFilter(dev, 3);
  const int groups = small->device().lastChunkCount();
  const std::string log = logged.take();
  EXPECT_TRUE(contains(log, "splitting the stack into groups of slices")) << log;
  EXPECT_FALSE(contains(log, "on the CPU")) << log;
  EXPECT_GE(groups, 2) << log;
  // The groups' results are gathered on the host; the full device cannot hold them beside the
  // input, so they stay there and the log says so.
  EXPECT_TRUE(out.onHost());
  EXPECT_TRUE(contains(log, "stays in host memory")) << log;
  expectIdentical(small->download(out), want, "median in slice groups");
}

// Not even one slice fits: the CPU runs the operation, says so, and its result (not the input)
// comes back; for a host stack (the pipeline gives up at one slice per chunk) and for a device
// stack (the slice groups give up at one slice).
TEST_F(CudaOutOfMemory, WhenNotOneSliceFitsTheCpuRunsItWithAMessage) {
  {
    // 4 slices of 512×512 (1 MiB each) on a 1 MiB device: the pipeline's two input buffers for
    // one slice need 2 MiB.
    const Image in = stackWithHotPixels({4, 512, 512}, 13);
    const Image before = copyOf(in);
    const Image want = cpu->medianFilter(in, 3);
    auto small = cudaBackendWithCapacity(1.0);
    logged.take();
    const Image out = small->download(small->medianFilter(in, 3, Job().onHost()));
    const std::string log = logged.take();
    EXPECT_TRUE(contains(log, "out of GPU memory with chunks of 2 slices")) << log;
    EXPECT_TRUE(contains(log, "median filter does not fit on the GPU")) << log;
    EXPECT_TRUE(contains(log, "running it on the CPU")) << log;
    expectIdentical(out, want, "host stack on the CPU");
    EXPECT_NE(std::memcmp(out.data(), in.data(), in.bytes()), 0) << "the input came back";
    expectIdentical(in, before, "input after the fall-back");
  }
  {
    // 4 slices of 256×256 (1 MiB) on a 1.25 MiB device: the upload fits, a one-slice group's
    // copy and result beside it (0.5 MiB) do not.
    const Image in = stackWithHotPixels({4, 256, 256}, 14);
    const Image want = cpu->medianFilter(in, 3);
    auto small = cudaBackendWithCapacity(1.25);
    const Image dev = small->upload(in);
    logged.take();
    const Image out = small->download(small->medianFilter(dev, 3));
    const std::string log = logged.take();
    EXPECT_TRUE(contains(log, "splitting the stack into groups of slices")) << log;
    EXPECT_TRUE(contains(log, "running it on the CPU")) << log;
    expectIdentical(out, want, "device stack on the CPU");
    EXPECT_NE(std::memcmp(out.data(), in.data(), in.bytes()), 0) << "the input came back";
  }
}

TEST_F(CudaOutOfMemory, ABadSimulatedCapacityIsRefusedByName) {
  for (double bad : {0.0, -1.0}) {
    try {
      cudaBackendWithCapacity(bad);
      ADD_FAILURE() << "capacity " << bad << " was accepted";
    } catch (const BackendUnavailable& e) {
      EXPECT_TRUE(contains(e.what(), kCapacityVariable)) << e.what();
    }
  }
}

// Over the memory budget (STACKLENS_CUDA_BUDGET_MB) a device run is split into groups of slices
// with the same result; under one slice's need the CPU runs it, with a message.
TEST_F(CudaOutOfMemory, OverBudgetWorkIsSplitIntoSliceGroupsThenSentToTheCpu) {
  // Prepare
  Image in = stacklens::testing::randomImage({3, 256, 256}, 18, 0.1f, 1.f);
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
  const Image onCpu = makeCpuBackend()->richardsonLucy(in, psf, p);

  // Run
  logged.take();
  // A host result: the budget plans the chunks the host stack streams through.
  Image split = small->download(small->richardsonLucy(in, psf, p, Job().onHost()));
  const std::string splitLog = logged.take();
  Image fellBack = tiny->download(tiny->richardsonLucy(in, psf, p, Job().onHost()));
  const std::string log = logged.take();

  // Verify
  EXPECT_NE(splitLog.find("groups of slices"), std::string::npos) << splitLog;
  for (int64_t i = 0; i < in.shape().count(); ++i) ASSERT_EQ(split.data()[i], whole.data()[i]) << i;
  EXPECT_NE(log.find("running it on the CPU"), std::string::npos) << log;
  for (int64_t i = 0; i < in.shape().count(); ++i)
    ASSERT_EQ(fellBack.data()[i], onCpu.data()[i]) << i;
}

}  // namespace
