// Stands in for the CUDA–OpenGL interop path in builds without the CUDA toolkit.
#include <stdexcept>

#include "render/interop/cuda_texture_writer.h"

namespace stacklens::render {

struct CudaTextureWriter::Registration {};

bool cudaGlInteropUsable(std::string* why) {
  if (why) *why = "this build of StackLens has no CUDA backend";
  return false;
}

CudaTextureWriter::CudaTextureWriter(unsigned) {
  throw std::runtime_error("this build of StackLens has no CUDA–OpenGL interop");
}

CudaTextureWriter::~CudaTextureWriter() = default;

void CudaTextureWriter::write(const compute::Image&, int64_t) {
  throw std::runtime_error("this build of StackLens has no CUDA–OpenGL interop");
}

}  // namespace stacklens::render
