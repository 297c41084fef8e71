// stacklens-cli deconvolve --mode 3d --backend cpu in blocks: when the RAM budget holds the
// whole volume's arrays, the blocks exchange halos every iteration and the result is the
// unblocked run's; when it does not, the plan says the seams may differ and by how much a
// synthetic trial expects.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "fits_history.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "stack_values.h"
#include "temp_folder_test.h"

namespace {

namespace io = stacklens::io;

class CliExchangeBlocks : public stacklens::testing::TempFolderTest {
 protected:
  CliExchangeBlocks() : TempFolderTest("stacklens_cli_exchange_blocks_") {}
};

using stacklens::testing::stackValues;

TEST_F(CliExchangeBlocks, BlocksThatFitExchangeHalosAndGiveTheUnblockedRun) {
  const int64_t z = 20, y = 48, x = 40;
  std::vector<float> v(size_t(z * y * x));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 10.f + float((i * 7919) % 97) + ((i % size_t(x)) == 17 ? 300.f : 0.f);
  const std::string in = path("vol.fits");
  io::writeStack(in, v.data(), z, y, x, {});
  const std::string common = " --psf-sigma 2,1.5,1.5 --iterations 6 --mode 3d --backend cpu";
  // Blocks forced by their length, a default budget: the arrays fit, the blocks exchange.
  const std::string blocks = " --block 12,24,0";
  const CliResult plan =
      runCliSeparately("deconvolve " + in + " " + path("p.fits") + common + blocks + " --dry-run");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_EQ(plan.out.find("blocks 1 "), std::string::npos) << plan.out;  // blocked indeed
  EXPECT_NE(plan.out.find("exchange halos every iteration"), std::string::npos) << plan.out;
  ASSERT_EQ(runCliSeparately("deconvolve " + in + " " + path("whole.fits") + common).code, 0);
  for (const std::string& out : {path("blocked.fits"), path("blocked.tif")}) {
    const CliResult r = runCliSeparately("deconvolve " + in + " " + out + common + blocks);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("exchange halos every iteration"), std::string::npos) << r.err;
    const std::vector<float> a = stackValues(out), b = stackValues(path("whole.fits"));
    ASSERT_EQ(a.size(), b.size());
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      num += double(a[i] - b[i]) * (a[i] - b[i]);
      den += double(b[i]) * b[i];
    }
    // Float rounding only (FFTs of other lengths, in another process): about 1e-6.
    EXPECT_LT(std::sqrt(num / den), 1e-4) << out;
  }
  // HISTORY keeps how the volume was cut.
  EXPECT_NE(stacklens::testing::fitsHistory(path("blocked.fits")).find("exchanging halos"),
            std::string::npos)
      << stacklens::testing::fitsHistory(path("blocked.fits"));
  EXPECT_EQ(stacklens::testing::fitsHistory(path("whole.fits")).find("blocks="), std::string::npos);
  // A budget too small for those arrays: overlapping blocks, and the plan says what that means.
  const CliResult small = runCliSeparately("deconvolve " + in + " " + path("s.fits") + common +
                                           " --ram-budget-mb 1 --dry-run");
  ASSERT_EQ(small.code, 0) << small.err;
  EXPECT_NE(small.out.find("may differ from an unblocked run"), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("exchange halos every iteration, whose result is"), std::string::npos)
      << small.out;
  const CliResult overlapping =
      runCliSeparately("deconvolve " + in + " " + path("o.fits") + common + " --ram-budget-mb 1");
  ASSERT_EQ(overlapping.code, 0) << overlapping.err;
  EXPECT_NE(stacklens::testing::fitsHistory(path("o.fits")).find("overlapping halo="),
            std::string::npos)
      << stacklens::testing::fitsHistory(path("o.fits"));
  EXPECT_NE(stacklens::testing::fitsHistory(path("o.fits"))
                .find("(seams may differ from an unblocked run)"),
            std::string::npos);
  // The seam error a synthetic trial expects is said, in the plan too, and kept.
  EXPECT_NE(overlapping.err.find("expected seam error "), std::string::npos) << overlapping.err;
  EXPECT_NE(small.out.find("expected seam error "), std::string::npos) << small.out;
  EXPECT_NE(stacklens::testing::fitsHistory(path("o.fits"))
                .find("relative L2 near the seams (synthetic trial)"),
            std::string::npos)
      << stacklens::testing::fitsHistory(path("o.fits"));
}

}  // namespace

namespace {

// --seams takes exact or fast, in 3D only; a small budget on the CPU leaves no room for one
// block either, and the plan says so after the estimate.
TEST_F(CliExchangeBlocks, SeamsTakesExactOrFast) {
  std::vector<float> v(size_t(20 * 48 * 40), 50.f);
  const std::string in = path("flat.fits");
  io::writeStack(in, v.data(), 20, 48, 40, {});
  const std::string common =
      "deconvolve " + in + " " + path("o.fits") + " --psf-sigma 2,1.5,1.5 --iterations 6";
  const CliResult bad = runCliSeparately(common + " --mode 3d --seams sideways --dry-run");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--seams: expected exact or fast"), std::string::npos) << bad.err;
  const CliResult twoD = runCliSeparately(common + " --seams fast");
  EXPECT_NE(twoD.code, 0);
  EXPECT_NE(twoD.err.find("--seams needs --mode 3d"), std::string::npos) << twoD.err;
  const CliResult small =
      runCliSeparately(common + " --mode 3d --backend cpu --ram-budget-mb 1 --dry-run");
  ASSERT_EQ(small.code, 0) << small.err;
  const size_t estimate = small.out.find("expected seam error ");
  ASSERT_NE(estimate, std::string::npos) << small.out;
  // A flat volume's trial is not flat (point sources): its estimate decides, and whichever way
  // it goes the plan stays in blocks here, as one block does not fit 1 MiB.
  EXPECT_NE(small.out.find("blocks "), std::string::npos) << small.out;
  EXPECT_EQ(small.out.find("blocks 1 "), std::string::npos) << small.out;
}

}  // namespace
