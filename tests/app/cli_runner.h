// Runs the stacklens-cli binary under test and captures its exit code and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

struct CliResult {
  int code;
  std::string out;  // stdout and stderr together
};

inline CliResult runCli(const std::string& args) {
  std::string cmd = std::string(STACKLENS_CLI) + " " + args + " 2>&1";
  CliResult r{-1, {}};
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
