// The operations API: one interface, implemented by the CPU backend and (when built) the CUDA one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compute/block_transfers.h"
#include "compute/device_control.h"
#include "compute/image.h"
#include "compute/job.h"
#include "compute/params.h"
#include "compute/resident_frames.h"

namespace stacklens::compute {

// Thrown when a requested backend cannot be used (no CUDA build, no device, no driver).
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every operation accepts an input on the host or on this backend's device and returns its
// result where the job asks (compute/job.h): by default where this backend computes (the CPU
// backend: host; CUDA: the device), or in host memory with Job::onHost(). Use upload() /
// download() to move buffers; a pipeline that stays on one backend never copies to the host.
// 2D operations on a 3D stack apply slice by slice.
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
  // Device bookkeeping and transfers that overlap computing (compute/device_control.h), for the
  // live path, the whole-stack runs and the timing panel; a backend that computes on the host
  // has the defaults.
  virtual DeviceControl& device() { return hostDeviceControl(); }

  virtual Image gaussianBlur(const Image& in, const BlurParams& p, const Job& job = {}) = 0;
  virtual Image richardsonLucy(const Image& in, const Image& psf, const DeconvolveParams& p,
                               const Job& job = {}) = 0;
  // Frames for blocks that exchange halos where this backend computes (compute/resident_frames.h),
  // stepping with p (periodic over each frame) and psf as rlPsf gives it; null where the backend
  // keeps none of this shape. Throws OutOfDeviceMemory when they do not fit.
  virtual std::unique_ptr<ResidentRlFrames> residentRlFrames(const ResidentLayout& layout,
                                                             const Image& psf,
                                                             const DeconvolveParams& p) {
    (void)layout, (void)psf, (void)p;
    return nullptr;
  }
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
// Waits for the work queued on another library's CUDA stream of device (a cudaStream_t as an
// integer; 1 and 2 name that device's legacy and per-thread default streams, which exist once per
// device). The calling thread's current device is left as it was. No effect without a CUDA build.
void cudaWaitForStream(uintptr_t stream, int device);
// Waits for everything queued on device by anyone (e.g. CuPy kernels still reading a buffer
// about to be freed), leaving the current device as it was. Does not throw: an error shows at
// the next call. No effect without a CUDA build or for a device < 0.
void cudaSynchronizeDevice(int device);
// The calling thread's current CUDA device (-1 without a CUDA build or device), and making one
// current: callers from another library (Python) get their own current device back.
int cudaCurrentDevice();
void cudaSetCurrentDevice(int device);
// Bytes of device memory in use on device by every process (total − free), for watching a long
// session's memory; −1 without a CUDA build or when the device cannot be asked.
int64_t cudaDeviceBytesInUse(int device);

// True when the CUDA backend was built and a usable device is present; otherwise *why says why.
bool cudaUsable(std::string* why = nullptr);

// "cpu", "cuda" or "auto" (CUDA when usable, else CPU; *note says which and why).
std::unique_ptr<Backend> makeBackend(const std::string& name, std::string* note = nullptr);

// A Gaussian PSF of odd size (2·ceil(4σ)+1 per axis unless size is given), normalised to sum 1;
// InvalidArgument for σ beyond 512 pixels or more than 2^26 values, before allocating.
Image gaussianPsf(double sigmaZ, double sigmaY, double sigmaX, Shape size = {0, 0, 0});
// The shape gaussianPsf gives for these arguments, with the same checks, without building it.
Shape gaussianPsfShape(double sigmaZ, double sigmaY, double sigmaX, Shape size = {0, 0, 0});
// The same from the sigmas a user gives: one (every axis of a 3D PSF, or y and x of a 2D one)
// or three (z, y, x; z ignored for a 2D PSF). InvalidArgument says what is wrong.
Image gaussianPsfFromSigmas(const std::vector<double>& sigma, bool threeD);

}  // namespace stacklens::compute
