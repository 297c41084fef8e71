// The sweep loop (see sweep_runner.h). Timing follows `stacklens-cli bench`: one warm-up, then
// repeats of operation + synchronize(); the GPU's kernel time is the device clock when it has one.
#include "compute/lab/sweep_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "compute/backend.h"
#include "compute/bench/timing_summary.h"
#include "compute/lab/bandwidth.h"
#include "compute/lab/lab_ops.h"

namespace stacklens::compute::lab {
namespace {

using bench::summarize;
using bench::TimingSummary;

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The distinct CPU thread counts asked for, 0 resolved to the machine's count.
std::vector<int> resolvedThreads(const SweepSpec& spec, int all) {
  std::vector<int> out;
  for (int t : spec.threads) {
    const int r = t == 0 ? all : t;
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

int hardwareThreads() { return makeCpuBackend(0)->threads(); }

class Runner {
 public:
  Runner(const SweepSpec& spec, const SweepCallbacks& cb) : spec_(spec), cb_(cb) {}

  Sweep run() {
    auto allCpu = makeCpuBackend(0);
    sweep_.machine.cpu = allCpu->deviceName();
    sweep_.machine.cpuThreads = allCpu->threads();
    for (int t : resolvedThreads(spec_, allCpu->threads()))
      cpus_.push_back(Cpu{makeCpuBackend(t), 0});
    openGpu();
    if (cb_.machine) cb_.machine(sweep_.machine);
    total_ = plannedPoints(spec_, gpu_ != nullptr);
    try {
      checkCancel();
      for (auto& c : cpus_) c.bandwidth = measureMemoryBandwidth(*c.backend);
      if (gpu_) {
        gpuBandwidth_ = measureMemoryBandwidth(*gpu_);
        linkBandwidth_ = measureLinkBandwidth(*gpu_);
      }
      for (const auto& op : spec_.ops)
        for (int64_t n : spec_.sizes) measureSize(op, n);
    } catch (const Cancelled&) {
      sweep_.cancelled = true;
    }
    return std::move(sweep_);
  }

 private:
  struct Cpu {
    std::unique_ptr<Backend> backend;
    double bandwidth = 0;
  };

  void openGpu() {
    std::string why;
    if (!spec_.gpu) {
      sweep_.machine.note = "GPU not timed (asked for CPU only): CPU curves only";
    } else if (!cudaUsable(&why)) {
      sweep_.machine.note = "no usable GPU (" + why + "): CPU curves only";
    } else {
      gpu_ = makeCudaBackend();
      gpu_->device().timeOperations(true);  // the kernels' own time beside the wall's
      sweep_.machine.gpu = gpu_->deviceName();
    }
  }

  // Passed to the ops, so that a long one (Richardson–Lucy at a large size) stops mid-way.
  Job job() const { return Job(cb_.cancel); }

  void checkCancel() const {
    if (cb_.cancel && cb_.cancel->load()) throw Cancelled();
  }

  Point startPoint(const std::string& op, int64_t n, Shape s, Variant v, int threads) const {
    Point p;
    p.op = op;
    p.size = n;
    p.nz = s.z, p.ny = s.y, p.nx = s.x;
    p.variant = v;
    p.threads = threads;
    p.variantName = variantName(v, threads, sweep_.machine.cpuThreads);
    p.repeats = spec_.repeats;
    p.bytes = bytesMoved(op, s);
    p.maxRelDiff = kNaN;
    return p;
  }

  void setTimes(Point& p, const std::vector<double>& t) const {
    const TimingSummary s = summarize(t);
    p.medianS = s.median, p.minS = s.min, p.maxS = s.max, p.q1S = s.q1, p.q3S = s.q3;
  }

  void fail(Point& p, const std::exception& e) const {
    p.error = e.what();
    p.medianS = p.minS = p.maxS = p.q1S = p.q3S = kNaN;
  }

  void emit(Point p) {
    sweep_.points.push_back(p);
    if (cb_.point) cb_.point(p);
    if (cb_.progress) cb_.progress(int(sweep_.points.size()), total_);
  }

  void measureSize(const std::string& op, int64_t n) {
    checkCancel();
    const Shape shape = labShape(op, n);
    const Image input = labInput(op, shape, spec_.source);
    LabOutput reference;  // the CPU result with the most threads, for the GPU comparison
    int referenceThreads = 0;
    for (auto& c : cpus_) {
      Point p = startPoint(op, n, shape, Variant::Cpu, c.backend->threads());
      p.bandwidth = c.bandwidth;
      p.floorS = p.bytes / c.bandwidth;
      try {
        LabOutput out = runLabOp(op, *c.backend, input, job());  // warm-up
        std::vector<double> t;
        for (int i = 0; i < spec_.repeats; ++i) {
          checkCancel();
          const auto t0 = Clock::now();
          out = runLabOp(op, *c.backend, input, job());
          t.push_back(since(t0));
        }
        setTimes(p, t);
        if (c.backend->threads() >= referenceThreads) {
          reference = std::move(out);
          referenceThreads = c.backend->threads();
        }
      } catch (const Cancelled&) {
        throw;
      } catch (const std::exception& e) {
        fail(p, e);
      }
      emit(p);
    }
    if (gpu_) measureGpu(op, n, shape, input, reference);
  }

  void measureGpu(const std::string& op, int64_t n, Shape shape, const Image& input,
                  const LabOutput& reference) {
    Point kernel = startPoint(op, n, shape, Variant::GpuKernel, 0);
    Point whole = startPoint(op, n, shape, Variant::GpuWithTransfers, 0);
    kernel.bandwidth = whole.bandwidth = gpuBandwidth_;
    kernel.floorS = kernel.bytes / gpuBandwidth_;
    whole.floorS = kernel.floorS + bytesTransferred(op, shape) / linkBandwidth_;
    try {
      // The input page-locked, as the viewer's slices are (compute/pixel_pool.h): "with
      // transfers" is then the link's time, not a staging copy's.
      const PinnedWhileAlive pinned(gpu_->device(), input);
      const Image onDevice = gpu_->upload(input);
      LabOutput out =
          runLabOp(op, *gpu_, onDevice, job());  // warm-up: plans, pools, the download path
      downloadOutput(*gpu_, out);
      gpu_->synchronize();
      // The timed downloads land in this host buffer, touched by the warm-up's: a program keeps
      // its buffers (the viewer's pixel pool does), so the first-touch page faults of a new one
      // are not the link's time.
      Image hostOutput = out.image;
      std::vector<double> k, w, transfer;
      for (int i = 0; i < spec_.repeats; ++i) {
        checkCancel();
        auto t0 = Clock::now();
        LabOutput o = runLabOp(op, *gpu_, onDevice, job());
        gpu_->synchronize();
        const double wall = since(t0);
        const double deviceMs = gpu_->device().lastDeviceMs();
        k.push_back(deviceMs >= 0 ? deviceMs / 1e3 : wall);
      }
      for (int i = 0; i < spec_.repeats; ++i) {
        checkCancel();
        const auto t0 = Clock::now();
        const Image up = gpu_->upload(input);
        gpu_->synchronize();
        const double upload = since(t0);
        out = runLabOp(op, *gpu_, up, job());
        gpu_->synchronize();
        const auto d0 = Clock::now();
        downloadOutput(*gpu_, out, &hostOutput);
        gpu_->synchronize();
        transfer.push_back(upload + since(d0));
        w.push_back(since(t0));
      }
      setTimes(kernel, k);
      setTimes(whole, w);
      whole.transferS = summarize(transfer).median;
      kernel.maxRelDiff = whole.maxRelDiff = maxRelativeDifference(out, reference);
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      fail(kernel, e);
      fail(whole, e);
    }
    emit(kernel);
    emit(whole);
  }

  const SweepSpec& spec_;
  const SweepCallbacks& cb_;
  Sweep sweep_;
  std::vector<Cpu> cpus_;
  std::unique_ptr<Backend> gpu_;
  double gpuBandwidth_ = 0, linkBandwidth_ = 0;
  int total_ = 0;
};

}  // namespace

int plannedPoints(const SweepSpec& spec, bool withGpu) {
  const int variants = int(resolvedThreads(spec, hardwareThreads()).size()) + (withGpu ? 2 : 0);
  return int(spec.ops.size() * spec.sizes.size()) * variants;
}

Sweep runSweep(const SweepSpec& spec, const SweepCallbacks& callbacks) {
  validate(spec);
  return Runner(spec, callbacks).run();
}

}  // namespace stacklens::compute::lab
