// stacklens-cli's contract: --version, --help, and exit codes for usage and input errors.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <string>

namespace {

struct Result {
  int code;
  std::string out;  // stdout and stderr together
};

Result runCli(const std::string& args) {
  std::string cmd = std::string(STACKLENS_CLI) + " " + args + " 2>&1";
  Result r{-1, {}};
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

TEST(Cli, VersionPrintsTheVersionAndSucceeds) {
  Result r = runCli("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("stacklens-cli 0."), std::string::npos) << r.out;
}

TEST(Cli, HelpListsTheCommands) {
  Result r = runCli("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("info"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit codes"), std::string::npos) << r.out;
}

TEST(Cli, NoArgumentsIsAUsageError) { EXPECT_EQ(runCli("").code, 2); }

TEST(Cli, UnknownCommandIsAUsageError) {
  Result r = runCli("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("stacklens-cli: error:"), std::string::npos) << r.out;
}

TEST(Cli, UnknownOptionIsAUsageError) { EXPECT_EQ(runCli("info x.fits --bogus").code, 2); }

TEST(Cli, MissingFileIsAnIoErrorNamingTheFile) {
  Result r = runCli("info /nonexistent/file.fits");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("stacklens-cli: error: /nonexistent/file.fits: "), std::string::npos)
      << r.out;
}
