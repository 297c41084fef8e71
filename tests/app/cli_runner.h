// Runs the stacklens-cli binary under test and captures its exit code and output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

struct CliResult {
  int code;
  std::string out;  // stdout, and stderr too unless captured apart (runCliSeparately)
  std::string err;  // stderr when captured apart
};

// Runs `stacklens-cli args` with the shell redirection `redirect` appended.
inline CliResult runCliWith(const std::string& args, const std::string& redirect) {
  const std::string cmd = std::string(STACKLENS_CLI) + " " + args + " " + redirect;
  CliResult r{-1, {}, {}};
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// stdout and stderr together in `out`.
inline CliResult runCli(const std::string& args) { return runCliWith(args, "2>&1"); }

// stdout in `out`, stderr in `err` (JSON on stdout, messages on stderr).
inline CliResult runCliSeparately(const std::string& args) {
  static int counter = 0;
  const std::filesystem::path errPath =
      std::filesystem::temp_directory_path() /
      ("stacklens_cli_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  CliResult r = runCliWith(args, "2>" + errPath.string());
  std::ifstream err(errPath);
  r.err.assign(std::istreambuf_iterator<char>(err), {});
  std::filesystem::remove(errPath);
  return r;
}
