// stacklens-cli's contract: --version, --help, and exit codes for usage and input errors.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "compute/backend.h"

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <string>

namespace {}  // namespace

TEST(Cli, VersionPrintsTheVersionAndSucceeds) {
  CliResult r = runCli("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("stacklens-cli 0."), std::string::npos) << r.out;
}

TEST(Cli, VersionNamesTheRevisionAndTheBackendsBuilt) {
  CliResult r = runCli("--version");
  EXPECT_EQ(r.code, 0);
  for (const char* line : {"\nrevision: ", "\nCUDA toolkit: ", "\ncuFFT: ", "\nFFTW: 3.", "\nQt: "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in " << r.out;
}

TEST(Cli, VersionSaysWhereThisMachineComputesAndWhy) {
  std::string why;
  const bool gpu = stacklens::compute::cudaUsable(&why);
  CliResult r = runCli("--version");
  EXPECT_EQ(r.code, 0);
  const std::string line =
      gpu ? "\non this machine: the GPU\n" : "\non this machine: the CPU (" + why + ")\n";
  EXPECT_NE(r.out.find(line), std::string::npos) << line << " in " << r.out;
}

// cuFFT is loaded at run time: where it cannot be, a build with CUDA computes on the CPU and says
// why. Where no GPU is usable anyway (CI), the reason stays the GPU's; the GPU machine runs this
// test too.
TEST(Cli, WithoutCufftTheCpuComputesAndTheReasonNamesIt) {
  std::string why;
  const bool gpu = stacklens::compute::cudaUsable(&why);
  const std::string missing = "/nonexistent/libcufft.so.12";
  setenv("STACKLENS_CUFFT_LIBRARY", missing.c_str(), 1);
  CliResult version = runCli("--version");
  unsetenv("STACKLENS_CUFFT_LIBRARY");
  const std::string reason = gpu ? "cuFFT (" + missing + ") could not be loaded" : why;
  EXPECT_NE(version.out.find("\non this machine: the CPU (" + reason), std::string::npos)
      << version.out;
}

TEST(Cli, HelpListsTheCommands) {
  CliResult r = runCli("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("info"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit codes"), std::string::npos) << r.out;
}

TEST(Cli, NoArgumentsIsAUsageError) { EXPECT_EQ(runCli("").code, 2); }

TEST(Cli, UnknownCommandIsAUsageError) {
  CliResult r = runCli("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("stacklens-cli: error:"), std::string::npos) << r.out;
}

TEST(Cli, UnknownOptionIsAUsageError) { EXPECT_EQ(runCli("info x.fits --bogus").code, 2); }

TEST(Cli, MissingFileIsAnIoErrorNamingTheFile) {
  CliResult r = runCli("info /nonexistent/file.fits");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("stacklens-cli: error: /nonexistent/file.fits: "), std::string::npos)
      << r.out;
}
