// The cost of 3D Richardson–Lucy per frame voxel on each backend: tuning data for block
// planning, from the per-frame benchmark (`stacklens-cuda-bench rl3d_frame=ZxYxX`, figures in
// compute/BENCHMARKS.md). The planner compares frames by these rates, so only their ratio to each
// other matters for the choice; the absolute values give the plan's expected time.
#include "compute/blocked/block_plan.h"

#include <algorithm>

#include "compute/rl_frame.h"

namespace stacklens::compute {
namespace {

bool powerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

struct Rates {
  size_t bytes, fastBytes;  // Richardson–Lucy's own arrays per frame voxel: smooth, fast frames
  double ns, fastNs, mixedNs;  // per voxel and iteration: smooth, fast (powers of two), fast with
                               // a mixed length on some axis
  int64_t fastMin, fastMax;
};

// CPU (FFTW): image, estimate, work (4 B each), spectrum and OTF (about 4 B each). CUDA adds
// cuFFT's work area; its fused passes (compute/cuda/cuda_rl_fused.cu) take power-of-two frames
// with image, estimate, spectrum and OTF only (and, while the OTF is made, the PSF placed in a
// frame), at a bit more than half the cost of cuFFT's 2, 3-smooth lengths (the per-frame table
// in compute/BENCHMARKS.md); the same passes take the mixed lengths of compute/rl_frame.h
// (1152 = 24 · 24 · 2, ...).
constexpr Rates kCpu{20, 20, 10.0, 0.0, 0.0, 0, 0};
constexpr Rates kCuda{28, 20, 0.070, 0.040, 0.043, 64, 4096};

}  // namespace

bool FrameCosts::fast(Shape f) const {
  if (fastNsPerVoxelIteration <= 0) return false;
  auto ok = [&](int64_t n) { return powerOfTwo(n) && n >= fastMin && n <= fastMax; };
  // Powers of two as before, and the mixed lengths of compute/rl_frame.h on every axis.
  auto mixed = [](int64_t n) { return !powerOfTwo(n) && isFastFrameLength(n); };
  auto axis = [&](int64_t n) { return ok(n) || mixed(n); };
  return (f.z == 1 || axis(f.z)) && axis(f.y) && f.x % 2 == 0 && (ok(f.x / 2) || mixed(f.x));
}

size_t FrameCosts::bytes(Shape f) const {
  return size_t(f.count()) * (fast(f) ? fastBytesPerVoxel : bytesPerVoxel);
}

double FrameCosts::secondsPerIteration(Shape f) const {
  const bool mixed = !powerOfTwo(f.y) || !powerOfTwo(f.x) || (f.z > 1 && !powerOfTwo(f.z));
  const double ns = !fast(f) ? nsPerVoxelIteration
                    : mixed  ? mixedNsPerVoxelIteration
                             : fastNsPerVoxelIteration;
  return double(f.count()) * ns * 1e-9;
}

double FrameCosts::leastSecondsPerVoxel() const {
  double least = nsPerVoxelIteration;
  for (double ns : {fastNsPerVoxelIteration, mixedNsPerVoxelIteration})
    if (ns > 0) least = std::min(least, ns);
  return least * 1e-9;
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
  // CUDA's reflect-exact frames make their transfer pairs from the PSF itself (no PSF placed in a
  // frame) and hand back their observed array as the result (no result array of their own).
  const size_t saved = backend == "cuda" && p.boundary == Boundary::ReflectExact ? 4 + 4 : 0;
  c.bytesPerVoxel = r.bytes + extra - saved;
  c.fastBytesPerVoxel = r.fastBytes + extra - saved;
  c.nsPerVoxelIteration = r.ns;
  c.fastNsPerVoxelIteration = r.fastNs;
  c.mixedNsPerVoxelIteration = r.mixedNs;
  c.fastMin = r.fastMin;
  c.fastMax = r.fastMax;
  return c;
}

}  // namespace stacklens::compute
