// The benchmark workloads: inputs, timing loop and JSON lines (see workloads.h).
#include "compute/bench/workloads.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <sstream>

#include "compute/bench/floor_bytes.h"
#include "compute/bench/timing_summary.h"
#include "compute/cpu/rl_deconvolver.h"
#include "compute/cpu/rl_transforms_only.h"
#include "compute/rl_psf.h"
#include "compute/volume_render.h"

namespace stacklens::compute::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) { return summarize(std::move(v)).median; }

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Image uniformStack(Shape s, uint64_t seed, float offset) {
  Image im = Image::host(s);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (int64_t i = 0; i < s.count(); ++i) im.data()[i] = u(rng) + offset;
  return im;
}

// One workload: its input (host), the shape reported, and the operation on the backend. The
// operation returns the result buffer so that its download can be timed separately.
struct Workload {
  std::vector<int64_t> shape;
  Image input;
  std::function<Image(Backend&, const Image&)> run;  // returns an image to download (or empty)
  // The floor's bytes given the last run's result (floor_bytes.h); unset: no floor.
  std::function<double(const Image&)> floorBytes;
  // Richardson–Lucy's transforms alone on the CPU's plans for `threads` threads (seconds).
  std::function<double(int)> transformsOnly;
};

// Richardson–Lucy's floor and FFTW-only yardstick, for its input shape, PSF and parameters.
void addRlYardsticks(Workload& w, const Image& psf, const DeconvolveParams& p) {
  const Shape s = w.input.shape(), ps = rlPsf(psf, p).shape();  // as richardsonLucy takes it
  const Shape frame = cpu::Deconvolver::frameOf(p.threeD ? s : Shape{1, s.y, s.x}, ps, p);
  const double values = double(frame.count()) * (p.threeD ? 1 : s.z);
  // As the CUDA benchmark: a real OTF in 2D (a symmetric PSF), complex in 3D and reflect-exact.
  const bool realOtf = !p.threeD && p.boundary != Boundary::ReflectExact;
  w.floorBytes = [values, p, realOtf](const Image&) {
    return rlBytes(values, p.iterations, p.threeD, realOtf);
  };
  w.transformsOnly = [s, ps, p](int threads) {
    return cpu::runTransformsOnly(s, ps, p, threads).seconds;
  };
}

// Each maker fills a workload's input, run and floor; makers of a family tell their members
// apart by name, and gpu picks the larger inputs that a GPU is timed on.
using WorkloadMaker = void (*)(Workload& w, const std::string& name, bool gpu);

// Deltas every 16 px convolved with σ = 3.5, truncate 2 (15 taps), as the peers' seed.
void makeBlur2d(Workload& w, const std::string&, bool) {
  w.input = Image::host({1, 2048, 2048});
  for (int64_t y = 8; y < 2048; y += 16)
    for (int64_t x = 8; x < 2048; x += 16) w.input.at(0, y, x) = 1.f;
  w.run = [](Backend& b, const Image& in) {
    BlurParams p;
    p.sigmaY = p.sigmaX = 3.5;
    p.truncate = 2.0;
    return b.gaussianBlur(in, p);
  };
  w.floorBytes = [](const Image&) { return readWriteBytes(2048.0 * 2048); };
}

void makeSigmaClip(Workload& w, const std::string&, bool) {
  w.input = syntheticSky(2048, 1);
  auto iterations = std::make_shared<int>(0);
  w.run = [iterations](Backend& b, const Image& in) {
    ClipParams p;
    p.maxIterations = -1;  // to convergence, as the peers
    *iterations = b.sigmaClip(in, p).iterations;
    return Image();
  };
  w.floorBytes = [iterations](const Image&) { return sigmaClipBytes(2048.0 * 2048, *iterations); };
}

void makeSegment(Workload& w, const std::string& name, bool) {
  w.input = syntheticSky(2048, 1);
  SegmentParams p;
  p.nSigma = 5;
  p.clip.maxIterations = -1;
  // As the peers time it: the background is known before the clock starts (the pipeline's
  // statistics stage hands it over the same way); segment_with_clip clips inside the timing, so
  // its floor also holds the clipping's reads.
  const ClipStats background = makeCpuBackend()->sigmaClip(w.input, p.clip);
  if (name == "segment_label_measure") p.background = background;
  const double clipBytes =
      name == "segment_with_clip" ? sigmaClipBytes(2048.0 * 2048, background.iterations) : 0.0;
  w.run = [p](Backend& b, const Image& in) {
    b.segment(in, p);
    return Image();
  };
  w.floorBytes = [clipBytes](const Image&) { return readWriteBytes(2048.0 * 2048) + clipBytes; };
}

void makeRl2d(Workload& w, const std::string& name, bool) {
  // Positive sky (the content does not change the FFT work).
  w.input = syntheticSky(2048, 2);
  for (int64_t i = 0; i < w.input.shape().count(); ++i)
    w.input.data()[i] = std::max(w.input.data()[i], 0.f) + 0.011f;
  const Boundary boundary = name == "rl2d_fft20" ? Boundary::Periodic : Boundary::Reflect;
  Image psf = gaussianPsf(0, 3.0, 3.0, {1, 31, 31});
  DeconvolveParams p;
  p.iterations = 20;
  p.boundary = boundary;
  w.run = [psf, p](Backend& b, const Image& in) { return b.richardsonLucy(in, psf, p); };
  addRlYardsticks(w, psf, p);
}

void makeRl3d(Workload& w, const std::string& name, bool gpu) {
  const Shape s = gpu ? Shape{256, 1024, 1024} : Shape{128, 512, 512};
  w.input = uniformStack(s, 3, 0.1f);
  const Boundary boundary = name == "rl3d_fft20" ? Boundary::Periodic : Boundary::Reflect;
  Image psf = gaussianPsf(3.0, 2.0, 2.0, {32, 32, 32});
  DeconvolveParams p;
  p.iterations = 20;
  p.threeD = true;
  p.boundary = boundary;
  w.run = [psf, p](Backend& b, const Image& in) { return b.richardsonLucy(in, psf, p); };
  addRlYardsticks(w, psf, p);
}

void makeMedianStack(Workload& w, const std::string& name, bool) {
  w.input = uniformStack({16, 2048, 2048}, 4, 0.f);
  const int size = name == "median3_stack" ? 3 : 5;
  w.run = [size](Backend& b, const Image& in) { return b.medianFilter(in, size); };
  w.floorBytes = [](const Image& out) { return readWriteBytes(double(out.shape().count())); };
}

// A cube of 256 channels of 1024²: a z-projection or moment map as the viewer makes one.
void makeProjection(Workload& w, const std::string& name, bool gpu) {
  const Shape s = gpu ? Shape{256, 1024, 1024} : Shape{64, 512, 512};
  w.input = uniformStack(s, 6, 0.f);
  if (name == "moment1")
    w.run = [](Backend& b, const Image& in) {
      MomentParams p;
      p.order = 1;
      for (int64_t k = 0; k < in.shape().z; ++k) p.coordinate.push_back(-500.0 + 2.5 * double(k));
      return b.moment(in, p);
    };
  else
    w.run = [name](Backend& b, const Image& in) {
      return b.project(in, {name == "project_max" ? Projection::Max : Projection::Median});
    };
}

// One frame of the 3D view, turned off every axis: 512 × 1024² at 1024² on the GPU (the volume
// is uploaded once, in the warm-up, as the view does), 256³ at 512² on the CPU.
void makeVolumeRender(Workload& w, const std::string& name, bool gpu) {
  const Shape s = gpu ? Shape{512, 1024, 1024} : Shape{256, 256, 256};
  w.input = uniformStack(s, 7, 0.f);
  VolumeRenderParams p;
  p.mode = name == "volume_mip" ? VolumeMode::Mip : VolumeMode::IsoSurface;
  p.width = p.height = gpu ? 1024 : 512;
  p.low = 0, p.high = 1, p.isoLevel = 0.9;
  orbitRotation(30, 20, p.rotation);
  w.run = [p](Backend& b, const Image& in) { return b.renderVolume(in, p); };
}

void makeZoom3d(Workload& w, const std::string&, bool gpu) {
  const Shape s = gpu ? Shape{330, 608, 865} : Shape{110, 203, 289};
  w.input = uniformStack(s, 5, 0.f);
  w.run = [](Backend& b, const Image& in) {
    ResampleParams p;
    p.zoomZ = 2.5;
    p.zoomY = p.zoomX = 0.7;
    p.order = 3;
    return b.resample(in, p);
  };
  const double inputValues = double(s.count());
  w.floorBytes = [inputValues](const Image& out) {
    return resampleBytes(inputValues, double(out.shape().count()));
  };
}

struct NamedMaker {
  const char* name;
  WorkloadMaker make;
};

// Every workload's name with the maker of its family, in the order workloadNames() lists them.
constexpr NamedMaker kMakers[] = {{"blur2d_gaussian_f32", makeBlur2d},
                                  {"sigmaclip", makeSigmaClip},
                                  {"segment_label_measure", makeSegment},
                                  {"segment_with_clip", makeSegment},
                                  {"rl2d_fft20", makeRl2d},
                                  {"rl2d_fft20_reflect", makeRl2d},
                                  {"rl3d_fft20", makeRl3d},
                                  {"rl3d_fft20_reflect", makeRl3d},
                                  {"median3_stack", makeMedianStack},
                                  {"median5_stack", makeMedianStack},
                                  {"zoom3d_order3", makeZoom3d},
                                  {"project_max", makeProjection},
                                  {"project_median", makeProjection},
                                  {"moment1", makeProjection},
                                  {"volume_mip", makeVolumeRender},
                                  {"volume_iso", makeVolumeRender}};

WorkloadMaker makerFor(const std::string& name) {
  for (const NamedMaker& m : kMakers)
    if (name == m.name) return m.make;
  std::string known;
  for (const auto& n : workloadNames()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("unknown workload '" + name + "' (known: " + known + ")");
}

Workload makeWorkload(const std::string& name, bool gpu) {
  Workload w;
  makerFor(name)(w, name, gpu);
  const Shape s = w.input.shape();
  w.shape = s.z == 1 ? std::vector<int64_t>{s.y, s.x} : std::vector<int64_t>{s.z, s.y, s.x};
  return w;
}

}  // namespace

const std::vector<std::string>& workloadNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const NamedMaker& m : kMakers) all.push_back(m.name);
    return all;
  }();
  return names;
}

Image syntheticSky(int64_t n, uint64_t seed) {
  Image im = Image::host({1, n, n});
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.0133f);
  for (int64_t i = 0; i < n * n; ++i) im.data()[i] = noise(rng);
  // Point sources: a normalised σ = 2 Gaussian stamp (radius 8 = 4σ, as gaussian_filter).
  constexpr int kR = 8;
  double stamp[2 * kR + 1][2 * kR + 1];
  double sum = 0;
  for (int dy = -kR; dy <= kR; ++dy)
    for (int dx = -kR; dx <= kR; ++dx)
      sum += stamp[dy + kR][dx + kR] = std::exp(-(dx * dx + dy * dy) / 8.0);
  std::uniform_int_distribution<int64_t> pos(0, n - 1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 3000; ++k) {
    const int64_t y = pos(rng), x = pos(rng);
    const double pareto = std::pow(1.0 - u(rng), -1.0 / 1.5) - 1.0;  // NumPy's Lomax form
    const double flux = 0.02 * (1.0 + pareto) * 25.0;
    for (int dy = -kR; dy <= kR; ++dy)
      for (int dx = -kR; dx <= kR; ++dx) {
        const int64_t yy = y + dy, xx = x + dx;
        if (yy < 0 || xx < 0 || yy >= n || xx >= n) continue;
        im.at(0, yy, xx) += static_cast<float>(flux * stamp[dy + kR][dx + kR] / sum);
      }
  }
  const double c = n / 2.0;
  for (int64_t y = 0; y < n; ++y)
    for (int64_t x = 0; x < n; ++x) {
      const double r2 = (y - c) * (y - c) + (x - c) * (x - c);
      im.at(0, y, x) += static_cast<float>(2.5 * std::exp(-r2 / (2 * 40.0 * 40.0)));
    }
  return im;
}

Result runWorkload(const std::string& name, Backend& backend, int repeat, double hostBandwidth) {
  if (repeat < 1) throw InvalidArgument("bench: --repeat must be ≥ 1");
  const bool gpu = backend.name() != "cpu";
  Workload w = makeWorkload(name, gpu);  // throws InvalidArgument for an unknown name
  Result r;
  r.workload = name;
  r.backend = backend.name();
  r.shape = w.shape;
  r.threads = backend.threads();
  r.device = backend.deviceName();
  try {
    backend.device().timeOperations(true);  // the kernels column
    auto t0 = Clock::now();
    Image input = backend.upload(w.input);
    backend.synchronize();
    const double uploadSeconds = seconds(t0, Clock::now());
    // The host copy is kept only where the host-in → host-out path is timed too (a GPU machine
    // has the memory); freeing it helps the big CPU stacks.
    if (!gpu) w.input = Image();
    w.run(backend, input);  // warm-up: plans, device allocations, page faults
    backend.synchronize();
    // The host-in → host-out runs read a page-locked input, as the viewer's slices are.
    const PinnedWhileAlive pinned(backend.device(), w.input);
    // The FFTW-only yardstick runs after each timed run, so that both see the same load.
    const bool yardsticks = hostBandwidth > 0 && !gpu;
    std::vector<double> times, kernels, transfers, inclusive, transformsOnly;
    Image out;
    for (int i = 0; i < repeat; ++i) {
      out = Image();  // the last result is freed before the next run, as in the warm-up
      auto start = Clock::now();
      out = w.run(backend, input);
      backend.synchronize();
      auto stop = Clock::now();
      times.push_back(seconds(start, stop));
      if (yardsticks && w.transformsOnly) transformsOnly.push_back(w.transformsOnly(r.threads));
      const double deviceMs = backend.device().lastDeviceMs();
      kernels.push_back(deviceMs >= 0 ? deviceMs / 1e3 : times.back());
      if (gpu) {
        double downloadSeconds = 0;
        if (!out.empty()) {
          auto d0 = Clock::now();
          Image host = backend.download(out);
          downloadSeconds = seconds(d0, Clock::now());
        }
        transfers.push_back(uploadSeconds + downloadSeconds);
        // Host float32 in → host float32 out through the backend's own path (which may overlap
        // its copies with the computation, chunk by chunk).
        auto h0 = Clock::now();
        Image result = w.run(backend, w.input);
        if (!result.empty() && !result.onHost()) result = backend.download(result);
        backend.synchronize();
        inclusive.push_back(seconds(h0, Clock::now()));
      }
    }
    r.minSeconds = *std::min_element(times.begin(), times.end());
    r.medianSeconds = median(times);
    if (gpu) {
      r.kernelMedianSeconds = median(kernels);
      r.transferMedianSeconds = median(transfers);
      r.inclusiveMedianSeconds = median(inclusive);
    }
    if (yardsticks) {
      r.bandwidth = hostBandwidth;
      if (w.floorBytes) r.floorBytes = w.floorBytes(out);
      if (!transformsOnly.empty()) r.fftOnlySeconds = median(transformsOnly);
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

std::string toJson(const Result& r) {
  std::ostringstream out;
  out.precision(6);
  out << "{\"workload\": " << jsonString(r.workload) << ", \"backend\": " << jsonString(r.backend)
      << ", \"shape\": [";
  for (size_t i = 0; i < r.shape.size(); ++i) out << (i ? ", " : "") << r.shape[i];
  out << "]";
  if (!r.error.empty()) {
    out << ", \"error\": " << jsonString(r.error) << "}";
    return out.str();
  }
  out << ", \"min_s\": " << r.minSeconds << ", \"median_s\": " << r.medianSeconds
      << ", \"threads\": " << r.threads << ", \"device\": " << jsonString(r.device);
  if (r.kernelMedianSeconds) out << ", \"kernel_median_s\": " << *r.kernelMedianSeconds;
  if (r.transferMedianSeconds) out << ", \"transfer_median_s\": " << *r.transferMedianSeconds;
  if (r.inclusiveMedianSeconds)
    out << ", \"transfer_inclusive_median_s\": " << *r.inclusiveMedianSeconds;
  if (r.bandwidth) out << ", \"memory_bandwidth_GBps\": " << *r.bandwidth / 1e9;
  if (r.bandwidth && r.floorBytes) {
    const double floor = *r.floorBytes / *r.bandwidth;
    out << ", \"floor_bytes\": " << *r.floorBytes << ", \"floor_s\": " << floor
        << ", \"x_floor\": " << r.medianSeconds / floor;
  }
  if (r.fftOnlySeconds)
    out << ", \"fft_only_s\": " << *r.fftOnlySeconds
        << ", \"x_fft\": " << r.medianSeconds / *r.fftOnlySeconds;
  out << "}";
  return out.str();
}

}  // namespace stacklens::compute::bench
