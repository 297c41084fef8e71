// The live scrub benchmark without Qt: the GUI's GPU live path (compute::LiveProcessor, CUDA–GL
// interop into a texture) driven step by step through a FITS stack in a headless EGL context.
//
// What one step times, from the slider change to the texture being ready: reading ahead the
// neighbours (queued), waiting for slice z from the file when it was not read ahead, its upload
// (one DMA from page-locked memory), the pipeline on the backend, writing the result into a
// GL_R32F texture (interop: device to device; --download: one download into page-locked memory
// and glTexSubImage2D), and glFinish. What it does not include: Qt's event loop, the worker's
// queued signals, drawing the textured quad with the colormap shader, and the buffer swap.
//
//   live_scrub_bench --make FILE [--slices 16] [--size 2048]   writes a test stack (float32 FITS)
//   live_scrub_bench FILE [--frames 200] [--iterations 20] [--backend cuda|cpu] [--download]
//                    [--no-read-ahead] [--boundary auto|reflect|reflect-exact|periodic]
//                    [--deconvolution 2d|3d] [--slab-half 4] [--raw-budget-mb 512]
// (auto, the default, is the viewer's: the boundary compute/auto_boundary.h chooses; 3d runs RL
// on the slab of --slab-half slices each side of the current one, as the viewer's 3D mode.)
// prints {frames, p50_ms, p95_ms, max_ms, dropped, ...} as one JSON line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/live_processor.h"
#include "compute/params_text.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "render/interop/cuda_texture_writer.h"
#include "tests/render/interop/headless_egl.h"

using namespace stacklens;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double index = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(index));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (index - static_cast<double>(lo));
}

// A microscopy-like stack: blurred point-like beads over a smooth background, with noise;
// different in every slice so that no two slices give the same work.
void makeStack(const std::string& path, int64_t slices, int64_t size) {
  std::vector<float> data(static_cast<size_t>(slices * size * size));
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> pos(0.f, static_cast<float>(size));
  std::normal_distribution<float> noise(0.f, 2.f);
  for (int64_t z = 0; z < slices; ++z) {
    float* s = data.data() + z * size * size;
    for (int64_t i = 0; i < size * size; ++i) s[i] = 20.f + noise(rng);
    for (int b = 0; b < 400; ++b) {
      const float cx = pos(rng), cy = pos(rng), amp = 200.f + pos(rng) / 4;
      for (int dy = -6; dy <= 6; ++dy)
        for (int dx = -6; dx <= 6; ++dx) {
          const int64_t x = static_cast<int64_t>(cx) + dx, y = static_cast<int64_t>(cy) + dy;
          if (x < 0 || y < 0 || x >= size || y >= size) continue;
          s[y * size + x] += amp * std::exp(-(dx * dx + dy * dy) / (2.f * 1.5f * 1.5f));
        }
    }
  }
  io::WriteOptions options;
  options.history.push_back("live_scrub_bench test stack");
  io::writeStack(path, data.data(), slices, size, size, options);
}

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (name == argv[i]) return argv[i + 1];
  return fallback;
}

bool flag(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i)
    if (name == argv[i]) return true;
  return false;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: live_scrub_bench FILE [--frames N] ... | --make FILE\n");
    return 2;
  }
  if (std::string(argv[1]) == "--make") {
    if (argc < 3) throw std::invalid_argument("--make needs a file name");
    makeStack(argv[2], std::stoll(arg(argc, argv, "--slices", "16")),
              std::stoll(arg(argc, argv, "--size", "2048")));
    return 0;
  }
  const std::string path = argv[1];
  const int frames = std::stoi(arg(argc, argv, "--frames", "200"));
  const int iterations = std::stoi(arg(argc, argv, "--iterations", "20"));
  const std::string backendName = arg(argc, argv, "--backend", "cuda");
  const bool download = flag(argc, argv, "--download");
  const bool readAhead = !flag(argc, argv, "--no-read-ahead");
  const std::string boundary = arg(argc, argv, "--boundary", "auto");
  const std::string mode = arg(argc, argv, "--deconvolution", "2d");
  if (mode != "2d" && mode != "3d") throw std::invalid_argument("--deconvolution must be 2d or 3d");

  std::shared_ptr<const io::StackReader> reader = io::openStack(path);
  const io::StackInfo& info = reader->info();
  compute::RawSliceReader source;
  source.shape = {info.z, info.y, info.x};
  source.read = [reader](int64_t z, float* out) { reader->readSlice(z, out); };
  std::shared_ptr<compute::Backend> backend = compute::makeBackend(backendName);

  compute::Pipeline pipeline = compute::preset("microscopy deconvolution");
  pipeline.deconvolution.params.threeD = mode == "3d";
  pipeline.deconvolution.slabHalfWidth = std::stoi(arg(argc, argv, "--slab-half", "4"));
  pipeline.deconvolution.params.iterations = iterations;
  pipeline.deconvolution.autoBoundary = boundary == "auto";
  if (!pipeline.deconvolution.autoBoundary) {
    const auto named = compute::boundaryNamed(boundary);
    if (!named) throw std::invalid_argument("--boundary: unknown boundary " + boundary);
    pipeline.deconvolution.params.boundary = *named;
  }
  const std::string boundaryRun =
      compute::boundaryName(compute::deconvolutionParams(pipeline).boundary);

  egl_test::HeadlessContext gl;
  if (!gl.ok()) throw std::runtime_error("no headless OpenGL context: " + gl.error);
  const int w = static_cast<int>(info.x), h = static_cast<int>(info.y);
  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, nullptr);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  if (glGetError() != GL_NO_ERROR) throw std::runtime_error("cannot allocate the texture");
  std::unique_ptr<render::CudaTextureWriter> writer;
  if (!download) writer = std::make_unique<render::CudaTextureWriter>(texture);

  // Raw slices kept (host + device): with the default every slice of a 16 × 2048² stack stays
  // after the first pass; 64 MiB keeps about two, so nearly every step reads the file.
  const size_t budget = std::stoull(arg(argc, argv, "--raw-budget-mb", "512")) << 20;
  compute::LiveProcessor live(backend, source, budget);
  std::vector<double> step, processing, deconv, deconvDevice, readWait, upload, toTexture;
  int dropped = 0;
  std::string path_ = download ? "download to page-locked memory + glTexSubImage2D"
                               : "CUDA-GL interop (device to device)";
  auto oneStep = [&](int64_t z, bool record) {
    const auto t0 = Clock::now();
    // As the worker does: ask for the neighbours before computing this slice.
    if (readAhead) live.readAhead({z + 1, z - 1});
    compute::LiveProcessor::Frame f = live.process(z, pipeline);
    const auto t1 = Clock::now();
    if (download) {
      const compute::Image host = live.download(f.result.image);
      glBindTexture(GL_TEXTURE_2D, texture);
      glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RED, GL_FLOAT, host.data());
    } else {
      writer->write(f.result.image, 0);
    }
    glFinish();
    if (glGetError() != GL_NO_ERROR) throw std::runtime_error("GL error writing the texture");
    if (!record) return;
    step.push_back(msSince(t0));
    toTexture.push_back(msSince(t1));
    processing.push_back(f.result.totalMs);
    readWait.push_back(f.result.readMs);
    upload.push_back(f.result.uploadMs);
    for (const auto& t : f.result.timings)
      if (t.stage == compute::Stage::Deconvolution) {
        deconv.push_back(t.computeMs);
        if (t.deviceMs >= 0) deconvDevice.push_back(t.deviceMs);
      }
  };
  // Warm-up on slice 0: FFT plans, memory pools, page-locked buffers.
  for (int i = 0; i < 3; ++i) oneStep(0, false);
  int64_t z = 0;
  for (int i = 0; i < frames; ++i) {
    z = (z + 1) % info.z;  // the slider moves one slice per step and wraps, as --scrub-benchmark
    try {
      oneStep(z, true);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "step %d (slice %lld): %s\n", i, static_cast<long long>(z), e.what());
      ++dropped;
    }
  }
  auto r3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  std::printf(
      "{\"frames\": %d, \"p50_ms\": %.3f, \"p95_ms\": %.3f, \"max_ms\": %.3f, \"dropped\": %d, "
      "\"processing_p50_ms\": %.3f, \"processing_p95_ms\": %.3f, "
      "\"deconvolution_p50_ms\": %.3f, \"deconvolution_p95_ms\": %.3f, "
      "\"deconvolution_device_p50_ms\": %.3f, \"read_wait_p50_ms\": %.3f, "
      "\"read_wait_max_ms\": %.3f, \"upload_p50_ms\": %.3f, \"upload_p95_ms\": %.3f, "
      "\"to_texture_p50_ms\": %.3f, "
      "\"file_reads\": %d, \"raw_budget_mb\": %zu, \"slices\": %lld, \"size\": \"%dx%d\", "
      "\"iterations\": %d, \"deconvolution\": \"%s\", "
      "\"boundary\": \"%s\", \"read_ahead\": %s, \"backend\": \"%s\", \"device\": \"%s\", "
      "\"gl_vendor\": \"%s\", \"path\": \"%s\"}\n",
      frames, r3(percentile(step, 0.5)), r3(percentile(step, 0.95)),
      r3(step.empty() ? 0 : *std::max_element(step.begin(), step.end())), dropped,
      r3(percentile(processing, 0.5)), r3(percentile(processing, 0.95)),
      r3(percentile(deconv, 0.5)), r3(percentile(deconv, 0.95)),
      r3(deconvDevice.empty() ? -1 : percentile(deconvDevice, 0.5)), r3(percentile(readWait, 0.5)),
      r3(readWait.empty() ? 0 : *std::max_element(readWait.begin(), readWait.end())),
      r3(percentile(upload, 0.5)), r3(percentile(upload, 0.95)), r3(percentile(toTexture, 0.5)),
      live.fileReads(), budget >> 20, static_cast<long long>(info.z), w, h, iterations,
      mode.c_str(), boundaryRun.c_str(), readAhead ? "true" : "false", backend->name().c_str(),
      backend->deviceName().c_str(), gl.vendor.c_str(), path_.c_str());
  writer.reset();
  glDeleteTextures(1, &texture);
  return dropped == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "live_scrub_bench: %s\n", e.what());
    return 1;
  }
}
