// streamSlabs: read a slab with its reach (the next one ahead), process, keep its own slices.
#include "compute/blocked/slab_stream.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "compute/blocked/block_queue.h"

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

int64_t slabSlicesFor(Shape volume, int64_t reach, size_t hostBudget) {
  const size_t slice = size_t(volume.y * volume.x) * sizeof(float);
  const size_t copies = 5;  // read, read ahead, result; the backend's input and result
  const int64_t fit = static_cast<int64_t>(hostBudget / (copies * slice)) - 2 * reach;
  if (fit < 1)
    throw InvalidArgument("a host memory budget of " + std::to_string(hostBudget >> 20) +
                          " MiB cannot hold one slice with " + std::to_string(reach) +
                          " slices on each side (" +
                          std::to_string((copies * size_t(1 + 2 * reach) * slice) >> 20) + " MiB)");
  return std::min(fit, volume.z);
}

SlabStreamReport streamSlabs(Backend& backend, const BoxReader& read, const BoxWriter& write,
                             Shape volume, int64_t reach, int64_t slabSlices,
                             const SlabOperation& operation, const Job& job) {
  if (slabSlices < 1 || reach < 0) throw InvalidArgument("slabs: bad slab size or reach");
  SlabStreamReport report;
  // The box slab k reads: its slices and `reach` more on each side, inside the stack.
  auto boxOf = [&](int64_t z0) {
    const int64_t z1 = std::min(volume.z, z0 + slabSlices);
    return Box{
        std::max<int64_t>(0, z0 - reach), std::min(volume.z, z1 + reach), 0, volume.y, 0, volume.x};
  };
  auto readAt = [&](int64_t z0) {
    const auto t = Clock::now();
    const Box box = boxOf(z0);
    Image slab = Image::hostUninitialized(box.shape());
    read(box, slab.data());
    return std::make_pair(std::move(slab), secondsSince(t));
  };
  std::future<std::pair<Image, double>> next = std::async(std::launch::async, readAt, 0);
  for (int64_t z0 = 0; z0 < volume.z; z0 += slabSlices) {
    auto [input, readSeconds] = next.get();
    report.readSeconds += readSeconds;
    job.checkCancelled();
    if (z0 + slabSlices < volume.z) next = std::async(std::launch::async, readAt, z0 + slabSlices);
    const Box box = boxOf(z0);
    const auto t = Clock::now();
    const Image result = backend.download(operation(backend, input));
    report.computeSeconds += secondsSince(t);
    const auto w = Clock::now();
    const int64_t z1 = std::min(volume.z, z0 + slabSlices);
    write(Box{z0, z1, 0, volume.y, 0, volume.x}, result.slice(z0 - box.z0));
    report.writeSeconds += secondsSince(w);
    ++report.slabs;
    job.report(double(z1) / double(volume.z));
  }
  return report;
}

SlabStreamReport streamSlabs(const std::vector<Backend*>& backends, const BoxReader& read,
                             const BoxWriter& write, Shape volume, int64_t reach,
                             int64_t slabSlices, const SlabOperation& operation, const Job& job) {
  if (backends.empty()) throw InvalidArgument("slabs: no backend to run on");
  if (backends.size() == 1)
    return streamSlabs(*backends.front(), read, write, volume, reach, slabSlices, operation, job);
  if (slabSlices < 1 || reach < 0) throw InvalidArgument("slabs: bad slab size or reach");
  const int64_t count = (volume.z + slabSlices - 1) / slabSlices;
  BlockQueue queue(static_cast<size_t>(count));
  std::mutex mutex;  // the report, the failures and the progress
  SlabStreamReport report;
  std::exception_ptr fatal;
  std::vector<std::exception_ptr> deviceFailures;
  int64_t slicesDone = 0;
  // A read or write error: it stops every backend (a device's failure stops one).
  struct InputOutputFailure {
    std::exception_ptr error;
  };
  auto work = [&](Backend& backend) {
    std::optional<size_t> slab;
    try {
      backend.device().bindToThisThread();
      while ((slab = queue.take())) {
        job.checkCancelled();
        const int64_t z0 = int64_t(*slab) * slabSlices, z1 = std::min(volume.z, z0 + slabSlices);
        const Box box{std::max<int64_t>(0, z0 - reach),
                      std::min(volume.z, z1 + reach),
                      0,
                      volume.y,
                      0,
                      volume.x};
        auto t = Clock::now();
        Image input = Image::hostUninitialized(box.shape());
        try {
          read(box, input.data());
        } catch (...) {
          throw InputOutputFailure{std::current_exception()};
        }
        const double readSeconds = secondsSince(t);
        t = Clock::now();
        const Image result = backend.download(operation(backend, input));
        const double computeSeconds = secondsSince(t);
        t = Clock::now();
        try {
          write(Box{z0, z1, 0, volume.y, 0, volume.x}, result.slice(z0 - box.z0));
        } catch (...) {
          throw InputOutputFailure{std::current_exception()};
        }
        queue.done(*slab);
        std::lock_guard lock(mutex);
        report.readSeconds += readSeconds;
        report.computeSeconds += computeSeconds;
        report.writeSeconds += secondsSince(t);
        ++report.slabs;
        slicesDone += z1 - z0;
        job.report(double(slicesDone) / double(volume.z));
      }
    } catch (const InputOutputFailure& f) {
      if (slab) queue.handBack(*slab);
      std::lock_guard lock(mutex);
      if (!fatal) fatal = f.error;
      queue.stop();
    } catch (const Cancelled&) {
      if (slab) queue.handBack(*slab);
      std::lock_guard lock(mutex);
      if (!fatal) fatal = std::current_exception();
      queue.stop();
    } catch (const std::exception& e) {
      // The device failed: its slab goes to the others.
      if (slab) queue.handBack(*slab);
      std::lock_guard lock(mutex);
      report.failures.push_back(backend.deviceName() + ": " + e.what());
      deviceFailures.push_back(std::current_exception());
    }
  };
  std::vector<std::thread> threads;
  for (Backend* b : backends) threads.emplace_back(work, std::ref(*b));
  for (std::thread& t : threads) t.join();
  if (fatal) std::rethrow_exception(fatal);
  if (!queue.finished()) std::rethrow_exception(deviceFailures.front());
  return report;
}

}  // namespace stacklens::compute
