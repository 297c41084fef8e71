// CUDA–OpenGL interop: register a GL texture with CUDA once, then copy device slices into it.
#include <GL/gl.h>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <stdexcept>

#include "compute/backend.h"
#include "render/interop/cuda_texture_writer.h"

namespace stacklens::render {
namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
  }
}

}  // namespace

struct CudaTextureWriter::Registration {
  cudaGraphicsResource_t resource = nullptr;
};

bool cudaGlInteropUsable(std::string* why) { return compute::cudaUsable(why); }

CudaTextureWriter::CudaTextureWriter(unsigned glTexture)
    : registration_(std::make_unique<Registration>()) {
  check(cudaGraphicsGLRegisterImage(&registration_->resource, glTexture, GL_TEXTURE_2D,
                                    cudaGraphicsRegisterFlagsWriteDiscard),
        "registering the GL texture with CUDA");
}

CudaTextureWriter::~CudaTextureWriter() {
  if (registration_ && registration_->resource)
    cudaGraphicsUnregisterResource(registration_->resource);
}

void CudaTextureWriter::write(const compute::Image& image, int64_t z) {
  if (image.location() != compute::Location::Cuda)
    throw std::runtime_error("CudaTextureWriter needs a device image; use the upload path");
  if (z < 0 || z >= image.shape().z) throw std::runtime_error("slice index outside the image");
  cudaGraphicsResource_t resource = registration_->resource;
  check(cudaGraphicsMapResources(1, &resource, 0), "mapping the GL texture");
  cudaArray_t array = nullptr;
  cudaError_t err = cudaGraphicsSubResourceGetMappedArray(&array, resource, 0, 0);
  if (err == cudaSuccess) {
    const size_t rowBytes = static_cast<size_t>(image.shape().x) * sizeof(float);
    err = cudaMemcpy2DToArray(array, 0, 0, image.slice(z), rowBytes, rowBytes,
                              static_cast<size_t>(image.shape().y), cudaMemcpyDeviceToDevice);
  }
  // The copy runs on the legacy stream; wait for it so that the caller may release the source
  // (the compute stream's stream-ordered free does not order after the legacy stream).
  if (err == cudaSuccess) err = cudaStreamSynchronize(0);
  cudaError_t unmapErr = cudaGraphicsUnmapResources(1, &resource, 0);
  check(err, "copying the slice into the GL texture");
  check(unmapErr, "unmapping the GL texture");
}

}  // namespace stacklens::render
