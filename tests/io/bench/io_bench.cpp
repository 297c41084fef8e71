// io_bench: time to open (what `stacklens-cli info` does) and to read one 2048×2048 slice of an
// uncompressed 1000-slice uint16 stack of 8 GB, as FITS and as BigTIFF. The files are created
// sparse (header/IFDs, then ftruncate), so the data are zero pages and the disk is not filled;
// they are deleted at the end.
//
//   io_bench [FOLDER] [--slices N] [--cli PATH/stacklens-cli]   (default: /tmp, 1000 slices;
//   with --cli, also times whole `stacklens-cli info` runs on the same files)
//
//   io_bench --scan STACK...   reads every slice of each existing stack once, in order (as
//   scrubbing through it does), and reports the median wall and process CPU time per slice
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "io/stack.h"

using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kSide = 2048;

// CPU time of this thread (user + system): the work a read costs, whatever else the machine runs.
double threadCpuMilliseconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// CPU time of the whole process: slices of chunked stacks are read by several threads.
double processCpuMilliseconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool writeAll(int fd, const std::string& bytes) {
  return ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
}

std::string fitsHeader(int64_t slices) {
  auto card = [](const std::string& key, const std::string& value) {
    std::string c = key;
    c.resize(8, ' ');
    c += "= " + std::string(value.size() < 20 ? 20 - value.size() : 0, ' ') + value;
    c.resize(80, ' ');
    return c;
  };
  std::string h = card("SIMPLE", "T") + card("BITPIX", "16") + card("NAXIS", "3") +
                  card("NAXIS1", std::to_string(kSide)) + card("NAXIS2", std::to_string(kSide)) +
                  card("NAXIS3", std::to_string(slices)) + card("BZERO", "32768") +
                  card("BSCALE", "1");
  std::string end = "END";
  end.resize(80, ' ');
  h += end;
  h.resize(2880, ' ');
  return h;
}

// A BigTIFF with one IFD per slice up front and each slice's single strip in a sparse region.
std::string bigTiffHeader(int64_t slices, uint64_t& dataStart) {
  std::string t = "II";
  auto u16 = [&](uint16_t v) { t.append(reinterpret_cast<const char*>(&v), 2); };
  auto u64 = [&](uint64_t v) { t.append(reinterpret_cast<const char*>(&v), 8); };
  u16(43);
  u16(8);
  u16(0);
  u64(16);
  const uint64_t entries = 8, ifdBytes = 8 + entries * 20 + 8;
  dataStart = ((16 + ifdBytes * static_cast<uint64_t>(slices)) / 4096 + 1) * 4096;
  const uint64_t sliceBytes = kSide * kSide * 2;
  for (int64_t k = 0; k < slices; ++k) {
    const uint64_t here = 16 + ifdBytes * static_cast<uint64_t>(k);
    u64(entries);
    auto entry = [&](uint16_t tag, uint16_t type, uint64_t value) {
      u16(tag);
      u16(type);
      u64(1);
      u64(value);
    };
    entry(256, 16, kSide);  // LONG8 width
    entry(257, 16, kSide);
    entry(258, 3, 16);
    entry(259, 3, 1);
    entry(262, 3, 1);
    entry(273, 16, dataStart + sliceBytes * static_cast<uint64_t>(k));
    entry(278, 16, kSide);
    entry(279, 16, sliceBytes);
    u64(k + 1 < slices ? here + ifdBytes : 0);
  }
  return t;
}

void bench(const std::string& path, const std::string& header, uint64_t totalBytes,
           const std::string& cli) {
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0 || !writeAll(fd, header) || ::ftruncate(fd, static_cast<off_t>(totalBytes)) != 0) {
    std::perror(path.c_str());
    if (fd >= 0) ::close(fd);
    return;
  }
  ::close(fd);
  std::vector<double> opens;
  std::unique_ptr<stacklens::io::StackReader> reader;
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    reader = stacklens::io::openStack(path);
    opens.push_back(millisecondsSince(start));
  }
  const auto& info = reader->info();
  std::vector<float> slice(static_cast<size_t>(info.y * info.x));
  std::vector<double> reads, cpu;
  for (int64_t z :
       {int64_t{0}, info.z / 2, info.z - 1, info.z / 3, int64_t{7}, info.z / 2, info.z - 1}) {
    const double cpuStart = threadCpuMilliseconds();
    auto start = Clock::now();
    reader->readSlice(z, slice.data());
    reads.push_back(millisecondsSince(start));
    cpu.push_back(threadCpuMilliseconds() - cpuStart);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(opens.begin(), opens.end());
  std::vector<double> sorted = reads;
  std::sort(sorted.begin(), sorted.end());
  std::printf("%s: %lld x %lld x %lld %s, %.2f GB\n", info.format.c_str(),
              static_cast<long long>(info.z), static_cast<long long>(info.y),
              static_cast<long long>(info.x), stacklens::io::dtypeName(info.dtype),
              static_cast<double>(totalBytes) / 1e9);
  std::printf("  open (info): median %.2f ms, max %.2f ms over 5\n", opens[2], opens.back());
  std::printf("  readSlice:   first %.2f ms, median %.2f ms, max %.2f ms over %zu reads\n",
              reads[0], sorted[sorted.size() / 2], sorted.back(), sorted.size());
  std::printf("  readSlice CPU time (this thread): median %.2f ms, max %.2f ms\n",
              cpu[cpu.size() / 2], cpu.back());
  reader.reset();
  if (!cli.empty()) {
    // The whole `stacklens-cli info` process: start, open, JSON, exit.
    std::vector<double> runs;
    for (int i = 0; i < 3; ++i) {
      auto start = Clock::now();
      FILE* pipe = popen((cli + " info '" + path + "' > /dev/null").c_str(), "r");
      const int status = pipe ? pclose(pipe) : -1;
      runs.push_back(millisecondsSince(start));
      if (status != 0) std::printf("  stacklens-cli info failed (%d)\n", status);
    }
    std::sort(runs.begin(), runs.end());
    std::printf("  stacklens-cli info: median %.1f ms, max %.1f ms over 3\n", runs[1], runs[2]);
  }
  ::unlink(path.c_str());
}

// Every slice once, in order, from a freshly opened reader.
void scan(const std::string& path) {
  const auto reader = stacklens::io::openStack(path);
  const auto& info = reader->info();
  std::vector<float> slice(static_cast<size_t>(info.y * info.x));
  std::vector<double> wall, cpu;
  for (int64_t z = 0; z < info.z; ++z) {
    const double cpuStart = processCpuMilliseconds();
    const auto start = Clock::now();
    reader->readSlice(z, slice.data());
    wall.push_back(millisecondsSince(start));
    cpu.push_back(processCpuMilliseconds() - cpuStart);
  }
  double wallSum = 0, cpuSum = 0;
  for (size_t i = 0; i < wall.size(); ++i) wallSum += wall[i], cpuSum += cpu[i];
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  const size_t n = wall.size(), p95 = std::min(n - 1, n * 95 / 100);
  std::printf(
      "%s (%s, %lld x %lld x %lld), ms per slice: wall median %.2f p95 %.2f mean %.2f; "
      "CPU median %.2f p95 %.2f mean %.2f\n",
      path.c_str(), info.format.c_str(), static_cast<long long>(info.z),
      static_cast<long long>(info.y), static_cast<long long>(info.x), wall[n / 2], wall[p95],
      wallSum / double(n), cpu[n / 2], cpu[p95], cpuSum / double(n));
}

}  // namespace

int main(int argc, char** argv) {
  std::string folder = "/tmp";
  int64_t slices = 1000;
  std::string cli;
  if (argc > 1 && std::strcmp(argv[1], "--scan") == 0) {
    try {
      for (int i = 2; i < argc; ++i) scan(argv[i]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "io_bench: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--slices") == 0 && i + 1 < argc)
      slices = std::atoll(argv[++i]);
    else if (std::strcmp(argv[i], "--cli") == 0 && i + 1 < argc)
      cli = argv[++i];
    else
      folder = argv[i];
  }
  try {
    const uint64_t dataBytes =
        static_cast<uint64_t>(kSide * kSide * 2) * static_cast<uint64_t>(slices);
    const std::string fits = fitsHeader(slices);
    bench(folder + "/stacklens-bench.fits", fits, (fits.size() + dataBytes + 2879) / 2880 * 2880,
          cli);
    uint64_t dataStart = 0;
    const std::string tiff = bigTiffHeader(slices, dataStart);
    bench(folder + "/stacklens-bench.tif", tiff, dataStart + dataBytes, cli);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "io_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
