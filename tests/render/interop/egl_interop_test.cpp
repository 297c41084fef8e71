// The CUDA–OpenGL interop path on a real GPU: a device slice written into a GL_R32F texture of a
// headless EGL context reads back with glGetTexImage exactly. Skipped without a CUDA device.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "render/interop/cuda_texture_writer.h"

using namespace stacklens;

namespace {

// A pbuffer-backed OpenGL context on the first EGL device that gives one (the NVIDIA GPU).
class HeadlessContext {
 public:
  HeadlessContext() {
    auto queryDevices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto platformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!queryDevices || !platformDisplay) {
      error = "EGL device enumeration is not available";
      return;
    }
    EGLDeviceEXT devices[8];
    EGLint count = 0;
    if (!queryDevices(8, devices, &count) || count == 0) {
      error = "no EGL device";
      return;
    }
    for (EGLint i = 0; i < count && !context_; ++i) {
      display_ = platformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
      if (display_ == EGL_NO_DISPLAY || !eglInitialize(display_, nullptr, nullptr)) continue;
      const EGLint configAttribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                      EGL_OPENGL_BIT, EGL_NONE};
      EGLConfig config;
      EGLint n = 0;
      if (!eglChooseConfig(display_, configAttribs, &config, 1, &n) || n == 0) continue;
      const EGLint pbufferAttribs[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
      surface_ = eglCreatePbufferSurface(display_, config, pbufferAttribs);
      eglBindAPI(EGL_OPENGL_API);
      context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, nullptr);
      if (context_ && eglMakeCurrent(display_, surface_, surface_, context_)) {
        vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
      } else {
        context_ = nullptr;
      }
    }
    if (!context_) error = "no EGL device gave an OpenGL context";
  }
  ~HeadlessContext() {
    if (context_) {
      eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(display_, context_);
      eglDestroySurface(display_, surface_);
    }
  }
  bool ok() const { return context_ != nullptr; }
  std::string error, vendor;

 private:
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLSurface surface_ = EGL_NO_SURFACE;
  EGLContext context_ = nullptr;
};

}  // namespace

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
