// stacklens-cli outliers: replace pixels that differ from their local median by more than T.
#include <sstream>

#include "app/cli/command.h"
#include "app/cli/processing.h"

namespace stacklens::cli {
namespace {

int runOutliers(const Args& args) {
  if (!args.has("size")) throw UsageError("--size is required (an odd window size K)");
  if (!args.has("threshold")) throw UsageError("--threshold is required (T >= 0)");
  compute::OutlierParams p;
  const long long size = args.getInt("size", 3);
  if (size < 1 || size % 2 == 0 || size > 1001)
    throw UsageError("--size must be an odd number from 1 to 1001, got " + std::to_string(size));
  p.size = static_cast<int>(size);
  p.threshold = args.getDouble("threshold", 0.0);
  if (p.threshold < 0) throw UsageError("--threshold must be >= 0");
  const std::string mode = args.get("mode", "both");
  if (mode == "bright")
    p.mode = compute::OutlierMode::Bright;
  else if (mode == "dark")
    p.mode = compute::OutlierMode::Dark;
  else if (mode == "both")
    p.mode = compute::OutlierMode::Both;
  else
    throw UsageError("--mode must be bright, dark or both, got '" + mode + "'");

  std::ostringstream history;
  history << "stacklens outliers size=" << p.size << " threshold=" << p.threshold
          << " mode=" << mode;
  return runImageOperation(
      args, "outliers", history.str(),
      [&](compute::Backend& b, const compute::Image& in) { return b.removeOutliers(in, p); },
      /*zReach=*/0);
}

std::vector<OptionSpec> outlierOptions() {
  std::vector<OptionSpec> options{
      {"size", "K", "odd window size of the local median (required)"},
      {"threshold", "T",
       "replace a pixel when it differs from the median by more than T "
       "(required)"},
      {"mode", "bright|dark|both", "which deviations count (default both)"}};
  for (auto& o : processingOptions()) options.push_back(o);
  options.push_back(ramBudgetOption());
  options.push_back(devicesOption());
  return options;
}

const CommandRegistration reg{{"outliers", "IN OUT",
                               "replace hot/cold pixels by their K×K local median",
                               outlierOptions(), 2, 2, runOutliers}};

}  // namespace
}  // namespace stacklens::cli
