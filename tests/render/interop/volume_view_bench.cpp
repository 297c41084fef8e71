// The 3D view's GPU frame without Qt: a volume in the CUDA backend's texture, turned a little
// each frame, drawn by Backend::renderVolume and written into a GL_R32F texture of a headless EGL
// context through CUDA–GL interop, then glFinish — what the viewer's worker and paint do per
// frame, less Qt's event loop, the colormap quad and the buffer swap (measured in the viewer by
// stacklens --volume-benchmark).
//
//   volume_view_bench [--shape Z,Y,X] [--size N] [--frames N] [--mode mip|attenuated-mip|...]
// prints one JSON line: render (synchronised) and frame (with the texture write and glFinish)
// medians, frames per second, and the copy floor of the volume's texture reads.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/volume_render.h"
#include "render/interop/cuda_texture_writer.h"
#include "tests/render/interop/headless_egl.h"

using namespace stacklens;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (name == argv[i]) return argv[i + 1];
  return fallback;
}

// Beads over a faint noisy background, as a light-sheet stack looks.
compute::Image beads(compute::Shape s) {
  compute::Image v = compute::Image::hostUninitialized(s);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> faint(0.f, 0.05f);
  for (int64_t i = 0; i < s.count(); ++i) v.data()[i] = faint(rng);
  std::uniform_int_distribution<int64_t> z(3, s.z - 4), y(3, s.y - 4), x(3, s.x - 4);
  for (int b = 0; b < 20000; ++b) {
    const int64_t cz = z(rng), cy = y(rng), cx = x(rng);
    for (int dz = -2; dz <= 2; ++dz)
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
          v.data()[((cz + dz) * s.y + cy + dy) * s.x + cx + dx] +=
              std::exp(-float(dz * dz + dy * dy + dx * dx) / 2.f);
  }
  return v;
}

int run(int argc, char** argv) {
  int64_t z = 512, y = 1024, x = 1024;
  std::sscanf(arg(argc, argv, "--shape", "512,1024,1024").c_str(), "%ld,%ld,%ld", &z, &y, &x);
  const int side = std::stoi(arg(argc, argv, "--size", "1024"));
  const int frames = std::stoi(arg(argc, argv, "--frames", "200"));
  compute::VolumeRenderParams p;
  p.mode = compute::parseVolumeMode(arg(argc, argv, "--mode", "mip"));
  p.width = p.height = side;
  p.low = 0, p.high = 1, p.isoLevel = 0.5;

  const compute::Image volume = beads({z, y, x});
  auto backend = compute::makeCudaBackend();
  egl_test::HeadlessContext gl;
  if (!gl.ok()) throw std::runtime_error("no headless OpenGL context: " + gl.error);
  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, side, side, 0, GL_RED, GL_FLOAT, nullptr);
  render::CudaTextureWriter writer(texture);

  auto t = Clock::now();
  backend->renderVolume(volume, p);  // the texture upload
  backend->synchronize();
  const double uploadMs = msSince(t);
  std::vector<double> render, frame;
  for (int k = -5; k < frames; ++k) {
    compute::turnView(p.rotation, 0.7, 3.0, p.rotation);
    t = Clock::now();
    const compute::Image image = backend->renderVolume(volume, p);
    backend->synchronize();
    const double r = msSince(t);
    writer.write(image, 0);
    glFinish();
    if (k >= 0) render.push_back(r), frame.push_back(msSince(t));
  }
  const double f = median(frame);
  std::printf(
      "{\"device\":\"%s\",\"volume\":[%ld,%ld,%ld],\"frame\":[%d,%d],\"mode\":\"%s\","
      "\"frames\":%d,\"upload_ms\":%.1f,\"render_p50_ms\":%.3f,\"frame_p50_ms\":%.3f,"
      "\"fps\":%.1f}\n",
      backend->deviceName().c_str(), z, y, x, side, side, compute::volumeModeName(p.mode), frames,
      uploadMs, median(render), f, f > 0 ? 1000 / f : 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "volume_view_bench: %s\n", e.what());
    return 1;
  }
}
