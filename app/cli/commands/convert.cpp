// stacklens-cli convert: FITS ↔ TIFF (and FITS→FITS, TIFF→TIFF) as float32, values as scaled on
// reading, NaN kept, header cards and spacing carried over. Streams: a slab of slices is read
// (slices decoded on a few threads) while the one before is written, so no stack is ever whole
// in memory; --timings reports the read and write rates.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "io/block_writer.h"
#include "io/io_error.h"
#include "io/stack.h"
#include "io/stack_writer.h"

namespace stacklens::cli {
namespace {

// A file's size, or the sum of a folder's files (a Zarr store): what the rates are of. 0 when it
// cannot be read, rather than file_size's error value.
uint64_t bytesOnDisk(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    const uintmax_t size = fs::file_size(path, ec);
    return ec ? 0 : uint64_t(size);
  }
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->is_regular_file(ec)) {
      const uintmax_t size = it->file_size(ec);
      if (!ec) total += uint64_t(size);
    }
  return total;
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Slices [z0, z1) into out, split over up to 8 threads (io's readers decode slices in parallel).
void readSlab(const io::StackReader& reader, int64_t z0, int64_t z1, float* out) {
  const io::StackInfo& info = reader.info();
  const int64_t slice = info.y * info.x, n = z1 - z0;
  const int threads = static_cast<int>(std::clamp<int64_t>(
      std::min<int64_t>(n, std::max(1u, std::thread::hardware_concurrency())), 1, 8));
  if (threads == 1) {
    for (int64_t k = z0; k < z1; ++k) {
      throwIfInterrupted();  // a slab can take seconds to read
      reader.readSlice(k, out + (k - z0) * slice);
    }
    return;
  }
  std::vector<std::future<void>> parts;
  for (int t = 0; t < threads; ++t)
    parts.push_back(std::async(std::launch::async, [&, t] {
      for (int64_t k = z0 + n * t / threads; k < z0 + n * (t + 1) / threads; ++k) {
        throwIfInterrupted();
        reader.readSlice(k, out + (k - z0) * slice);
      }
    }));
  for (auto& p : parts) p.get();  // rethrows the first failure
}

int runConvert(const Args& args) {
  const std::string& in = args.positional(0);
  const std::string& out = args.positional(1);
  io::OpenOptions options;
  options.hdu = static_cast<int>(args.getInt("hdu", -1));
  options.plane = static_cast<int>(args.getInt("plane", 0));
  const auto started = Clock::now();
  auto reader = io::openStack(in, options);
  const io::StackInfo& info = reader->info();
  const int64_t sliceCount = info.y * info.x;
  io::WriteOptions write = io::carriedFrom(info);
  write.history.push_back("stacklens-cli convert from " + in +
                          (info.format == "fits" ? " (HDU " + std::to_string(info.hdu) + ")" : ""));
  write.sourcePath = in;
  applyOutputOptions(args, out, write);
  io::StackBlockWriter writer(out, info.z, info.y, info.x, write);
  // Two slabs of float32 in memory, one read while the other is written: a quarter of the host
  // budget each, at most 256 MiB.
  const int64_t slabBytes = std::min<int64_t>(int64_t(256) << 20, int64_t(hostBudget(args) / 4));
  const int64_t slab = std::clamp<int64_t>(slabBytes / (sliceCount * 4), 1, info.z);
  // Not zeroed: the reads fill them, and zeroing 2 × 256 MiB first would hold up a Ctrl-C.
  const size_t slabCount = static_cast<size_t>(slab * sliceCount);
  std::unique_ptr<float[]> current(new float[slabCount]), next(new float[slabCount]);
  double readSeconds = 0, writeSeconds = 0;
  auto readAt = [&](int64_t z0, std::unique_ptr<float[]>& into) {
    return std::async(std::launch::async, [&, z0] {
      const auto t = Clock::now();
      readSlab(*reader, z0, std::min(info.z, z0 + slab), into.get());
      return secondsSince(t);
    });
  };
  std::future<double> reading = readAt(0, current);
  for (int64_t z0 = 0; z0 < info.z; z0 += slab) {
    readSeconds += reading.get();
    throwIfInterrupted();
    std::swap(current, next);  // `next` now holds slab z0
    if (z0 + slab < info.z) reading = readAt(z0 + slab, current);
    const auto t = Clock::now();
    writer.writeBox(z0, std::min(info.z, z0 + slab), 0, info.y, 0, info.x, next.get());
    writeSeconds += secondsSince(t);
  }
  const auto t = Clock::now();
  writer.commit();
  writeSeconds += secondsSince(t);
  if (args.has("timings")) {
    const double inBytes = double(bytesOnDisk(in)), outBytes = double(bytesOnDisk(out));
    std::fprintf(stderr,
                 "{\"read_s\": %.3f, \"write_s\": %.3f, \"wall_s\": %.3f, \"read_GBps\": %.3f, "
                 "\"write_GBps\": %.3f, \"slab_slices\": %lld}\n",
                 readSeconds, writeSeconds, secondsSince(started), inBytes / readSeconds / 1e9,
                 outBytes / writeSeconds / 1e9, static_cast<long long>(slab));
  }
  return kOk;
}

std::vector<OptionSpec> convertOptions() {
  std::vector<OptionSpec> o = {
      {"hdu", "N", "FITS HDU to convert (0 = primary; default: the first with image data)"},
      {"plane", "P",
       "index along a 4th axis (FITS), channel/frame (TIFF hyperstacks) or sample (RGB)"},
      {"timings", "", "print read and write seconds and rates (of the files' sizes) on stderr"},
      ramBudgetOption()};
  for (auto& s : outputOptions()) o.push_back(s);
  return o;
}

const CommandRegistration reg{
    {"convert", "IN OUT",
     "convert a stack to float32 FITS, TIFF or OME-Zarr (chosen by OUT's extension: .zarr is a "
     "folder), NaN and scaling kept; streams slab by slab",
     convertOptions(), 2, 2, runConvert}};

}  // namespace
}  // namespace stacklens::cli
