// stacklens-cli outliers: replace pixels that differ from their local median by more than T.
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"
#include "compute/params_text.h"

namespace stacklens::cli {
namespace {

int runOutliers(const Args& args) {
  if (!args.has("size")) throw UsageError("--size is required (an odd window size K)");
  if (!args.has("threshold")) throw UsageError("--threshold is required (T >= 0)");
  compute::OutlierParams p;
  p.size = args.getInt32("size", 3);
  p.threshold = args.getDouble("threshold", 0.0);
  const std::string mode = args.get("mode", "both");
  if (mode == "bright")
    p.mode = compute::OutlierMode::Bright;
  else if (mode == "dark")
    p.mode = compute::OutlierMode::Dark;
  else if (mode == "both")
    p.mode = compute::OutlierMode::Both;
  else
    throw UsageError("--mode must be bright, dark or both, got '" + mode + "'");
  checkParameters([&] { compute::validate(p); }, {{"size", "size"}, {"threshold", "threshold"}});

  return runImageOperation(
      args, "outliers", "stacklens outliers " + compute::describe(p),
      [&](compute::Backend& b, const compute::Image& in) {
        return b.removeOutliers(in, p, interruptible().onHost());
      },
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
  for (auto& o : outputOptions()) options.push_back(o);
  options.push_back(ramBudgetOption());
  options.push_back(devicesOption());
  return options;
}

const CommandRegistration reg{{"outliers", "IN OUT",
                               "replace hot/cold pixels by their K×K local median",
                               outlierOptions(), 2, 2, runOutliers}};

}  // namespace
}  // namespace stacklens::cli
