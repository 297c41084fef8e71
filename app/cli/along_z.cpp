#include "app/cli/along_z.h"

#include <algorithm>
#include <cstdio>
#include <future>
#include <vector>

#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "compute/projection.h"

namespace stacklens::cli {
namespace {

// Rows [y0, y1) of slices [z0, z1) into band, read by a few threads at once.
void readBand(const io::StackReader& reader, int64_t z0, int64_t z1, int64_t y0, int64_t y1,
              compute::Image& band) {
  const int64_t count = z1 - z0, threads = std::min<int64_t>(8, count);
  std::vector<std::future<void>> parts;
  for (int64_t t = 0; t < threads; ++t)
    parts.push_back(std::async(std::launch::async, [&, t] {
      for (int64_t k = t; k < count; k += threads) reader.readRows(z0 + k, y0, y1, band.slice(k));
    }));
  for (auto& p : parts) p.get();
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

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
  const int64_t z0 = std::max<int64_t>(0, first - run.context);
  const int64_t z1 = std::min<int64_t>(info.z, last + 1 + run.context);
  // The band, its copy on the device and the output rows share the budget.
  const int64_t rowBytes = (z1 - z0) * info.x * int64_t(sizeof(float));
  const int64_t rows =
      std::clamp<int64_t>(int64_t(hostBudget(args) / 3) / std::max<int64_t>(1, rowBytes), 1,
                          std::max<int64_t>(1, info.y));
  compute::Image out = compute::Image::host({1, info.y, info.x});
  double readSeconds = 0, computeSeconds = 0;
  int bands = 0;
  for (int64_t y0 = 0; y0 < info.y; y0 += rows, ++bands) {
    if (interrupted()) throw compute::Cancelled();
    const int64_t y1 = std::min(info.y, y0 + rows);
    ZBand band{compute::Image::hostUninitialized({z1 - z0, y1 - y0, info.x}), z0, first - z0,
               last - z0};
    band.slices.spacing = {info.spacing[0], info.spacing[1], info.spacing[2], info.spacingKnown,
                           info.units[2]};
    auto t = std::chrono::steady_clock::now();
    readBand(*reader, z0, z1, y0, y1, band.slices);
    readSeconds += secondsSince(t);
    t = std::chrono::steady_clock::now();
    const compute::Image part = backend->download(run.collapse(*backend, band));
    computeSeconds += secondsSince(t);
    std::copy_n(part.data(), part.shape().count(), out.data() + y0 * info.x);
  }
  auto t = std::chrono::steady_clock::now();
  io::WriteOptions options = io::carriedCollapsed(info, 0.5 * double(first + last));
  options.history.push_back(run.history(first, last));
  if (run.describe) run.describe(info, options);
  io::writeStack(args.positional(1), out.data(), 1, info.y, info.x, options);
  if (args.has("timings"))
    std::fprintf(stderr,
                 "{\"backend\": \"%s\", \"bands\": %d, \"read\": %.4f, \"%s\": %.4f, "
                 "\"write\": %.4f}\n",
                 backend->name().c_str(), bands, readSeconds, run.stage.c_str(), computeSeconds,
                 secondsSince(t));
  return kOk;
}

std::vector<OptionSpec> alongZOptions() {
  std::vector<OptionSpec> options{{"first", "Z", "first slice of the range (0-based, default 0)"},
                                  {"last", "Z", "last slice of the range (default the last)"}};
  for (auto& o : processingOptions())
    if (o.name != "slice") options.push_back(o);
  options.push_back(ramBudgetOption());
  options.push_back(devicesOption());
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
