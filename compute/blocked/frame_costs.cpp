// The cost of 3D Richardson–Lucy per frame voxel on each backend: tuning data for block
// planning, from the per-frame benchmark (`stacklens-cuda-bench rl3d_frame=ZxYxX`, figures in
// compute/BENCHMARKS.md). The planner compares frames by these rates, so only their ratio to each
// other matters for the choice; the absolute values give the plan's expected time.
#include "compute/blocked/block_plan.h"

namespace stacklens::compute {
namespace {

bool powerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

struct Rates {
  size_t bytes, fastBytes;  // Richardson–Lucy's own arrays per frame voxel: smooth, fast frames
  double ns, fastNs;        // per voxel and iteration: smooth frames, fast frames
  int64_t fastMin, fastMax;
};

// CPU (FFTW): image, estimate, work (4 B each), spectrum and OTF (about 4 B each). CUDA adds
// cuFFT's work area; its fused passes (compute/cuda/cuda_rl_fused.cu) take power-of-two frames
// with image, estimate, spectrum and OTF only (and, while the OTF is made, the PSF placed in a
// frame), at a bit more than half the cost of cuFFT's 2, 3-smooth lengths (NVIDIA H100).
constexpr Rates kCpu{20, 20, 10.0, 0.0, 0, 0};
constexpr Rates kCuda{28, 20, 0.070, 0.040, 64, 4096};

}  // namespace

bool FrameCosts::fast(Shape f) const {
  if (fastNsPerVoxelIteration <= 0) return false;
  auto ok = [&](int64_t n) { return powerOfTwo(n) && n >= fastMin && n <= fastMax; };
  return (f.z == 1 || ok(f.z)) && ok(f.y) && f.x % 2 == 0 && ok(f.x / 2);
}

size_t FrameCosts::bytes(Shape f) const {
  return size_t(f.count()) * (fast(f) ? fastBytesPerVoxel : bytesPerVoxel);
}

double FrameCosts::secondsPerIteration(Shape f) const {
  return double(f.count()) * (fast(f) ? fastNsPerVoxelIteration : nsPerVoxelIteration) * 1e-9;
}

FrameCosts frameCosts(const std::string& backend, const DeconvolveParams& p) {
  const Rates& r = backend == "cuda" ? kCuda : kCpu;
  FrameCosts c;
  c.backend = backend;
  // Acceleration keeps three more arrays, TV one; a blocked run holds two frames (one being
  // filled while the other is deconvolved) and two results (one being written).
  size_t extra = 4 * 4;
  if (p.tvLambda > 0) extra += 4;
  if (p.accelerate) extra += 4 * 3;
  c.bytesPerVoxel = r.bytes + extra;
  c.fastBytesPerVoxel = r.fastBytes + extra;
  c.nsPerVoxelIteration = r.ns;
  c.fastNsPerVoxelIteration = r.fastNs;
  c.fastMin = r.fastMin;
  c.fastMax = r.fastMax;
  return c;
}

}  // namespace stacklens::compute
