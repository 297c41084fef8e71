// The CUDA–OpenGL interop path on a real GPU: a device slice written into a GL_R32F texture of a
// headless EGL context reads back with glGetTexImage exactly. Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compute/backend.h"
#include "compute/live_processor.h"
#include "render/interop/cuda_texture_writer.h"
#include "tests/render/interop/headless_egl.h"

using namespace stacklens;

using stacklens::egl_test::HeadlessContext;

TEST(CudaGlInterop, DeviceSliceReadsBackExactlyFromTheTexture) {
  std::string why;
  if (!render::cudaGlInteropUsable(&why)) GTEST_SKIP() << why;
  HeadlessContext gl;
  if (!gl.ok()) GTEST_SKIP() << gl.error;
  std::cout << "GL vendor: " << gl.vendor << "\n";

  const int w = 333, h = 217;  // odd sizes catch pitch mistakes
  compute::Image host = compute::Image::host({2, h, w});
  std::mt19937 rng(7);
  std::normal_distribution<float> value(0.f, 100.f);
  for (int64_t i = 0; i < host.shape().count(); ++i) host.data()[i] = value(rng);
  host.at(1, 5, 7) = NAN;
  auto cuda = compute::makeCudaBackend();
  compute::Image device = cuda->upload(host);
  ASSERT_EQ(device.location(), compute::Location::Cuda);

  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, nullptr);
  ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  {
    render::CudaTextureWriter writer(texture);
    writer.write(device, 1);
  }
  std::vector<float> back(static_cast<size_t>(w) * h, -1.f);
  glBindTexture(GL_TEXTURE_2D, texture);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTexImage(GL_TEXTURE_2D, 0, GL_RED, GL_FLOAT, back.data());
  ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float want = host.at(1, y, x), got = back[static_cast<size_t>(y) * w + x];
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << "at " << x << "," << y;
      } else {
        ASSERT_EQ(got, want) << "at " << x << "," << y;
      }
    }
  glDeleteTextures(1, &texture);
}

// The texture's life as the viewer drives it: registered and written, unregistered before it is
// re-specified for a new size (as SliceView now does through TextureSink::releaseTexture),
// registered and written again at the new size, unregistered before it is deleted with the
// context still current. Run under compute-sanitizer memcheck on the GPU machine.
TEST(CudaGlInterop, RegisterReallocateAndCloseInOrder) {
  std::string why;
  if (!render::cudaGlInteropUsable(&why)) GTEST_SKIP() << why;
  HeadlessContext gl;
  if (!gl.ok()) GTEST_SKIP() << gl.error;
  auto cuda = compute::makeCudaBackend();
  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  for (const auto& [w, h] : {std::pair{64, 48}, std::pair{257, 129}, std::pair{31, 300}}) {
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, nullptr);
    ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
    compute::Image host = compute::Image::host({1, h, w});
    for (int64_t i = 0; i < host.shape().count(); ++i) host.data()[i] = float(i % 1013) + w;
    {
      render::CudaTextureWriter writer(texture);  // registered
      writer.write(cuda->upload(host), 0);
    }  // unregistered before the next glTexImage2D
    std::vector<float> back(static_cast<size_t>(w) * h, -1.f);
    glBindTexture(GL_TEXTURE_2D, texture);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RED, GL_FLOAT, back.data());
    for (int64_t i = 0; i < host.shape().count(); ++i)
      ASSERT_EQ(back[size_t(i)], host.data()[i]) << w << "x" << h << " at " << i;
  }
  glDeleteTextures(1, &texture);
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

TEST(CudaGlInterop, HostImageIsRefused) {
  std::string why;
  if (!render::cudaGlInteropUsable(&why)) GTEST_SKIP() << why;
  HeadlessContext gl;
  if (!gl.ok()) GTEST_SKIP() << gl.error;
  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, 4, 4, 0, GL_RED, GL_FLOAT, nullptr);
  render::CudaTextureWriter writer(texture);
  EXPECT_THROW(writer.write(compute::Image::host({1, 4, 4})), std::runtime_error);
  glDeleteTextures(1, &texture);
}

namespace {

// A 3-slice stack in memory with a different bead pattern per slice.
compute::RawSliceReader memorySource(int64_t z, int64_t h, int64_t w) {
  auto data = std::make_shared<std::vector<float>>(static_cast<size_t>(z * h * w));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(0.f, 10.f);
  for (auto& v : *data) v = value(rng);
  for (int64_t k = 0; k < z; ++k) (*data)[static_cast<size_t>((k * h + h / 2) * w + w / 3)] = 500.f;
  compute::RawSliceReader s;
  s.shape = {z, h, w};
  s.read = [data, h, w](int64_t k, float* out) {
    std::copy_n(data->data() + k * h * w, h * w, out);
  };
  return s;
}

compute::Pipeline rl2d(int iterations) {
  compute::Pipeline p = compute::preset("microscopy deconvolution");
  p.deconvolution.params.threeD = false;
  p.deconvolution.params.iterations = iterations;
  return p;
}

std::vector<float> readTexture(GLuint texture, int w, int h) {
  std::vector<float> back(static_cast<size_t>(w) * h, -1.f);
  glBindTexture(GL_TEXTURE_2D, texture);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTexImage(GL_TEXTURE_2D, 0, GL_RED, GL_FLOAT, back.data());
  return back;
}

}  // namespace

// The GUI's GPU live path: the raw slice uploaded once, the result left on the device and
// written into the texture through interop, equal to the CPU backend's result (float rounding).
TEST(LiveGpuPath, DeviceResultGoesStraightIntoTheTextureAndMatchesTheCpu) {
  std::string why;
  if (!render::cudaGlInteropUsable(&why)) GTEST_SKIP() << why;
  HeadlessContext gl;
  if (!gl.ok()) GTEST_SKIP() << gl.error;
  const int w = 97, h = 64;
  const compute::RawSliceReader source = memorySource(3, h, w);
  std::shared_ptr<compute::Backend> cuda = compute::makeCudaBackend();
  compute::LiveProcessor gpu(cuda, source, size_t(64) << 20);
  compute::LiveProcessor cpu(compute::makeCpuBackend(1), source, size_t(64) << 20);
  const compute::Pipeline p = rl2d(10);

  compute::LiveProcessor::Frame g = gpu.process(1, p);
  ASSERT_EQ(g.result.image.location(), compute::Location::Cuda);
  EXPECT_TRUE(gpu.onBackend(1));
  EXPECT_EQ(gpu.rawDeviceBytes(), size_t(w) * h * sizeof(float));
  const compute::Image want = cpu.process(1, p).result.image;
  ASSERT_TRUE(want.onHost());

  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, w, h, 0, GL_RED, GL_FLOAT, nullptr);
  {
    render::CudaTextureWriter writer(texture);
    writer.write(g.result.image, 0);
  }
  const std::vector<float> back = readTexture(texture, w, h);
  double maxRel = 0;
  for (int i = 0; i < w * h; ++i)
    maxRel = std::max(maxRel, std::abs(double(back[size_t(i)]) - want.data()[i]) /
                                  (std::abs(double(want.data()[i])) + 1e-3));
  EXPECT_LT(maxRel, 1e-4);
  // The fallback (no interop): one download into page-locked memory gives the same pixels.
  const compute::Image host = gpu.download(g.result.image);
  ASSERT_TRUE(host.onHost());
  for (int i = 0; i < w * h; ++i) ASSERT_EQ(host.data()[i], back[size_t(i)]) << i;
  glDeleteTextures(1, &texture);

  // The second request for the slice uploads nothing and reads nothing.
  const int reads = gpu.fileReads();
  const compute::LiveProcessor::Frame again = gpu.process(1, p);
  EXPECT_EQ(gpu.fileReads(), reads);
  EXPECT_EQ(again.result.image.location(), compute::Location::Cuda);
}

// Raw device buffers are evicted by bytes: a budget of two slices (host + device copy each
// counts) keeps one slice after scrubbing through three.
TEST(LiveGpuPath, KeptDeviceSlicesAreBoundedByBytes) {
  std::string why;
  if (!compute::cudaUsable(&why)) GTEST_SKIP() << why;
  const int w = 64, h = 48;
  const size_t slice = size_t(w) * h * sizeof(float);
  compute::LiveProcessor gpu(compute::makeCudaBackend(), memorySource(3, h, w), 2 * slice + 16);
  compute::Pipeline p = rl2d(2);
  for (int z : {0, 1, 2}) {
    gpu.process(z, p);
    EXPECT_LE(gpu.rawBytes(), 2 * slice + 16);
    EXPECT_TRUE(gpu.onBackend(z));
  }
  EXPECT_EQ(gpu.rawDeviceBytes(), slice);
  EXPECT_FALSE(gpu.kept(0));
}
