// The operations API: one interface, implemented by the CPU backend and (when built) the CUDA one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compute/block_transfers.h"
#include "compute/image.h"
#include "compute/job.h"
#include "compute/params.h"

namespace stacklens::compute {

// Thrown when a requested backend cannot be used (no CUDA build, no device, no driver).
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every operation accepts an input on the host or on this backend's device and returns its
// result where this backend computes (the CPU backend: host; CUDA: device). Use upload() /
// download() to move buffers; a pipeline that stays on one backend never copies to the host.
// 2D operations on a 3D stack apply slice by slice.
// One exception: CUDA's per-slice operations (median, outliers, 2D blur and Richardson-Lucy,
// resampling that keeps z) given a HOST stack stream it through the device in chunks and return
// the result on the host; download() accepts either.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;        // "cpu" or "cuda"
  virtual std::string deviceName() const = 0;  // CPU model, or GPU name and driver
  virtual int threads() const = 0;             // CPU threads used (1 for CUDA host work)

  virtual Image upload(const Image& image) = 0;    // to where this backend computes
  virtual Image download(const Image& image) = 0;  // to the host
  virtual LabelImage download(const LabelImage& labels) = 0;
  virtual void synchronize() = 0;  // wait for queued work (timing)
  // Device time of the last operation in ms as the device measured it (e.g. CUDA events), or a
  // negative value when this backend does not measure one (the CPU backend).
  virtual double lastDeviceMs() const { return -1.0; }
  // GPU memory the operations plan to use at most, in bytes (0 restores the default: 80 % of the
  // memory free when the backend started, or STACKLENS_CUDA_BUDGET_MB MiB when smaller); returns
  // the budget now in force (0 for a backend without one, e.g. the CPU).
  virtual size_t setMemoryBudget(size_t bytes) {
    (void)bytes;
    return 0;
  }
  // Chunks of slices the last per-slice operation on a host stack went through the device in (1:
  // one piece, or not chunked); for a device stack that did not fit whole, the groups of slices it
  // was split into.
  virtual int lastChunkCount() const { return 1; }
  // The most device memory this backend's operations have held at once, in bytes (CUDA: the
  // high-water mark of its memory pool; cuFFT's own plan memory is not in it); 0 for a backend
  // that computes on the host.
  virtual size_t devicePeakBytes() const { return 0; }

  // Live slices (compute/live_processor.h): transfers without a staging copy. The defaults suit a
  // backend that computes on the host.
  // A host buffer the backend can copy to and from directly (CUDA: page-locked memory, one DMA
  // per transfer). Allocating one is slow: keep and reuse them. Safe to call from any thread.
  virtual Image pinnedHost(Shape shape) { return Image::hostUninitialized(shape); }
  // Page-locks an existing host buffer (CUDA: cudaHostRegister) so that transfers to and from it
  // are one DMA, until unpinHostMemory(p); false when this backend has no such memory or it
  // failed (transfers then stage). Slow: for buffers that are kept and reused.
  virtual bool pinHostMemory(void* p, size_t bytes) {
    (void)p;
    (void)bytes;
    return false;
  }
  virtual void unpinHostMemory(void* p) { (void)p; }
  // Queues the copy of a host image to where this backend computes and returns at once; later
  // operations and synchronize() on this backend see the data. The source must stay unchanged
  // until then (the result keeps it alive). Without a page-locked source: upload().
  virtual Image uploadAsync(const Image& image) { return upload(image); }
  // Copies image (any location) into host, a host buffer of the same shape (e.g. from
  // pinnedHost()), and waits for the copy.
  virtual void downloadInto(const Image& image, Image& host);
  // Rows 0, step, 2·step, ... of image's slice z as a host image: a cheap sample of a device
  // result (display limits) without downloading all of it.
  virtual Image downloadRows(const Image& image, int64_t z, int64_t step);
  // Whether an operation that does not fit on the GPU even in pieces runs on the CPU instead
  // (the default, said through compute/log.h) or throws OutOfDeviceMemory (whole-stack runs plan
  // smaller blocks first). No effect on a backend that computes on the host.
  virtual void setCpuFallback(bool allowed) { (void)allowed; }
  // Whole-stack runs (compute/blocked/): copies that overlap this backend's computing. The
  // default suits a backend that computes on the host.
  virtual std::unique_ptr<BlockTransfers> blockTransfers() {
    return std::make_unique<HostBlockTransfers>();
  }
  // Makes the calling thread's work go to this backend's device (CUDA: cudaSetDevice); call it
  // first on a thread other than the one that made the backend. No effect on the host.
  virtual void bindToThisThread() {}

  virtual Image gaussianBlur(const Image& in, const BlurParams& p, const Job& job = {}) = 0;
  virtual Image richardsonLucy(const Image& in, const Image& psf, const DeconvolveParams& p,
                               const Job& job = {}) = 0;
  virtual ClipStats sigmaClip(const Image& in, const ClipParams& p, const Job& job = {}) = 0;
  virtual Segmentation segment(const Image& in, const SegmentParams& p, const Job& job = {}) = 0;
  virtual Image medianFilter(const Image& in, int size, const Job& job = {}) = 0;
  virtual Image removeOutliers(const Image& in, const OutlierParams& p, const Job& job = {}) = 0;
  virtual Image resample(const Image& in, const ResampleParams& p, const Job& job = {}) = 0;
  // Along z, into one slice (compute/params.h).
  virtual Image project(const Image& in, const ProjectParams& p, const Job& job = {}) = 0;
  virtual Image moment(const Image& in, const MomentParams& p, const Job& job = {}) = 0;
  // The volume seen from p's direction, into a 2D image of p.width × p.height (compute/params.h).
  // CUDA keeps a texture of the last volume it was given (a host or device image), so drawing
  // the same volume again uploads nothing.
  virtual Image renderVolume(const Image& volume, const VolumeRenderParams& p,
                             const Job& job = {}) = 0;
};

// threads == 0: all hardware threads.
std::unique_ptr<Backend> makeCpuBackend(int threads = 0);

// Throws BackendUnavailable with the reason when CUDA cannot be used. device: an index among the
// visible devices (CUDA_VISIBLE_DEVICES applies), default the first.
std::unique_ptr<Backend> makeCudaBackend(int device = 0);

// The CUDA devices this process can use (0 without a CUDA build, a driver or a device).
int cudaDeviceCount();

// Device memory made by others (e.g. a CuPy array, through __cuda_array_interface__): the
// device that holds ptr, or -1 when ptr is not device memory or there is no CUDA build.
int cudaDeviceOfPointer(const void* ptr);
// Waits for the work queued on another library's CUDA stream (a cudaStream_t as an integer;
// 1 and 2 name the legacy and per-thread default streams). No effect without a CUDA build.
void cudaWaitForStream(uintptr_t stream);

// True when the CUDA backend was built and a usable device is present; otherwise *why says why.
bool cudaUsable(std::string* why = nullptr);

// "cpu", "cuda" or "auto" (CUDA when usable, else CPU; *note says which and why).
std::unique_ptr<Backend> makeBackend(const std::string& name, std::string* note = nullptr);

// A Gaussian PSF of odd size (2·ceil(4σ)+1 per axis unless size is given), normalised to sum 1.
Image gaussianPsf(double sigmaZ, double sigmaY, double sigmaX, Shape size = {0, 0, 0});
// The same from the sigmas a user gives: one (every axis of a 3D PSF, or y and x of a 2D one)
// or three (z, y, x; z ignored for a 2D PSF). InvalidArgument says what is wrong.
Image gaussianPsfFromSigmas(const std::vector<double>& sigma, bool threeD);

}  // namespace stacklens::compute
