// stacklens-cli bench: time the benchmark workloads on the CPU and/or CUDA, one JSON line each.
#include <iostream>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "compute/backend.h"
#include "compute/bench/host_bandwidth.h"
#include "compute/bench/workloads.h"

namespace stacklens::cli {
namespace {

int runBench(const Args& args) {
  const std::string which = args.get("backend", "all");
  if (which != "cpu" && which != "cuda" && which != "all")
    throw UsageError("--backend: expected cpu, cuda or all, got '" + which + "'");
  const long long repeat = args.getInt("repeat", 5);
  if (repeat < 1 || repeat > 1000) throw UsageError("--repeat: expected 1..1000");
  std::vector<std::string> names = args.getAll("workload");
  if (names.empty()) names = compute::bench::workloadNames();
  for (const auto& name : names) {
    bool known = false;
    for (const auto& n : compute::bench::workloadNames()) known = known || n == name;
    if (!known) {
      std::string list;
      for (const auto& n : compute::bench::workloadNames()) list += (list.empty() ? "" : ", ") + n;
      throw UsageError("--workload: unknown workload '" + name + "' (known: " + list + ")");
    }
  }

  std::vector<std::unique_ptr<compute::Backend>> backends;
  if (which == "cpu" || which == "all") backends.push_back(compute::makeCpuBackend());
  if (which == "cuda") backends.push_back(compute::makeCudaBackend());  // throws if unusable
  if (which == "all") {
    std::string why;
    if (compute::cudaUsable(&why))
      backends.push_back(compute::makeCudaBackend());
    else
      std::cerr << "stacklens-cli: note: skipping CUDA (" << why << ")\n";
  }
  // The CPU's floors divide by the host's copy bandwidth on the backend's thread count, measured
  // once.
  double hostBandwidth = 0;
  for (auto& backend : backends)
    if (backend->name() == "cpu")
      hostBandwidth = compute::bench::hostCopyBandwidth(backend->threads());
  for (const auto& name : names)
    for (auto& backend : backends) {
      throwIfInterrupted();
      compute::bench::Result r = compute::bench::runWorkload(
          name, *backend, static_cast<int>(repeat), backend->name() == "cpu" ? hostBandwidth : 0);
      std::cout << compute::bench::toJson(r) << std::endl;  // flushed: long runs show progress
    }
  return kOk;
}

const CommandRegistration reg{
    {"bench",
     "",
     "time the benchmark workloads (shared/docs/benchmarks.md); one JSON line per workload and "
     "backend, or an \"error\" line for a workload that cannot run; CPU lines add the host's "
     "copy bandwidth, each workload's memory floor (floor_s, x_floor) and, for Richardson-Lucy, "
     "FFTW's time alone for the same transforms (fft_only_s, x_fft)",
     {{"backend", "cpu|cuda|all", "backends to time (default all: the CPU, and CUDA when usable)"},
      {"workload", "NAME", "a workload to run (repeatable; default all)", true},
      {"repeat", "N", "timed runs after one warm-up run (default 5); the median is reported"}},
     0,
     0,
     runBench}};

}  // namespace
}  // namespace stacklens::cli
