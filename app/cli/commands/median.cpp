// stacklens-cli median: k×k median filter of every slice.
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"
#include "compute/params_text.h"

namespace stacklens::cli {
namespace {

int runMedian(const Args& args) {
  if (!args.has("size")) throw UsageError("--size is required (an odd window size K)");
  const int size = args.getInt32("size", 3);
  checkParameters([&] { compute::validateMedianSize(size); }, {{"size", "size"}});

  return runImageOperation(
      args, "median", "stacklens median " + compute::describeMedianSize(size),
      [&](compute::Backend& b, const compute::Image& in) {
        return b.medianFilter(in, size, interruptible().onHost());
      },
      /*zReach=*/0);
}

std::vector<OptionSpec> medianOptions() {
  std::vector<OptionSpec> options{
      {"size", "K",
       "odd window size: each pixel becomes the median of its K×K neighbourhood "
       "(required)"}};
  for (auto& o : processingOptions()) options.push_back(o);
  for (auto& o : outputOptions()) options.push_back(o);
  options.push_back(ramBudgetOption());
  options.push_back(devicesOption());
  return options;
}

const CommandRegistration reg{{"median", "IN OUT",
                               "K×K median filter per slice (SciPy median_filter, reflect)",
                               medianOptions(), 2, 2, runMedian}};

}  // namespace
}  // namespace stacklens::cli
