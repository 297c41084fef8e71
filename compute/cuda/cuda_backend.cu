// The CUDA backend: device detection, buffers on the device, and the fall-back to the CPU when
// the device runs out of memory.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "compute/backend.h"
#include "compute/cuda/host/cuda_band_pipeline.cuh"
#include "compute/cuda/host/cuda_block_transfers.cuh"
#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/host/cuda_live_transfers.cuh"
#include "compute/cuda/host/cuda_stack_pipeline.cuh"
#include "compute/cuda/host/cufft_loader.h"
#include "compute/cuda/host/host_result_memory.cuh"
#include "compute/device_list.h"
#include "compute/log.h"

namespace stacklens::compute {
namespace {

__global__ void probeKernel(int* out) {
  if (out) *out = 1;
}

class CudaBackend final : public Backend, public DeviceControl {
 public:
  CudaBackend() : ctx_(std::make_shared<cuda::Context>()) {
    SL_CUDA(cudaEventCreate(&opStart_));
    SL_CUDA(cudaEventCreate(&opStop_));
    SL_CUDA(cudaEventCreateWithFlags(&opDone_, cudaEventDisableTiming));
    SL_CUDA(cudaStreamCreateWithFlags(&stopStream_, cudaStreamNonBlocking));
    warmUp();
  }
  ~CudaBackend() override {
    cudaStreamSynchronize(stopStream_);
    cudaStreamDestroy(stopStream_);
    cudaEventDestroy(opStart_);
    cudaEventDestroy(opStop_);
    cudaEventDestroy(opDone_);
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  std::string deviceName() const override { return ctx_->name(); }
  DeviceControl& device() override { return *this; }
  void bindToThisThread() override { SL_CUDA(cudaSetDevice(ctx_->device())); }
  int threads() const override { return 1; }

  Image upload(const Image& image) override { return cuda::onDevice(ctx_, image); }
  Image download(const Image& image) override { return downloadAny(image); }
  LabelImage download(const LabelImage& labels) override { return downloadAny(labels); }
  void synchronize() override { ctx_->waitFor(ctx_->stream()); }
  // The stream time between two events recorded around the last operation's device work (its
  // kernels, copies and any wait for a host read-back in between); waits for it to finish.
  double lastDeviceMs() const override {
    if (!timed_) return -1.0;
    float ms = 0.f;
    try {
      ctx_->waitFor(opStop_);
    } catch (const std::exception&) {
      cudaGetLastError();
      return -1.0;
    }
    if (cudaEventElapsedTime(&ms, opStart_, opStop_) != cudaSuccess) {
      cudaGetLastError();
      return -1.0;
    }
    return ms;
  }
  void timeOperations(bool on) override { timeOperations_ = on; }
  size_t setMemoryBudget(size_t bytes) override { return ctx_->setBudget(bytes); }
  int lastChunkCount() const override { return lastChunks_; }
  size_t devicePeakBytes() const override { return ctx_->peakBytes(); }
  bool pinHostMemory(void* p, size_t bytes) override { return cuda::pinHostMemory(p, bytes); }
  void unpinHostMemory(void* p) override { cuda::unpinHostMemory(p); }
  Image uploadAsync(const Image& image) override { return cuda::uploadAsync(ctx_, image); }
  void downloadInto(const Image& image, Image& host) override {
    cuda::downloadInto(ctx_, image, host);
  }
  Image stackSlices(const std::vector<Image>& slices) override {
    return cuda::stackSlices(ctx_, slices);
  }
  void setCpuFallback(bool allowed) override { cpuFallbackAllowed_ = allowed; }
  std::unique_ptr<BlockTransfers> blockTransfers() override {
    return cuda::makeBlockTransfers(ctx_);
  }
  Image downloadRows(const Image& image, int64_t z, int64_t step) override {
    return cuda::downloadRows(ctx_, image, z, step);
  }

  // The per-slice operations (2D blur and Richardson-Lucy, median, outliers, resampling in y and
  // x) on a host stack go through the chunked pipeline; everything else as before.
  Image gaussianBlur(const Image& in, const BlurParams& p, const Job& job) override {
    const bool twoD = p.sigmaZ <= 0;
    // Output, plus one scratch array (three float2 arrays when NaN-aware).
    cuda::SliceWork work{p.nanAware ? size_t(28) : size_t(8), 0};
    return placed(job, sliceWise(
                           "gaussian blur", in, twoD, work, job,
                           [&](const Image& part, const Job& sub) {
                             return cuda::gaussianBlur(ctx_, part, p, sub);
                           },
                           [&](Backend& cpu) { return cpu.gaussianBlur(download(in), p, job); },
                           twoD ? blurRadius(p.sigmaY, p.truncate) : -1));
  }
  Image richardsonLucy(const Image& in, const Image& psf, const DeconvolveParams& p,
                       const Job& job) override {
    const bool twoD = !p.threeD && everySliceHasFiniteValue(in);
    // The output per voxel; per chunk the solver's arrays for one slice's FFT frame.
    cuda::SliceWork work{4, cuda::richardsonLucySliceBytes(in.shape(), psf.shape(), p)};
    return placed(job, sliceWise(
                           "Richardson-Lucy", in, twoD, work, job,
                           [&](const Image& part, const Job& sub) {
                             return cuda::richardsonLucy(ctx_, part, psf, p, sub);
                           },
                           [&](Backend& cpu) {
                             return cpu.richardsonLucy(download(in), download(psf), p, job);
                           }));
  }
  std::unique_ptr<ResidentRlFrames> residentRlFrames(const ResidentLayout& layout, const Image& psf,
                                                     const DeconvolveParams& p) override {
    return cuda::residentFrames(ctx_, layout, psf, p);
  }
  ClipStats sigmaClip(const Image& in, const ClipParams& p, const Job& job) override {
    lastChunks_ = 1;
    return guarded(
        "sigma clipping", [&] { return cuda::sigmaClip(ctx_, in, p, job); },
        [&](Backend& cpu) { return cpu.sigmaClip(download(in), p, job); });
  }
  Segmentation segment(const Image& in, const SegmentParams& p, const Job& job) override {
    lastChunks_ = 1;
    Segmentation s = guarded(
        "segmentation", [&] { return cuda::segment(ctx_, in, p, job); },
        [&](Backend& cpu) { return cpu.segment(download(in), p, job); });
    s.labels = placedLabels(job, std::move(s.labels));
    return s;
  }
  Image medianFilter(const Image& in, int size, const Job& job) override {
    return placed(job, sliceWise(
                           "median filter", in, true, cuda::SliceWork{4, 0}, job,
                           [&](const Image& part, const Job& sub) {
                             return cuda::medianFilter(ctx_, part, size, sub);
                           },
                           [&](Backend& cpu) { return cpu.medianFilter(download(in), size, job); },
                           size / 2));
  }
  Image removeOutliers(const Image& in, const OutlierParams& p, const Job& job) override {
    return placed(job, sliceWise(
                           "outlier removal", in, true, cuda::SliceWork{4, 0}, job,
                           [&](const Image& part, const Job& sub) {
                             return cuda::removeOutliers(ctx_, part, p, sub);
                           },
                           [&](Backend& cpu) { return cpu.removeOutliers(download(in), p, job); },
                           p.size / 2));
  }
  Image resample(const Image& in, const ResampleParams& p, const Job& job) override {
    // Per slice when the z axis keeps its length (the operation then leaves it untouched).
    const int64_t z = in.shape().z;
    const bool perSlice = in.onHost() && !in.empty() && std::isfinite(p.zoomZ) && p.zoomZ > 0 &&
                          static_cast<int64_t>(std::nearbyint(double(z) * p.zoomZ)) == z;
    if (!perSlice || !cuda::pipelineEnabled()) {
      lastChunks_ = 1;
      return placed(job, guarded(
                             "resampling", [&] { return cuda::resample(ctx_, in, p, job); },
                             [&](Backend& cpu) { return cpu.resample(download(in), p, job); }));
    }
    ResampleParams inPlane = p;
    inPlane.zoomZ = 1.0;
    // The output, the intermediate after the first axis and the spline coefficients.
    const double grow = std::max(1.0, p.zoomY) * std::max(1.0, p.zoomX);
    cuda::SliceWork work{size_t(4 + 12 * std::ceil(grow)), 0};
    Image out = sliceWise(
        "resampling", in, true, work, job,
        [&](const Image& part, const Job& sub) { return cuda::resample(ctx_, part, inPlane, sub); },
        [&](Backend& cpu) { return cpu.resample(download(in), p, job); });
    if (!out.empty()) out.spacing.z = in.spacing.z / p.zoomZ;
    return placed(job, std::move(out));
  }
  Image project(const Image& in, const ProjectParams& p, const Job& job) override {
    lastChunks_ = 1;
    return placed(job, guarded(
                           "projection", [&] { return cuda::project(ctx_, in, p, job); },
                           [&](Backend& cpu) { return cpu.project(download(in), p, job); }));
  }
  Image moment(const Image& in, const MomentParams& p, const Job& job) override {
    lastChunks_ = 1;
    return placed(job, guarded(
                           "moments", [&] { return cuda::moment(ctx_, in, p, job); },
                           [&](Backend& cpu) { return cpu.moment(download(in), p, job); }));
  }
  Image renderVolume(const Image& volume, const VolumeRenderParams& p, const Job& job) override {
    lastChunks_ = 1;
    return placed(job,
                  guarded(
                      "volume rendering", [&] { return cuda::renderVolume(ctx_, volume, p, job); },
                      [&](Backend& cpu) { return cpu.renderVolume(download(volume), p, job); }));
  }

 private:
  // Creates the stream, pool and cuFFT's kernels now, so that the first real call is not slow.
  void warmUp() {
    probeKernel<<<1, 1, 0, ctx_->stream()>>>(nullptr);
    SL_LAUNCHED();
    ctx_->fftPlans(1, 64, 64);
    SL_CUDA(cudaStreamSynchronize(ctx_->stream()));
  }

  template <class T>
  Buffer<T> downloadAny(const Buffer<T>& in) {
    if (in.onHost()) return in;
    // Written in full by the copy: recycled memory, neither zero-filled nor faulted in afresh.
    Buffer<T> out = cuda::hostResult<T>(in.shape());
    out.spacing = in.spacing;
    if (in.bytes()) ctx_->download(out.data(), in.data(), in.bytes());
    return out;
  }

  // The result where the job asks: in host memory, or on the device. A result the CPU fallback or
  // the slice groups left on the host is uploaded; when the device cannot hold it either, it
  // stays on the host and the log says so (or OutOfDeviceMemory, with the CPU fallback off).
  Image placed(const Job& job, Image out) {
    if (job.resultPlace() == ResultPlace::Host) return downloadAny(out);
    if (!out.onHost()) return out;
    try {
      return cuda::onDevice(ctx_, out);
    } catch (const cuda::DeviceOutOfMemory& e) {
      return keptOnHost(std::move(out), e);
    }
  }
  LabelImage placedLabels(const Job& job, LabelImage labels) {
    if (job.resultPlace() == ResultPlace::Host) return downloadAny(labels);
    if (!labels.onHost()) return labels;
    try {
      LabelImage out = cuda::deviceBuffer<int32_t>(ctx_, labels.shape());
      out.spacing = labels.spacing;
      if (labels.bytes()) ctx_->upload(out.data(), labels.data(), labels.bytes());
      return out;
    } catch (const cuda::DeviceOutOfMemory& e) {
      return keptOnHost(std::move(labels), e);
    }
  }
  template <class T>
  Buffer<T> keptOnHost(Buffer<T> result, const cuda::DeviceOutOfMemory& e) {
    const std::string why = std::string("the result does not fit on the GPU (") + e.what() + ")";
    if (!cpuFallbackAllowed_) throw OutOfDeviceMemory(why);
    logMessage(LogLevel::Warning, why + "; it stays in host memory");
    return result;
  }

  // Runs the device version; when the device cannot hold the work even in pieces, logs why and
  // runs the CPU backend instead (placed() then moves its result where the job asks).
  template <class Gpu, class Cpu>
  auto guarded(const char* what, Gpu gpu, Cpu cpu) -> decltype(gpu()) {
    try {
      return timed(gpu);
    } catch (const cuda::DeviceOutOfMemory& e) {
      return fallBack(what, e.what(), cpu);
    }
  }

  // Runs f between the two timing events when operations are timed (an operation that throws, or
  // an untimed one, leaves no figure). The stop event is recorded on a stream of its own once the
  // operation's work is done: on the operation's stream, writing its timestamp would hold back
  // that stream's completion, and so every synchronize() after an operation.
  template <class F>
  auto timed(F f) -> decltype(f()) {
    timed_ = false;
    if (!timeOperations_) return f();
    SL_CUDA(cudaEventRecord(opStart_, ctx_->stream()));
    auto result = f();
    SL_CUDA(cudaEventRecord(opDone_, ctx_->stream()));
    SL_CUDA(cudaStreamWaitEvent(stopStream_, opDone_, 0));
    SL_CUDA(cudaEventRecord(opStop_, stopStream_));
    timed_ = true;
    return result;
  }

  // For operations that work slice by slice: when the whole stack does not fit, retries on
  // groups of slices (halving the group until it fits; results gathered on the host), and only
  // then falls back to the CPU.
  template <class Gpu, class Cpu>
  Image guardedSlices(const char* what, const Image& in, bool sliceWise, Gpu gpu, Cpu cpu) {
    try {
      return timed([&] { return gpu(in); });
    } catch (const cuda::DeviceOutOfMemory& e) {
      if (!sliceWise || in.shape().z < 2) return fallBack(what, e.what(), cpu);
      logMessage(LogLevel::Info, std::string(what) + " does not fit on the GPU in one piece (" +
                                     e.what() + "); splitting the stack into groups of slices");
      try {
        return inSliceGroups(in, gpu);
      } catch (const cuda::DeviceOutOfMemory& again) {
        return fallBack(what, again.what(), cpu);
      }
    }
  }

  // A per-slice operation: a host stack whose result the job wants on the host goes through the
  // device in planned, overlapped chunks; otherwise the stack goes whole, then in halving slice
  // groups, then to the CPU. A filter whose outputs read only `bandHalo` rows either side (-1: not
  // such a filter) takes a single large host image in bands of rows instead.
  template <class Gpu, class Cpu>
  Image sliceWise(const char* what, const Image& in, bool perSlice, cuda::SliceWork work,
                  const Job& job, Gpu gpu, Cpu cpu, int64_t bandHalo = -1) {
    lastChunks_ = 1;
    if (!in.onHost() || in.empty() || !perSlice || !cuda::pipelineEnabled() ||
        job.resultPlace() != ResultPlace::Host)
      return guardedSlices(
          what, in, perSlice, [&](const Image& part) { return gpu(part, job); }, cpu);
    try {
      cuda::PipelineRun run = timed([&] {
        const cuda::SliceOp op = [&](const Image& part, const Job& sub) { return gpu(part, sub); };
        if (bandHalo >= 0 && cuda::bandsPay(*ctx_, in, bandHalo, work))
          return cuda::pipelineRowBands(ctx_, in, bandHalo, op, job);
        return cuda::pipelineSlices(ctx_, what, in, work, op, job);
      });
      lastChunks_ = run.chunks;
      return run.result;
    } catch (const cuda::DeviceOutOfMemory& e) {
      return fallBack(what, e.what(), cpu);
    }
  }

  // Richardson-Lucy refuses an input without a finite value: a chunk of all-NaN slices must not
  // fail where the whole stack would not (those stacks go whole).
  static bool everySliceHasFiniteValue(const Image& in) {
    if (!in.onHost()) return true;
    const int64_t n = in.shape().sliceCount();
    for (int64_t z = 0; z < in.shape().z; ++z) {
      const float* p = in.slice(z);
      if (std::none_of(p, p + n, [](float v) { return std::isfinite(v); })) return false;
    }
    return true;
  }

  template <class Gpu>
  Image inSliceGroups(const Image& input, Gpu gpu) {
    const Shape s = input.shape();
    Image in = downloadAny(input);
    Image out = Image::host(s);
    out.spacing = in.spacing;
    int64_t group = (s.z + 1) / 2;
    int groups = 0;
    for (int64_t z0 = 0; z0 < s.z;) {
      int64_t g = std::min(group, s.z - z0);
      Image part(Shape{g, s.y, s.x}, Location::Host,
                 std::shared_ptr<float>(in.data() + z0 * s.sliceCount(), [keep = in](float*) {}));
      part.spacing = in.spacing;
      try {
        Image r = downloadAny(gpu(part));
        std::copy(r.data(), r.data() + r.shape().count(), out.data() + z0 * s.sliceCount());
        z0 += g;
        ++groups;
      } catch (const cuda::DeviceOutOfMemory&) {
        if (g == 1) throw;
        group = (g + 1) / 2;
      }
    }
    lastChunks_ = groups;  // what lastChunkCount() reports for a split device stack
    return out;
  }

  template <class Cpu>
  auto fallBack(const char* what, const char* why, Cpu cpu) {
    if (!cpuFallbackAllowed_)
      throw OutOfDeviceMemory(std::string(what) + " does not fit on the GPU (" + why + ")");
    logMessage(LogLevel::Warning,
               std::string(what) + " does not fit on the GPU (" + why + "); running it on the CPU");
    if (!cpuFallback_) cpuFallback_ = makeCpuBackend();
    return cpu(*cpuFallback_);
  }

  cuda::ContextPtr ctx_;
  std::unique_ptr<Backend> cpuFallback_;
  bool cpuFallbackAllowed_ = true;
  cudaEvent_t opStart_ = nullptr, opStop_ = nullptr;
  cudaEvent_t opDone_ = nullptr;       // the operation's work done (untimed: no timestamp)
  cudaStream_t stopStream_ = nullptr;  // where opStop_ waits for opDone_
  bool timed_ = false;  // the events hold the last operation (not a split or CPU fall-back)
  bool timeOperations_ = false;  // timeOperations()
  int lastChunks_ = 1;
};

}  // namespace

namespace {

// Why cudaGetDeviceCount failed, in words a user can act on: the runtime reports a missing
// driver as "CUDA driver version is insufficient", which reads like an old driver.
std::string driverProblem(cudaError_t err) {
  void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) return "no NVIDIA driver found";
  ::dlclose(driver);
  if (err == cudaErrorInsufficientDriver) {
    int driverVersion = 0, runtimeVersion = 0;
    cudaDriverGetVersion(&driverVersion);
    cudaRuntimeGetVersion(&runtimeVersion);
    auto text = [](int v) {
      return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    };
    return "the NVIDIA driver supports CUDA " + text(driverVersion) + " but this build needs " +
           text(runtimeVersion) + "; update the driver";
  }
  if (err == cudaErrorNoDevice) return "no NVIDIA GPU found";
  return std::string("no usable CUDA device: ") + cudaGetErrorString(err);
}

}  // namespace

bool cudaUsable(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = driverProblem(err);
    cudaGetLastError();  // clear the error
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device found";
    return false;
  }
  // The kernels are compiled ahead of time for sm_80 and newer: make sure this device can run them.
  cudaFuncAttributes attr{};
  err = cudaFuncGetAttributes(&attr, probeKernel);
  if (err != cudaSuccess) {
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    if (why)
      *why = std::string("the CUDA device ") + prop.name + " (sm_" + std::to_string(prop.major) +
             std::to_string(prop.minor) +
             ") cannot run this build's kernels: " + cudaGetErrorString(err);
    cudaGetLastError();
    return false;
  }
  return cuda::cufftLoaded(why);
}

int cudaDeviceCount() {
  if (!cudaUsable()) return 0;
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

int cudaDeviceOfPointer(const void* ptr) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
}

void cudaWaitForStream(uintptr_t stream, int device) {
  // The default streams are per device: the legacy one of the current device is not the array's.
  const cuda::ScopedDevice on(device);
  const cudaStream_t s = stream == 1   ? cudaStreamLegacy
                         : stream == 2 ? cudaStreamPerThread
                                       : reinterpret_cast<cudaStream_t>(stream);
  SL_CUDA(cudaStreamSynchronize(s));
}

void cudaSynchronizeDevice(int device) {
  if (device < 0) return;
  const cuda::ScopedDevice on(device);
  // Called where buffers are let go (destructors): an error there would surface at the next call.
  cudaDeviceSynchronize();
}

int cudaCurrentDevice() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return device;
}

void cudaSetCurrentDevice(int device) {
  if (device >= 0) SL_CUDA(cudaSetDevice(device));
}

int64_t cudaDeviceBytesInUse(int device) {
  if (device < 0 || !cudaUsable()) return -1;
  const cuda::ScopedDevice on(device);
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return static_cast<int64_t>(total - free);
}

std::vector<std::string> cudaDeviceNames() {
  std::vector<std::string> names;
  const int count = cudaDeviceCount();
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
      cudaGetLastError();
      prop = {};
    }
    names.push_back(prop.name[0] ? std::string(prop.name) : "GPU " + std::to_string(d));
  }
  return names;
}

std::unique_ptr<Backend> makeCudaBackend(int device) {
  std::string why;
  if (!cudaUsable(&why)) throw BackendUnavailable(why);
  const int count = cudaDeviceCount();
  if (device < 0 || device >= count)
    throw BackendUnavailable("there is no CUDA device " + std::to_string(device) + " (" +
                             std::to_string(count) + " visible)");
  try {
    // The context is made on the device current when it is constructed.
    SL_CUDA(cudaSetDevice(device));
    return std::make_unique<CudaBackend>();
  } catch (const std::exception& e) {
    throw BackendUnavailable(std::string("cannot start the CUDA backend: ") + e.what());
  }
}

}  // namespace stacklens::compute
