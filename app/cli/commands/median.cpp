// stacklens-cli median: k×k median filter of every slice.
#include <cmath>

#include "app/cli/command.h"
#include "app/cli/processing.h"

namespace stacklens::cli {
namespace {

int runMedian(const Args& args) {
  if (!args.has("size")) throw UsageError("--size is required (an odd window size K)");
  const long long size = args.getInt("size", 3);
  if (size < 1 || size % 2 == 0 || size > 1001)
    throw UsageError("--size must be an odd number from 1 to 1001, got " + std::to_string(size));

  return runImageOperation(
      args, "median", "stacklens median size=" + std::to_string(size),
      [&](compute::Backend& b, const compute::Image& in) {
        return b.medianFilter(in, static_cast<int>(size));
      },
      /*zReach=*/0);
}

std::vector<OptionSpec> medianOptions() {
  std::vector<OptionSpec> options{
      {"size", "K",
       "odd window size: each pixel becomes the median of its K×K neighbourhood "
       "(required)"}};
  for (auto& o : processingOptions()) options.push_back(o);
  options.push_back(ramBudgetOption());
  options.push_back(devicesOption());
  return options;
}

const CommandRegistration reg{{"median", "IN OUT",
                               "K×K median filter per slice (SciPy median_filter, reflect)",
                               medianOptions(), 2, 2, runMedian}};

}  // namespace
}  // namespace stacklens::cli
