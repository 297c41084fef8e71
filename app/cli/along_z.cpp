#include "app/cli/along_z.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "compute/projection.h"

namespace stacklens::cli {

std::pair<int64_t, int64_t> zRange(const Args& args, const io::StackInfo& info) {
  const int64_t first = args.getInt("first", 0), last = args.getInt("last", info.z - 1);
  if (first < 0 || last >= info.z || first > last)
    throw UsageError("--first " + std::to_string(first) + " --last " + std::to_string(last) +
                     ": expected 0 <= FIRST <= LAST <= " + std::to_string(info.z - 1) +
                     " (the stack's last slice)");
  return {first, last};
}

int runAlongZ(const Args& args, const AlongZ& run) {
  InputStack input;
  auto reader = openInput(args, input);
  const io::StackInfo& info = input.info;
  const auto [first, last] = zRange(args, info);
  auto backend = chooseFirstDevice(args);
  const compute::Spacing spacing{info.spacing[0], info.spacing[1], info.spacing[2],
                                 info.spacingKnown, info.units[2]};
  compute::AlongZTimes times;
  const compute::Image out = compute::collapseAlongZ(
      *backend, {info.z, info.y, info.x}, spacing, first, last, run.context, hostBudget(args),
      [&](int64_t z, int64_t y0, int64_t y1, float* rows) {
        throwIfInterrupted();  // the first band can be the whole stack
        reader->readRows(z, y0, y1, rows);
      },
      run.collapse, interruptible(), &times);
  auto t = std::chrono::steady_clock::now();
  io::WriteOptions options = io::carriedCollapsed(info, 0.5 * double(first + last));
  options.history.push_back(run.history(first, last));
  if (run.describe) run.describe(info, options);
  applyOutputOptions(args, args.positional(1), options);
  io::writeStack(args.positional(1), out.data(), 1, info.y, info.x, options);
  if (args.has("timings"))
    std::fprintf(stderr,
                 "{\"backend\": \"%s\", \"bands\": %d, \"read\": %.4f, \"%s\": %.4f, "
                 "\"write\": %.4f}\n",
                 backend->name().c_str(), times.bands, times.readSeconds, run.stage.c_str(),
                 times.computeSeconds,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
  return kOk;
}

std::vector<OptionSpec> alongZOptions() {
  std::vector<OptionSpec> options{{"first", "Z", "first slice of the range (0-based, default 0)"},
                                  {"last", "Z", "last slice of the range (default the last)"}};
  for (auto& o : processingOptions())
    if (o.name != "slice") options.push_back(o);
  options.push_back(ramBudgetOption());
  options.push_back(devicesOption());
  for (auto& o : outputOptions()) options.push_back(o);
  return options;
}

void setCard(io::WriteOptions& o, const std::string& key, const std::string& value,
             const std::string& comment) {
  for (io::HeaderCard& c : o.header)
    if (c.key == key) {
      c.value = value, c.comment = comment;
      return;
    }
  o.header.push_back({key, value, comment});
}

}  // namespace stacklens::cli
