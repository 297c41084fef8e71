// stacklens-cli deconvolve --mode 3d: a TIFF output is planned like a FITS one (both write each
// block straight to its place), and the blocked TIFF result equals the blocked FITS one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.h"
#include "fft_rounding.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "stack_values.h"
#include "temp_folder_test.h"

namespace {

namespace io = stacklens::io;

class CliBlockedOutput : public stacklens::testing::TempFolderTest {
 protected:
  CliBlockedOutput() : TempFolderTest("stacklens_cli_blocked_output_") {}
};

using stacklens::testing::stackValues;

// Under budgets small enough to block, the plan printed by --dry-run (blocks, halo, streaming
// memory) does not depend on the output's format; TIFF outputs used to get half the host budget
// and blocks cut in z.
TEST_F(CliBlockedOutput, TiffOutputsGetTheSamePlanAsFits) {
  const int64_t z = 40, y = 80, x = 72;
  std::vector<float> v(size_t(z * y * x));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 10.f + float((i * 7919) % 97);
  const std::string in = path("vol.fits");
  io::writeStack(in, v.data(), z, y, x, {});
  const std::string common = " --psf-sigma 1 --iterations 2 --mode 3d --backend cpu";
  for (const char* budget : {"1", "2", "4"}) {
    SCOPED_TRACE(std::string("--ram-budget-mb ") + budget);
    const std::string options = common + " --ram-budget-mb " + budget;
    const CliResult fits =
        runCliSeparately("deconvolve " + in + " " + path("o.fits") + options + " --dry-run");
    const CliResult tiff =
        runCliSeparately("deconvolve " + in + " " + path("o.tif") + options + " --dry-run");
    ASSERT_EQ(fits.code, 0) << fits.err;
    ASSERT_EQ(tiff.code, 0) << tiff.err;
    EXPECT_NE(fits.out.find("blocks "), std::string::npos) << fits.out;
    EXPECT_EQ(fits.out.find("blocks 1 "), std::string::npos) << fits.out;  // blocked indeed
    EXPECT_EQ(tiff.out, fits.out);
  }
  // The same blocks give the same values, whichever file they went to (up to the rounding of
  // another process's FFT plans).
  const std::string options = common + " --ram-budget-mb 2";
  ASSERT_EQ(runCliSeparately("deconvolve " + in + " " + path("b.fits") + options).code, 0);
  const CliResult tiff = runCliSeparately("deconvolve " + in + " " + path("b.tif") + options);
  ASSERT_EQ(tiff.code, 0) << tiff.err;
  stacklens::testing::expectWithinFftRounding(stackValues(path("b.tif")),
                                              stackValues(path("b.fits")), "TIFF against FITS");
}

}  // namespace
