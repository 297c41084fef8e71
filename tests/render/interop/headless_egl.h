// A headless OpenGL context on the NVIDIA GPU through EGL's device platform (no X, no Qt), for
// the interop test and the live scrub benchmark on the GPU machine.
#pragma once

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>

#include <string>

namespace stacklens::egl_test {

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

}  // namespace stacklens::egl_test
