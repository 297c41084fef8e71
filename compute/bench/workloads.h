// The benchmark workloads of `stacklens-cli bench` (names and sizes as in
// shared/docs/benchmarks.md), generic over a Backend and Qt-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compute/backend.h"

namespace stacklens::compute::bench {

struct Result {
  std::string workload;
  std::string backend;
  std::vector<int64_t> shape;
  double minSeconds = 0, medianSeconds = 0;
  int threads = 0;
  std::string device;
  // Filled in for backends that copy (CUDA); median_s then covers the operation and
  // synchronize() only, never the copies. kernel: the backend's own device time
  // (Backend::lastDeviceMs, CUDA events) when it measures one, else median_s; transfer: upload +
  // download of input and result; inclusive: the operation called on the host input, host float32
  // in → host float32 out, as the backend does it (its copies may overlap its computation).
  std::optional<double> kernelMedianSeconds, transferMedianSeconds, inclusiveMedianSeconds;
  std::string error;  // non-empty when the workload failed (e.g. an operation not implemented)
  // With a host bandwidth (the CPU backend): that bandwidth (bytes/s), the bytes the workload
  // cannot avoid moving (compute/bench/floor_bytes.h, the CUDA benchmark's counts) and, for
  // Richardson–Lucy, the median time FFTW alone takes for the same transforms
  // (compute/cpu/rl_transforms_only.h).
  std::optional<double> bandwidth, floorBytes, fftOnlySeconds;
};

// All workload names in the order benchmarks.md lists them.
const std::vector<std::string>& workloadNames();

// Builds the workload's input (fixed seeds), uploads it once, runs one warm-up, then `repeat`
// timed runs of operation + synchronize(). Exceptions become Result::error. Throws
// InvalidArgument for an unknown name or repeat < 1. hostBandwidth > 0 (bytes/s, e.g.
// hostCopyBandwidth) asks a CPU backend for its floors: Result::floorBytes for the workloads the
// CUDA benchmark gives a floor, and for Richardson–Lucy its transforms alone after each timed run.
Result runWorkload(const std::string& name, Backend& backend, int repeat, double hostBandwidth = 0);

// One JSON object on one line: workload, backend, shape, min_s, median_s, threads, device
// (+ kernel_median_s, transfer_median_s, transfer_inclusive_median_s when set;
// + memory_bandwidth_GBps, floor_bytes, floor_s, x_floor = median_s / floor_s, fft_only_s and
// x_fft = median_s / fft_only_s when set), or workload, backend, shape, error.
std::string toJson(const Result& result);

// The synthetic radio sky of the sigmaclip and segment workloads: Gaussian noise σ 0.0133,
// 3000 point sources (flux 0.02 · (1 + Pareto(1.5)), blurred by a σ = 2 Gaussian, × 25) and one
// bright extended source (2.5 · Gaussian, σ 40 px) in the centre. Deterministic for a seed.
Image syntheticSky(int64_t n, uint64_t seed);

}  // namespace stacklens::compute::bench
