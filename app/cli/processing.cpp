// Shared plumbing of the processing subcommands.
#include "app/cli/processing.h"

#include <algorithm>
#include <cstdio>
#include <future>
#include <iostream>
#include <iterator>

#include "app/cli/interrupt.h"
#include "compute/blocked/block_plan.h"
#include "compute/blocked/slab_stream.h"
#include "compute/device_list.h"
#include "compute/stack_spacing.h"
#include "io/block_writer.h"

namespace stacklens::cli {

std::shared_ptr<io::StackReader> openInput(const Args& args, InputStack& input) {
  input.path = args.positional(0);
  io::OpenOptions options;
  options.hdu = static_cast<int>(args.getInt("hdu", -1));
  options.plane = static_cast<int>(args.getInt("plane", 0));
  std::shared_ptr<io::StackReader> reader = io::openStack(input.path, options);
  input.info = reader->info();
  return reader;
}

InputStack readInput(const Args& args) {
  InputStack input;
  auto reader = openInput(args, input);
  const auto& info = input.info;
  int64_t first = 0, count = info.z;
  if (args.has("slice")) {
    first = args.getInt("slice", 0);
    if (first < 0 || first >= info.z)
      throw UsageError("--slice " + std::to_string(first) + " is outside 0.." +
                       std::to_string(info.z - 1));
    count = 1;
    input.firstSlice = first;
  }
  input.image = compute::Image::host({count, info.y, info.x});
  for (int64_t k = 0; k < count; ++k) {
    throwIfInterrupted();  // a large input takes long to read
    reader->readSlice(first + k, input.image.slice(k));
  }
  input.image.spacing = compute::spacingOf(info);
  return input;
}

std::unique_ptr<compute::Backend> chooseBackend(const Args& args) {
  const std::string name = args.get("backend", "auto");
  std::string note;
  auto backend = compute::makeBackend(name, &note);
  if (name == "auto" && !note.empty()) std::cerr << "stacklens-cli: note: " << note << "\n";
  return backend;
}

namespace {

// --devices (default all) as device indices; a bad list is a usage error.
std::vector<int> deviceList(const Args& args) {
  try {
    return compute::parseDeviceList(args.get("devices", "all"), compute::cudaDeviceCount());
  } catch (const compute::InvalidArgument& e) {
    throw UsageError(std::string("--") + e.what());
  }
}

int firstDevice(const Args& args) { return deviceList(args).front(); }

}  // namespace

std::vector<std::unique_ptr<compute::Backend>> chooseBackends(const Args& args) {
  // With several CUDA devices, the others start while chooseBackend starts device 0 (or the CPU):
  // after CUDA's own start, which they share, each device's takes a few tenths of a second.
  std::vector<int> devices;
  std::future<std::vector<std::unique_ptr<compute::Backend>>> others;
  if (args.get("backend", "auto") != "cpu" && compute::cudaDeviceCount() > 1) {
    devices = deviceList(args);
    std::vector<int> rest;
    std::copy_if(devices.begin(), devices.end(), std::back_inserter(rest),
                 [](int d) { return d != 0; });
    if (!rest.empty())
      others = std::async(std::launch::async, [rest] { return compute::makeCudaBackends(rest); });
  }
  std::unique_ptr<compute::Backend> first = chooseBackend(args);
  if (first->name() != "cuda") {
    if (args.has("devices")) throw UsageError("--devices needs the CUDA backend");
    std::vector<std::unique_ptr<compute::Backend>> backends;
    backends.push_back(std::move(first));
    return backends;
  }
  if (devices.empty()) devices = deviceList(args);
  std::vector<std::unique_ptr<compute::Backend>> started;
  if (others.valid()) started = others.get();
  // In the order asked for; device 0's is the one chooseBackend made.
  std::vector<std::unique_ptr<compute::Backend>> backends;
  size_t next = 0;
  for (int d : devices) backends.push_back(d == 0 ? std::move(first) : std::move(started[next++]));
  // As if made here: the calling thread works on the first device, as after makeCudaBackend.
  backends.front()->device().bindToThisThread();
  return backends;
}

std::unique_ptr<compute::Backend> chooseFirstDevice(const Args& args) {
  auto backend = chooseBackend(args);
  if (!args.has("devices")) return backend;
  if (backend->name() != "cuda") throw UsageError("--devices needs the CUDA backend");
  const int first = firstDevice(args);
  return first == 0 ? std::move(backend) : compute::makeCudaBackend(first);
}

OptionSpec devicesOption() {
  return {"devices", "all|N|I,J",
          "on CUDA, the GPUs that share a stack processed in blocks or slabs (default all; N: the "
          "first N; a list: those, e.g. 0,2 or 1,)"};
}

io::WriteOptions writeOptionsFor(const Args& args, const InputStack& input,
                                 const std::string& history) {
  io::WriteOptions options = io::carriedFrom(input.info, input.firstSlice);
  options.history.push_back(history);
  options.sourcePath = input.path;
  if (args.positional().size() > 1) applyOutputOptions(args, args.positional(1), options);
  return options;
}

namespace {

// --zarr-chunks and --zarr-shards: Z,Y,X whole numbers of at least 1.
std::array<int64_t, 3> zarrShapeOption(const Args& args, const std::string& name) {
  const std::vector<double> sizes = args.getDoubles(name);
  if (sizes.size() != 3)
    throw UsageError("--" + name + ": expected Z,Y,X (three sizes), got " + *args.get(name));
  std::array<int64_t, 3> shape{};
  for (size_t a = 0; a < 3; ++a) {
    if (sizes[a] < 1 || sizes[a] > double(int64_t(1) << 31) ||
        sizes[a] != static_cast<double>(static_cast<int64_t>(sizes[a])))
      throw UsageError("--" + name + ": each size must be a whole number of at least 1, got " +
                       *args.get(name));
    shape[a] = static_cast<int64_t>(sizes[a]);
  }
  return shape;
}

}  // namespace

void applyOutputOptions(const Args& args, const std::string& out, io::WriteOptions& options) {
  const bool zarr = io::outputFormat(out) == io::OutputFormat::Zarr;
  for (const char* name : {"zarr-version", "zarr-chunks", "zarr-shards", "levels"})
    if (args.has(name) && !zarr)
      throw UsageError(std::string("--") + name + " applies to a .zarr output, not " + out);
  if (const auto version = args.get("zarr-version")) {
    if (*version != "0.4" && *version != "0.5")
      throw UsageError("--zarr-version: expected 0.4 or 0.5, got '" + *version + "'");
    options.zarr.omeVersion = *version;
  }
  if (args.has("zarr-chunks")) options.zarr.chunks = zarrShapeOption(args, "zarr-chunks");
  if (args.has("zarr-shards")) {
    if (options.zarr.omeVersion != "0.5")
      throw UsageError("--zarr-shards: shards are Zarr v3, written with --zarr-version 0.5 only");
    const std::array<int64_t, 3> shards = zarrShapeOption(args, "zarr-shards");
    // Against the default chunks (which depend on the stack's shape) the writer checks them.
    if (args.has("zarr-chunks"))
      for (size_t a = 0; a < 3; ++a)
        if (shards[a] % options.zarr.chunks[a] != 0)
          throw UsageError("--zarr-shards: each size must be a multiple of --zarr-chunks " +
                           *args.get("zarr-chunks") + ", got " + *args.get("zarr-shards"));
    options.zarr.shards = shards;
  }
  if (args.has("levels")) {
    const int levels = args.getInt32("levels", 1);
    if (levels < 1) throw UsageError("--levels: expected 1 or more, got " + std::to_string(levels));
    options.zarr.levels = levels;
  }
}

size_t hostBudget(const Args& args) {
  if (args.has("ram-budget-mb")) return static_cast<size_t>(args.getInt("ram-budget-mb", 0)) << 20;
  return compute::defaultHostBudget();
}

OptionSpec ramBudgetOption() {
  return {"ram-budget-mb", "N",
          "host memory for the stack in MiB (default: half); a larger stack streams through in "
          "slabs of slices"};
}

namespace {

// The stack a slab of slices at a time: read, processed, written, never whole in memory.
int streamImageOperation(const Args& args, const std::string& history,
                         const ImageOperation& operation, int64_t reach, int64_t slabSlices,
                         StageTimer& timer) {
  InputStack input;
  auto reader = openInput(args, input);
  const io::StackInfo& info = input.info;
  const compute::Shape shape{info.z, info.y, info.x};
  auto backends = chooseBackends(args);
  // Each backend holds a slab at a time: they share the host budget, and as many GPUs take part
  // as it holds slabs for that are not mostly their reach (at least twice the slices they read
  // on each side: thinner slabs read the stack over and over, slower than fewer GPUs).
  const size_t budget = hostBudget(args);
  auto holdsSlabsFor = [&](size_t workers) {
    try {
      const int64_t slab = compute::slabSlicesFor(shape, reach, budget / workers);
      return slab >= std::min(shape.z, std::max<int64_t>(1, 2 * reach));
    } catch (const compute::InvalidArgument&) {
      return false;
    }
  };
  size_t workers = backends.size();
  while (workers > 1 && !holdsSlabsFor(workers)) --workers;
  if (workers > 1) slabSlices = compute::slabSlicesFor(shape, reach, budget / workers);
  if (workers < backends.size()) {
    std::fprintf(stderr,
                 "stacklens: the host memory budget holds slabs for %zu of the %zu GPUs "
                 "(--ram-budget-mb)\n",
                 workers, backends.size());
    backends.resize(workers);
  }
  std::fprintf(
      stderr, "streaming: %lld slices at a time (%lld more read on each side)%s\n",
      static_cast<long long>(slabSlices), static_cast<long long>(reach),
      backends.size() > 1 ? (" on " + std::to_string(backends.size()) + " GPUs").c_str() : "");
  io::StackBlockWriter writer(args.positional(1), info.z, info.y, info.x,
                              writeOptionsFor(args, input, history));
  timer.start("stream");
  const compute::SlabStreamReport report =
      compute::streamSlabs(compute::pointersTo(backends), sliceBoxReader(*reader),
                           boxWriter(writer), shape, reach, slabSlices, operation, interruptible());
  timer.stop();
  for (const std::string& failure : report.failures)
    std::fprintf(stderr, "stacklens: %s; the other GPUs did its slabs\n", failure.c_str());
  finishStreamed(args, writer, timer, backends.front()->name(),
                 {report.slabs, report.readSeconds, report.computeSeconds, report.writeSeconds});
  return kOk;
}

}  // namespace

compute::BoxReader sliceBoxReader(const io::StackReader& reader) {
  return [&reader](const compute::Box& box, float* out) {
    const io::StackInfo& info = reader.info();
    for (int64_t z = box.z0; z < box.z1; ++z)
      reader.readSlice(z, out + (z - box.z0) * info.y * info.x);
  };
}

compute::BoxWriter boxWriter(io::StackBlockWriter& writer) {
  return [&writer](const compute::Box& b, const float* data) {
    writer.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, data);
  };
}

void finishStreamed(const Args& args, io::StackBlockWriter& writer, StageTimer& timer,
                    const std::string& backend, const StreamedTimes& times) {
  timer.start("write");
  writer.commit();
  timer.stop();
  timer.print(backend);
  if (args.has("timings"))
    std::fprintf(stderr, "slabs %d: reading %.2f s, processing %.2f s, writing %.2f s\n",
                 times.slabs, times.readSeconds, times.computeSeconds, times.writeSeconds);
}

int runImageOperation(const Args& args, const std::string& stage, const std::string& history,
                      const ImageOperation& operation, std::optional<int64_t> zReach) {
  StageTimer timer(args.has("timings"));
  if (zReach && !args.has("slice")) {
    InputStack probe;
    const io::StackInfo info = openInput(args, probe)->info();
    const compute::Shape shape{info.z, info.y, info.x};
    const size_t budget = hostBudget(args);
    const int64_t slab = compute::slabSlicesFor(shape, *zReach, budget);
    if (slab < shape.z) return streamImageOperation(args, history, operation, *zReach, slab, timer);
  }
  auto backend = chooseFirstDevice(args);
  timer.start("read");
  InputStack input = readInput(args);
  timer.stop();
  timer.start("upload");
  compute::Image image = backend->upload(input.image);
  backend->synchronize();
  timer.stop();
  timer.start(stage);
  compute::Image processed = operation(*backend, image);
  backend->synchronize();
  timer.stop();
  timer.start("download");
  compute::Image result = backend->download(processed);
  timer.stop();
  timer.start("write");
  const compute::Shape s = result.shape();
  io::writeStack(args.positional(1), result.data(), s.z, s.y, s.x,
                 writeOptionsFor(args, input, history));
  timer.stop();
  timer.print(backend->name());
  return kOk;
}

void StageTimer::start(const std::string& stage) {
  current_ = stage;
  started_ = std::chrono::steady_clock::now();
}

void StageTimer::stop() {
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  stages_.emplace_back(current_, seconds);
}

void StageTimer::print(const std::string& backend) const {
  if (!enabled_) return;
  std::cerr << "{\"backend\": \"" << backend << "\"";
  for (const auto& [stage, seconds] : stages_) std::cerr << ", \"" << stage << "\": " << seconds;
  std::cerr << "}\n";
}

}  // namespace stacklens::cli
