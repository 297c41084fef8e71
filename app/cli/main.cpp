// stacklens-cli: headless access to StackLens's io and compute libraries.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "compute/backend.h"
#include "compute/job.h"
#include "compute/log.h"
#include "io/io_error.h"
#include "io/read_stop.h"
#include "io/temporary_folders.h"
#include "io/write_stop.h"
#include "version/build_info.h"

using namespace stacklens;

namespace {

void printHelp(std::ostream& out) {
  out << "usage: stacklens-cli COMMAND [ARGS] [OPTIONS]\n"
         "       stacklens-cli COMMAND --help\n\n"
         "Reads FITS, TIFF and Zarr/OME-Zarr stacks (a Zarr input may be an http:// or https://\n"
         "URL) and runs StackLens's operations on the CPU or a CUDA GPU.\n\n"
         "commands:\n";
  for (const auto& [name, spec] : cli::commands()) {
    std::string head = "  " + name + " " + spec.arguments;
    if (head.size() < 28)
      head.resize(28, ' ');
    else
      head += "\n" + std::string(28, ' ');
    out << head << spec.summary << "\n";
  }
  out << "\noptions:\n  --help       this help\n  --version    print the version, git revision and "
         "backends built\n\n"
         "exit codes: 0 success, 2 usage error, 3 input/output error, 4 backend unavailable,\n"
         "            130 interrupted (Ctrl-C; nothing written)\n";
}

void printCommandHelp(const cli::CommandSpec& spec, std::ostream& out) {
  out << "usage: stacklens-cli " << spec.name << " " << spec.arguments << " [OPTIONS]\n\n"
      << spec.summary << "\n\noptions:\n";
  for (const auto& o : spec.options) {
    std::string head = "  --" + o.name + (o.valueName.empty() ? "" : " " + o.valueName);
    if (head.size() < 30)
      head.resize(30, ' ');
    else
      head += "\n" + std::string(30, ' ');
    out << head << o.help << "\n";
  }
  out << "  --help                      this help\n";
}

// The path an error is about: the io error's own, else the command's first argument.
std::string errorSubject(const std::vector<std::string>& argv) {
  for (const auto& a : argv)
    if (a.rfind("--", 0) != 0) return a;
  return "stacklens-cli";
}

int fail(const std::string& subject, const std::string& reason, int code) {
  std::cerr << "stacklens-cli: error: " << subject << ": " << reason << "\n";
  return code;
}

// The exit code and message of a command's error.
int failWith(std::exception_ptr error, const cli::CommandSpec& spec,
             const std::vector<std::string>& rest) {
  try {
    std::rethrow_exception(error);
  } catch (const cli::UsageError& e) {
    std::cerr << "stacklens-cli: error: " << spec.name << ": " << e.what() << "\n";
    return cli::kUsage;
  } catch (const io::IoError& e) {
    return fail(e.path(), e.reason(), cli::kIoError);
  } catch (const compute::BackendUnavailable& e) {
    return fail("backend", e.what(), cli::kBackendUnavailable);
  } catch (const compute::InvalidArgument& e) {
    return fail(errorSubject(rest), e.what(), cli::kUsage);
  } catch (const std::bad_alloc&) {
    return fail(errorSubject(rest), "out of memory", cli::kIoError);
  } catch (const std::exception& e) {
    return fail(errorSubject(rest), e.what(), cli::kIoError);
  } catch (...) {
    return fail(errorSubject(rest), "unknown error", cli::kIoError);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // The library's messages (fall-backs, smaller pieces) are the command's to print.
  stacklens::compute::setLogSink([](stacklens::compute::LogLevel, const std::string& text) {
    std::fprintf(stderr, "stacklens: %s\n", text.c_str());
  });
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    printHelp(std::cerr);
    return cli::kUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    printHelp(std::cout);
    return cli::kOk;
  }
  if (args[0] == "--version") {
    std::string why;
    std::cout << build_info::describe("stacklens-cli") << "on this machine: "
              << (compute::cudaUsable(&why) ? "the GPU" : "the CPU (" + why + ")") << "\n";
    return cli::kOk;
  }
  auto it = cli::commands().find(args[0]);
  if (it == cli::commands().end())
    return fail("stacklens-cli", "unknown command '" + args[0] + "' (see --help)", cli::kUsage);
  const cli::CommandSpec& spec = it->second;
  std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const auto& a : rest)
    if (a == "--help" || a == "-h") {
      printCommandHelp(spec, std::cout);
      return cli::kOk;
    }
  // From here Ctrl-C asks the command to stop and no output is renamed into place after it; a
  // read waiting on a server ends at once.
  const std::atomic<bool>* interrupt = cli::installInterruptHandler();
  stacklens::io::stopWritesWhen(interrupt);
  stacklens::io::stopReadsWhen(interrupt);
  stacklens::io::setTemporaryNotice(
      [](const std::string& text) { std::fprintf(stderr, "stacklens: %s\n", text.c_str()); });
  try {
    return spec.run(cli::parseArgs(spec, rest));
  } catch (...) {
    // Whatever a stopped command threw on its way out (Cancelled, WritesStopped, an error of a
    // half-done step), Ctrl-C is the reason.
    if (cli::interrupted())
      return fail(errorSubject(rest), "interrupted; nothing written", cli::kInterrupted);
    return failWith(std::current_exception(), spec, rest);
  }
}
