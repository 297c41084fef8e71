// stacklens-cuda-bench: times the CUDA backend on the benchmark workloads of docs/benchmarks.md,
// device-resident (data already on the GPU, result left there) and transfer-inclusive (host
// float32 in, host float32 out), and prints one JSON line per workload with the physical floor.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compute/backend.h"
#include "compute/bench/floor_bytes.h"
#include "compute/bench/host_bandwidth.h"
#include "compute/rl_frame.h"

using namespace stacklens::compute;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The median time of one cudaMemcpy of `bytes` (CUDA events), over 5 runs after a first that
// pays for mappings.
double copySeconds(void* to, const void* from, size_t bytes, cudaMemcpyKind kind) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> t;
  for (int i = 0; i < 6; ++i) {
    cudaEventRecord(e0);
    cudaMemcpyAsync(to, from, bytes, kind);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (i > 0) t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return median(t);
}

// Device-to-device copy bandwidth (read + write bytes per second), the floor's yardstick.
double measureBandwidth() {
  size_t bytes = size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) return 0;
  const double seconds = copySeconds(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * double(bytes) / seconds;
}

// Host ↔ device bandwidth from page-locked memory (bytes per second each way): the bus's speed,
// the yardstick of the transfer-inclusive figures.
struct LinkBandwidth {
  double up = 0, down = 0;
};

LinkBandwidth measureLinkBandwidth() {
  const size_t bytes = size_t(256) << 20;
  void *host = nullptr, *dev = nullptr;
  LinkBandwidth link;
  if (cudaMallocHost(&host, bytes) == cudaSuccess && cudaMalloc(&dev, bytes) == cudaSuccess) {
    link.up = double(bytes) / copySeconds(dev, host, bytes, cudaMemcpyHostToDevice);
    link.down = double(bytes) / copySeconds(host, dev, bytes, cudaMemcpyDeviceToHost);
  }
  cudaGetLastError();  // a refused allocation leaves the link unmeasured, not the bench failed
  cudaFree(dev);
  cudaFreeHost(host);
  return link;
}

LinkBandwidth gLink;     // measured once in main, before any workload
double gHostMemory = 0;  // the host's copy bandwidth (bytes read and written a second), likewise

struct Timing {
  double device = 0, transfer = 0, deviceMin = 0;
  double events =
      0;  // DeviceControl::lastDeviceMs(): CUDA events around the operation's device work
  double bytesUp = 0, bytesDown = 0;  // what the transfer-inclusive run moves each way
  // The transfer-inclusive run's two copies alone (medians): where its time goes.
  double upload = 0, download = 0;
  // The same run from a page-locked input (as the viewer's slices), and its upload alone.
  double transferPinned = 0, uploadPinned = 0;
  bool pageableInput = false;  // the host input was pageable (else it was page-locked already)
};

// op(input, job) must return the result where the job asks; runs: repeats after a warm-up (at
// least: short workloads take more). Host input runs as the command-line tool's do, with the
// result asked for on the host: per-slice operations then go through the overlapped stack
// pipeline.
Timing timeIt(Backend& gpu, const Image& host,
              const std::function<Image(const Image&, const Job&)>& op, int runs) {
  const Job onDevice, onHost = Job().onHost();
  Image dev = gpu.upload(host);
  gpu.synchronize();
  op(dev, onDevice);  // plans, pool growth
  gpu.synchronize();
  // Then more runs, for a while: after a single one of a few microseconds, a call's first timed
  // runs were its slowest (clocks still at an idle machine's pace, copy threads asleep).
  constexpr double kWarmUpSeconds = 0.05, kTimedSeconds = 0.02;
  constexpr int kMaxRuns = 100;
  int warmUps = 0;
  const auto warmUpStart = Clock::now();
  double warm = 0;
  do {
    op(dev, onDevice);
    gpu.synchronize();
    warm = std::chrono::duration<double>(Clock::now() - warmUpStart).count();
  } while (++warmUps < kMaxRuns && warm < kWarmUpSeconds);
  // Short workloads take more runs, so that one slow run moves the median less.
  runs = std::clamp(int(kTimedSeconds / (warm / warmUps)), runs, std::max(runs, kMaxRuns));
  std::vector<double> d, t, e;
  // The wall as a caller that does not time the device sees it, then the events in runs of their
  // own (their marks sit on the launch's path).
  for (int i = 0; i < runs; ++i) {
    auto a = Clock::now();
    Image r = op(dev, onDevice);
    gpu.synchronize();
    d.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  gpu.device().timeOperations(true);
  for (int i = 0; i < runs; ++i) {
    Image r = op(dev, onDevice);
    gpu.synchronize();  // waited for as the wall's runs wait
    e.push_back(gpu.device().lastDeviceMs() * 1e-3);
  }
  gpu.device().timeOperations(false);
  size_t resultBytes = 0;
  for (int i = 0; i < runs; ++i) {
    auto a = Clock::now();
    Image r = op(host, onHost);
    resultBytes = r.data() == host.data() ? 0 : r.bytes();  // statistics return the input
    r = gpu.download(r);
    t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  std::vector<double> up, down;
  const Image result = op(dev, onDevice);
  for (int i = 0; i < runs; ++i) {
    auto a = Clock::now();
    Image uploaded = gpu.upload(host);
    gpu.synchronize();
    up.push_back(std::chrono::duration<double>(Clock::now() - a).count());
    if (!resultBytes) continue;
    a = Clock::now();
    Image downloaded = gpu.download(result);
    down.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  Timing timing{median(d),
                median(t),
                *std::min_element(d.begin(), d.end()),
                median(e),
                double(host.bytes()),
                double(resultBytes)};
  timing.upload = median(up);
  timing.download = down.empty() ? 0 : median(down);
  const PinnedWhileAlive pinned(gpu.device(), host);
  timing.pageableInput = pinned.pinned();
  if (pinned.pinned()) {
    std::vector<double> tp, upPinned;
    for (int i = 0; i < runs; ++i) {
      auto a = Clock::now();
      Image r = op(host, onHost);
      if (r.data() != host.data()) r = gpu.download(r);
      gpu.synchronize();
      tp.push_back(std::chrono::duration<double>(Clock::now() - a).count());
      a = Clock::now();
      Image uploaded = gpu.upload(host);
      gpu.synchronize();
      upPinned.push_back(std::chrono::duration<double>(Clock::now() - a).count());
    }
    timing.transferPinned = median(tp);
    timing.uploadPinned = median(upPinned);
  }
  return timing;
}

void emit(const std::string& name, const Timing& t, double floorBytes, double bandwidth,
          const std::string& extra) {
  double floor = bandwidth > 0 ? floorBytes / bandwidth : 0;
  // With transfers, the floor is the kernels' own time plus each way's bytes at the bus's speed.
  const double transferFloor = gLink.up > 0 && gLink.down > 0
                                   ? t.device + t.bytesUp / gLink.up + t.bytesDown / gLink.down
                                   : 0;
  // From pageable memory the input also passes through the host's memory three times (the
  // staging copy's read and write, the DMA's read), which may take longer than the link.
  const double pageableFloor = transferFloor > 0 && gHostMemory > 0 && t.pageableInput
                                   ? transferFloor - t.bytesUp / gLink.up +
                                         std::max(t.bytesUp / gLink.up, 3 * t.bytesUp / gHostMemory)
                                   : 0;
  std::printf(
      "{\"workload\": \"%s\", \"backend\": \"cuda\", \"median_s\": %.6g, \"min_s\": %.6g, "
      "\"event_median_s\": %.6g, \"transfer_median_s\": %.6g, \"floor_bytes\": %.4g, "
      "\"floor_s\": %.4g, \"x_floor\": %.3g, \"transfer_floor_s\": %.4g, "
      "\"x_transfer_floor\": %.3g, \"upload_s\": %.4g, \"download_s\": %.4g, "
      "\"transfer_pinned_median_s\": %.6g, \"x_transfer_floor_pinned\": %.3g, "
      "\"upload_pinned_s\": %.4g, \"pageable_floor_s\": %.4g, \"x_pageable_floor\": %.3g%s}\n",
      name.c_str(), t.device, t.deviceMin, t.events, t.transfer, floorBytes, floor,
      floor > 0 ? t.device / floor : 0.0, transferFloor,
      transferFloor > 0 ? t.transfer / transferFloor : 0.0, t.upload, t.download, t.transferPinned,
      transferFloor > 0 ? t.transferPinned / transferFloor : 0.0, t.uploadPinned, pageableFloor,
      pageableFloor > 0 ? t.transfer / pageableFloor : 0.0, extra.c_str());
  std::fflush(stdout);
}

// The peers' synthetic radio sky: noise, ~3000 blurred point sources, one extended source.
Image sky(Backend& gpu, int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.0133f);
  Image img = Image::host({1, n, n}), pts = Image::host({1, n, n});
  for (int64_t i = 0; i < n * n; ++i) img.data()[i] = noise(rng);
  std::uniform_int_distribution<int64_t> pos(0, n - 1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 3000; ++k) {
    double pareto = std::pow(1.0 - u(rng), -1.0 / 1.5) - 1.0;  // numpy's pareto(1.5)
    pts.at(0, pos(rng), pos(rng)) += static_cast<float>(0.02 * (1 + pareto));
  }
  Image blurred = gpu.download(gpu.gaussianBlur(pts, BlurParams{0, 2.0, 2.0, 4.0, false}));
  for (int64_t y = 0; y < n; ++y)
    for (int64_t x = 0; x < n; ++x) {
      double r2 = (y - n / 2.0) * (y - n / 2.0) + (x - n / 2.0) * (x - n / 2.0);
      img.at(0, y, x) +=
          25.f * blurred.at(0, y, x) + float(2.5 * std::exp(-r2 / (2 * 40.0 * 40.0)));
    }
  return img;
}

Image uniform(Shape s, unsigned seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Image im = Image::host(s);
  for (int64_t i = 0; i < s.count(); ++i) im.data()[i] = d(rng);
  return im;
}

}  // namespace

// Periodic (or reflect-exact) 3D Richardson–Lucy on a frame of the given shape, device-resident:
// the cost per frame voxel and iteration that block planning weighs (compute/blocked/), and the
// fixed cost of a run (the OTF or transfer pairs, made afresh when too large to keep). The data
// are a cheap deterministic pattern; the transforms' speed does not depend on the values.
void frameBenchmark(Backend& gpu, Shape s, int iterations, double bandwidth, bool exact) {
  Image vol = Image::hostUninitialized(s);
  for (int64_t i = 0; i < s.count(); ++i)
    vol.data()[i] = 0.1f + float((uint64_t(i) * 2654435761u) % 1000u) * 1e-3f;
  // Reflect-exact takes the seed job's PSF size made odd and symmetric.
  Image psf = exact ? gaussianPsf(8.0, 3.0, 3.0, {127, 127, 127})
                    : gaussianPsf(3.0, 2.0, 2.0, {32, 32, 32});
  DeconvolveParams p;
  p.iterations = iterations;
  p.threeD = true;
  p.boundary = exact ? Boundary::ReflectExact : Boundary::Periodic;
  Image dev = gpu.upload(vol);
  vol = Image();
  gpu.synchronize();
  DeconvolveParams warm = p;
  warm.iterations = 2;
  gpu.richardsonLucy(dev, psf, warm);  // plans, OTF, pool growth
  gpu.synchronize();
  auto timed = [&](const DeconvolveParams& q) {  // the median of two runs
    std::vector<double> t;
    for (int i = 0; i < 2; ++i) {
      auto a = Clock::now();
      Image r = gpu.richardsonLucy(dev, psf, q);
      gpu.synchronize();
      t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
    }
    return median(t);
  };
  const double all = timed(p);
  DeconvolveParams one = p;
  one.iterations = 1;
  const double first = timed(one);
  const double perIteration = (all - first) / (iterations - 1);
  const double fixed = first - perIteration;
  std::printf(
      "{\"workload\": \"%s\", \"frame\": [%lld, %lld, %lld], \"iterations\": %d, \"fixed_s\": "
      "%.4f, "
      "\"median_s\": %.4f, \"s_per_iteration\": %.5f, \"ns_per_voxel_iteration\": %.5f, "
      "\"peak_device_GB\": %.2f, \"copy_bandwidth_GBps\": %.1f}\n",
      exact ? "rl3d_exact_frame" : "rl3d_frame", (long long)s.z, (long long)s.y, (long long)s.x,
      iterations, fixed, all, perIteration, perIteration / double(s.count()) * 1e9,
      double(gpu.device().devicePeakBytes()) / 1e9, bandwidth / 1e9);
  std::fflush(stdout);
}

namespace {

// The workloads asked for on the command line (all of them when none is named), and the RL
// frames to time.
struct Wanted {
  std::set<std::string> only;
  std::vector<std::pair<Shape, bool>> frames;  // with reflect-exact
  bool operator()(const std::string& w) const { return only.empty() || only.count(w); }
  bool named(const std::string& w) const { return only.count(w) > 0; }
};

Wanted parseArguments(int argc, char** argv) {
  Wanted want;
  for (int i = 1; i < argc; ++i) {
    long long z = 0, y = 0, x = 0;
    if (std::sscanf(argv[i], "rl3d_frame=%lldx%lldx%lld", &z, &y, &x) == 3)
      want.frames.push_back({{z, y, x}, false});
    else if (std::sscanf(argv[i], "rl3d_exact_frame=%lldx%lldx%lld", &z, &y, &x) == 3)
      want.frames.push_back({{z, y, x}, true});
    else
      want.only.insert(argv[i]);
  }
  return want;
}

// Gaussian blur of a 2048² field of deltas (the peers' seed).
void benchBlur(Backend& gpu, double bw, const Wanted& want) {
  if (!want("blur2d_gaussian_f32")) return;
  Image deltas = Image::host({1, 2048, 2048});
  for (int64_t y = 8; y < 2048; y += 16)
    for (int64_t x = 8; x < 2048; x += 16) deltas.at(0, y, x) = 1.f;
  BlurParams p{0.0, 3.5, 3.5, 2.0, false};
  Timing t = timeIt(
      gpu, deltas, [&](const Image& a, const Job& j) { return gpu.gaussianBlur(a, p, j); }, 20);
  // Floor: one read and one write of the image (a fused 2D kernel's traffic).
  emit("blur2d_gaussian_f32", t, bench::readWriteBytes(2048.0 * 2048), bw, "");
}

// Sigma clipping of the synthetic sky to convergence.
void benchSigmaClip(Backend& gpu, double bw, const Wanted& want, const Image& sky1) {
  if (!want("sigmaclip")) return;
  ClipParams p;
  p.maxIterations = -1;
  ClipStats st;
  int iterations = 0;
  Timing t = timeIt(
      gpu, sky1,
      [&](const Image& a, const Job&) {
        st = gpu.sigmaClip(a, p);
        iterations = st.iterations;
        return a;
      },
      10);
  std::ostringstream e;
  e << ", \"iterations\": " << iterations << ", \"result_n\": " << st.clipped.n
    << ", \"result_std\": " << st.clipped.std;
  // Floor: one read of the finite values per iteration plus the first (all values).
  emit("sigmaclip", t, bench::sigmaClipBytes(2048.0 * 2048, iterations), bw, e.str());
}

// Segmentation of the synthetic sky: with the background known, and with its clipping timed.
void benchSegmentation(Backend& gpu, double bw, const Wanted& want, const Image& sky1) {
  if (!want("segment_label_measure")) return;
  SegmentParams full;
  full.clip.maxIterations = -1;
  Segmentation seg = gpu.segment(gpu.upload(sky1), full);
  // As the peer (and compute/bench): the background statistics are known before the clock
  // starts, so the timing is threshold + label + measure.
  SegmentParams fixed = full;
  fixed.background = seg.background;
  size_t n = 0;
  Timing t = timeIt(
      gpu, sky1,
      [&](const Image& a, const Job&) {
        n = gpu.segment(a, fixed).sources.size();
        return a;
      },
      10);
  std::ostringstream e;
  e << ", \"n_sources\": " << n << ", \"threshold\": " << seg.threshold;
  emit("segment_label_measure", t, bench::readWriteBytes(2048.0 * 2048), bw, e.str());
  Timing tf = timeIt(
      gpu, sky1,
      [&](const Image& a, const Job&) {
        gpu.segment(a, full);
        return a;
      },
      10);
  // Its floor also holds the reads the clipping inside the timing must make.
  emit("segment_with_clipping", tf,
       bench::readWriteBytes(2048.0 * 2048) +
           bench::sigmaClipBytes(2048.0 * 2048, seg.background.iterations),
       bw, e.str());
}

// 2D Richardson–Lucy on a blurred 2048² sky, each boundary.
void benchRl2d(Backend& gpu, double bw, const Wanted& want) {
  if (!want("rl2d_fft20")) return;
  Image truth = sky(gpu, 2048, 2);
  for (int64_t i = 0; i < truth.shape().count(); ++i)
    truth.data()[i] = std::max(truth.data()[i], 0.f) + 0.01f;
  Image psf = gaussianPsf(0, 3.0, 3.0, {1, 31, 31});
  Image blurred = gpu.download(gpu.gaussianBlur(truth, BlurParams{0, 3.0, 3.0, 5.0, false}));
  for (int64_t i = 0; i < blurred.shape().count(); ++i) blurred.data()[i] += 1e-3f;
  for (Boundary b : {Boundary::Periodic, Boundary::Reflect, Boundary::ReflectExact}) {
    DeconvolveParams p;
    p.iterations = 20;
    p.boundary = b;
    Timing t = timeIt(
        gpu, blurred,
        [&](const Image& a, const Job& j) { return gpu.richardsonLucy(a, psf, p, j); }, 5);
    // The frame both backends use (compute/rl_frame.h): 2048² periodic and reflect-exact,
    // 2304² reflect.
    const Shape f = b == Boundary::Reflect ? rlFrame({1, 2048 + 30, 2048 + 30}, {false, true, true})
                                           : Shape{1, 2048, 2048};
    std::ostringstream e;
    e << ", \"frame\": [" << f.y << ", " << f.x << "]";
    const std::string name =
        std::string("rl2d_fft20") + (b == Boundary::Periodic  ? ""
                                     : b == Boundary::Reflect ? "_reflect"
                                                              : "_reflect_exact");
    // Reflect-exact reads transfer pairs: 8 bytes per spectrum value, as a complex OTF.
    emit(name, t, bench::rlBytes(double(f.count()), 20, false, b != Boundary::ReflectExact), bw,
         e.str());
  }
}

// 3D Richardson–Lucy on 256 × 1024², each boundary.
void benchRl3d(Backend& gpu, double bw, const Wanted& want) {
  for (Boundary b : {Boundary::Periodic, Boundary::Reflect, Boundary::ReflectExact}) {
    const std::string name = b == Boundary::Periodic  ? "rl3d_fft20"
                             : b == Boundary::Reflect ? "rl3d_fft20_reflect"
                                                      : "rl3d_fft20_reflect_exact";
    if (!want(name)) continue;
    Image vol = uniform({256, 1024, 1024}, 3, 0.1f, 1.1f);
    // Reflect-exact needs odd sides (a PSF symmetric on every axis).
    const int64_t side = b == Boundary::ReflectExact ? 33 : 32;
    Image psf = gaussianPsf(3.0, 2.0, 2.0, {side, side, side});
    DeconvolveParams p;
    p.iterations = 20;
    p.threeD = true;
    p.boundary = b;
    Timing t = timeIt(
        gpu, vol, [&](const Image& a, const Job& j) { return gpu.richardsonLucy(a, psf, p, j); },
        3);
    // The frame both backends use (compute/rl_frame.h): 256 × 1024², or 288 × 1152² reflected.
    const Shape f = b == Boundary::Reflect
                        ? rlFrame({256 + 32, 1024 + 32, 1024 + 32}, {true, true, true})
                        : Shape{256, 1024, 1024};
    std::ostringstream e;
    e << ", \"frame\": [" << f.z << ", " << f.y << ", " << f.x << "]";
    emit(name, t, bench::rlBytes(double(f.count()), 20, true, false), bw, e.str());
  }
}

// 3×3 and 5×5 medians of a 16 × 2048² stack.
void benchMedians(Backend& gpu, double bw, const Wanted& want) {
  if (!(want("median3_stack") || want("median5_stack"))) return;
  Image stack = uniform({16, 2048, 2048}, 4, 0.f, 1.f);
  for (int k : {3, 5}) {
    std::string name = "median" + std::to_string(k) + "_stack";
    if (!want(name)) continue;
    Timing t = timeIt(
        gpu, stack, [&](const Image& a, const Job& j) { return gpu.medianFilter(a, k, j); }, 10);
    emit(name, t, bench::readWriteBytes(double(stack.shape().count())), bw, "");
  }
}

// Cubic zoom of a 330 × 608 × 865 volume.
void benchZoom(Backend& gpu, double bw, const Wanted& want) {
  if (!want("zoom3d_order3")) return;
  Image vol = uniform({330, 608, 865}, 5, 0.f, 1.f);
  ResampleParams p;
  p.zoomZ = 2.5;
  p.zoomY = 0.7;
  p.zoomX = 0.7;
  p.order = 3;
  Timing t = timeIt(
      gpu, vol, [&](const Image& a, const Job& j) { return gpu.resample(a, p, j); }, 5);
  double out = 825.0 * 426 * 606;
  emit("zoom3d_order3", t, bench::resampleBytes(double(vol.shape().count()), out), bw, "");
}

// The zoom's three passes alone, each on the array it meets there (x, then y, then z), against
// its own floor; only when named.
void benchZoomPasses(Backend& gpu, double bw, const Wanted& want) {
  const Shape passInputs[3] = {{330, 426, 606}, {330, 608, 606}, {330, 608, 865}};
  const double passZooms[3] = {2.5, 0.7, 0.7};
  for (int axis : {2, 1, 0}) {
    const std::string name = std::string("zoom3d_order3_") + "zyx"[axis];
    if (!want.named(name)) continue;
    Image vol = uniform(passInputs[axis], 6, 0.f, 1.f);
    ResampleParams p;
    p.zoomZ = axis == 0 ? passZooms[0] : 1.0;
    p.zoomY = axis == 1 ? passZooms[1] : 1.0;
    p.zoomX = axis == 2 ? passZooms[2] : 1.0;
    p.order = 3;
    Timing t = timeIt(
        gpu, vol, [&](const Image& a, const Job& j) { return gpu.resample(a, p, j); }, 5);
    const double out = double(resampledShape(vol.shape(), p).count());
    emit(name, t, bench::resampleBytes(double(vol.shape().count()), out), bw, "");
  }
}

}  // namespace

int runAll(int argc, char** argv) {
  const Wanted want = parseArguments(argc, argv);
  std::string why;
  if (!cudaUsable(&why)) {
    std::fprintf(stderr, "stacklens-cuda-bench: %s\n", why.c_str());
    return 4;
  }
  auto gpu = makeCudaBackend();
  double bw = measureBandwidth();
  gLink = measureLinkBandwidth();
  // Pageable input is copied into page-locked staging (read and written by the host) and read
  // again by the DMA: the host's memory bandwidth bounds that path, not the link.
  gHostMemory = bench::hostCopyBandwidth(int(std::max(1u, std::thread::hardware_concurrency())));
  std::printf(
      "{\"device\": \"%s\", \"copy_bandwidth_GBps\": %.1f, \"page_locked_h2d_GBps\": %.1f, "
      "\"page_locked_d2h_GBps\": %.1f, \"host_memory_GBps\": %.1f}\n",
      gpu->deviceName().c_str(), bw / 1e9, gLink.up / 1e9, gLink.down / 1e9, gHostMemory / 1e9);
  for (const auto& [f, exact] : want.frames) frameBenchmark(*gpu, f, 10, bw, exact);
  if (!want.frames.empty() && want.only.empty()) return 0;

  benchBlur(*gpu, bw, want);
  Image sky1;
  if (want("sigmaclip") || want("segment_label_measure")) sky1 = sky(*gpu, 2048, 1);
  benchSigmaClip(*gpu, bw, want, sky1);
  benchSegmentation(*gpu, bw, want, sky1);
  benchRl2d(*gpu, bw, want);
  benchRl3d(*gpu, bw, want);
  benchMedians(*gpu, bw, want);
  benchZoom(*gpu, bw, want);
  benchZoomPasses(*gpu, bw, want);
  return 0;
}

int main(int argc, char** argv) {
  try {
    return runAll(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stacklens-cuda-bench: error: %s\n", e.what());
    return 1;
  }
}
