// The bytes a benchmark workload cannot avoid moving through memory: the physical floors that
// compute/cuda/bench/cuda_bench_main.cpp and `stacklens-cli bench --backend cpu` divide by their
// machine's copy bandwidth. One place, so that both report the same floor for the same work.
#pragma once

#include <cstdint>

namespace stacklens::compute::bench {

// One read and one write of every value (a fused filter's traffic: blur, median, segmentation).
inline double readWriteBytes(double values) { return 2 * 4.0 * values; }

// Sigma clipping to convergence: one read of every value for the first statistics, then one
// read of the finite values per iteration (taken as all of them).
inline double sigmaClipBytes(double values, int iterations) {
  return (iterations + 1) * 4.0 * values;
}

// Resampling: the input read once, the output written once.
inline double resampleBytes(double inputValues, double outputValues) {
  return 4.0 * (inputValues + outputValues);
}

// Richardson–Lucy: the bytes the fused CUDA passes (compute/cuda/cuda_rl_fused.cuh) cannot avoid,
// each array read or written once per pass. Per iteration: two last-axis passes (spectrum read
// and written, the OTF read: 4 bytes per value when it is real, 8 when complex), the ratio row
// pass (spectrum read and written, observed read), the update row pass (spectrum read and
// written, estimate read and written); in 3D also four y passes (spectrum read and written).
// frameValues: the real values of the padded frame (all frames together).
inline double rlBytes(double frameValues, int iterations, bool threeD, bool realOtf) {
  const double nc = frameValues / 2;  // complex values of an R2C spectrum, ≈ n/2
  const double spectrum = 16 * nc;    // read and written
  const double lastAxis = 2 * (spectrum + (realOtf ? 4 : 8) * nc);
  const double rows = (spectrum + 4 * frameValues) + (spectrum + 8 * frameValues);
  return iterations * (lastAxis + rows + (threeD ? 4 * spectrum : 0));
}

}  // namespace stacklens::compute::bench
