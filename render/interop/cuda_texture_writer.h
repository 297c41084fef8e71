// Writes a device-resident slice straight into an OpenGL texture through CUDA–OpenGL interop,
// with no copy through host memory. Plain C++: no CUDA or GL types in this header.
#pragma once

#include <memory>
#include <string>

#include "compute/image.h"

namespace stacklens::render {

// True when this build has the interop path and a CUDA device is usable; otherwise *why says why.
bool cudaGlInteropUsable(std::string* why = nullptr);

// Bound to one GL_R32F texture of the current OpenGL context. write() copies a 2D slice that
// lives on the CUDA device (Location::Cuda) into the texture, device to device. The texture
// must already have the slice's size (glTexImage2D with a null pointer allocates it).
class CudaTextureWriter {
 public:
  explicit CudaTextureWriter(unsigned glTexture);  // throws std::runtime_error when unusable
  ~CudaTextureWriter();
  CudaTextureWriter(const CudaTextureWriter&) = delete;
  CudaTextureWriter& operator=(const CudaTextureWriter&) = delete;

  // Copies slice z of a device image; throws std::runtime_error on a host image or a failure.
  void write(const compute::Image& deviceImage, int64_t z = 0);

 private:
  struct Registration;
  std::unique_ptr<Registration> registration_;
};

}  // namespace stacklens::render
