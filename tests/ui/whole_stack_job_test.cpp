// The viewer's whole-stack job plans with compute's one set-up for the viewer
// (compute/blocked/whole_stack_setup.h): on the CPU the frames take half the host budget, the
// viewer keeps a quarter, the slabs get the rest.
#include "ui/jobs/whole_stack_job.h"

#include <gtest/gtest.h>

#include <memory>

#include "compute/blocked/planned_run.h"
#include "tests/ui/memory_stack.h"

namespace {

using namespace stacklens;

TEST(WholeStackJob, PlansWithTheViewersShareOfTheHostBudget) {
  auto stack = std::make_shared<stacklens::testing::MemoryStack>(40, 80, 72);
  ui::WholeStackRequest request;
  request.reader = stack;
  request.psf = compute::gaussianPsf(1.0, 1.0, 1.0);
  request.params.iterations = 2;
  auto cpu = compute::makeCpuBackend(1);
  for (size_t mb : {4, 16, 64}) {
    SCOPED_TRACE(mb);
    const size_t budget = mb << 20;
    // The rule's figures written out: frames H/2, slabs H - H/4 - H/2; FITS in row bands.
    compute::PlannedRunRequest want;
    want.volume = {40, 80, 72};
    want.psf = request.psf.shape();
    want.params = request.params;
    want.params.threeD = true;
    want.frameBudget = budget / 2;
    want.cpuFrameBudget = budget / 2;
    want.slabBudget = budget - budget / 4 - budget / 2;
    want.wholeSlices = false;
    const compute::BlockPlan expected = compute::planRun(want, "cpu");
    const compute::BlockPlan plan = ui::planWholeStack(request, *cpu, budget);
    EXPECT_EQ(plan.describe(2), expected.describe(2));
    EXPECT_EQ(plan.slabSlices, expected.slabSlices);
    EXPECT_EQ(plan.hostBytes, expected.hostBytes);
    EXPECT_LE(plan.hostBytes, budget / 4);
  }
}

}  // namespace
