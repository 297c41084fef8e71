// stacklens-cli lab: a tiny CPU sweep writes a CSV that reads back and an SVG with its curves;
// bad choices are usage errors named before any timing.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "cli_runner.h"
#include "compute/lab/sweep_csv.h"
#include "temp_folder_test.h"

namespace {

namespace lab = stacklens::compute::lab;

class CliLab : public stacklens::testing::TempFolderTest {
 protected:
  CliLab() : TempFolderTest("stacklens_cli_lab_") {}
};

TEST_F(CliLab, TinySweepWritesCsvAndSvg) {
  const std::string csv = path("sweep.csv"), svg = path("sweep.svg");
  const CliResult r = runCli(
      "lab --ops blur,projection --sizes 16,32 --threads 1,all --repeats 2 "
      "--cpu-only --quiet --csv " +
      csv + " --plot " + svg);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("blur"), std::string::npos) << r.out;
  const lab::Sweep s = lab::readCsvFile(csv);
  // 2 ops × 2 sizes × the distinct CPU thread counts (1 and all; one count on a 1-thread machine).
  const size_t variants = s.machine.cpuThreads > 1 ? 2 : 1;
  ASSERT_EQ(s.points.size(), 4 * variants);
  for (const auto& p : s.points) {
    EXPECT_EQ(p.variant, lab::Variant::Cpu);
    EXPECT_EQ(p.repeats, 2);
    EXPECT_TRUE(p.error.empty()) << p.error;
  }
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("id=\"curve-blur-cpu-all-threads\""), std::string::npos);
  EXPECT_NE(text.find("id=\"curve-projection-cpu-all-threads\""), std::string::npos);
}

TEST_F(CliLab, BadChoicesAreUsageErrors) {
  EXPECT_EQ(runCli("lab --ops fft --cpu-only").code, 2);
  EXPECT_EQ(runCli("lab --sizes 4096:256 --cpu-only").code, 2);
  EXPECT_EQ(runCli("lab --threads none --cpu-only").code, 2);
  EXPECT_EQ(runCli("lab --repeats 0 --cpu-only").code, 2);
}

}  // namespace
