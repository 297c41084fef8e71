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

// The copy into the texture runs on a stream of the highest priority: the GUI thread waits for
// it while the worker's next slice keeps the GPU busy, and its blocks must not queue behind that.
struct CudaTextureWriter::Registration {
  cudaGraphicsResource_t resource = nullptr;
  cudaStream_t stream = nullptr;
};

bool cudaGlInteropUsable(std::string* why) { return compute::cudaUsable(why); }

CudaTextureWriter::CudaTextureWriter(unsigned glTexture)
    : registration_(std::make_unique<Registration>()) {
  int lowest = 0, highest = 0;
  check(cudaDeviceGetStreamPriorityRange(&lowest, &highest), "asking the stream priorities");
  check(cudaStreamCreateWithPriority(&registration_->stream, cudaStreamNonBlocking, highest),
        "making the texture copy's stream");
  cudaError_t err = cudaGraphicsGLRegisterImage(&registration_->resource, glTexture, GL_TEXTURE_2D,
                                                cudaGraphicsRegisterFlagsWriteDiscard);
  if (err != cudaSuccess) {
    cudaStreamDestroy(registration_->stream);
    check(err, "registering the GL texture with CUDA");
  }
}

CudaTextureWriter::~CudaTextureWriter() {
  if (!registration_) return;
  if (registration_->resource) cudaGraphicsUnregisterResource(registration_->resource);
  if (registration_->stream) cudaStreamDestroy(registration_->stream);
}

void CudaTextureWriter::write(const compute::Image& image, int64_t z) {
  if (image.location() != compute::Location::Cuda)
    throw std::runtime_error("CudaTextureWriter needs a device image; use the upload path");
  if (z < 0 || z >= image.shape().z) throw std::runtime_error("slice index outside the image");
  cudaGraphicsResource_t resource = registration_->resource;
  cudaStream_t stream = registration_->stream;
  check(cudaGraphicsMapResources(1, &resource, stream), "mapping the GL texture");
  cudaArray_t array = nullptr;
  cudaError_t err = cudaGraphicsSubResourceGetMappedArray(&array, resource, 0, 0);
  if (err == cudaSuccess) {
    const size_t rowBytes = static_cast<size_t>(image.shape().x) * sizeof(float);
    err = cudaMemcpy2DToArrayAsync(array, 0, 0, image.slice(z), rowBytes, rowBytes,
                                   static_cast<size_t>(image.shape().y), cudaMemcpyDeviceToDevice,
                                   stream);
  }
  // Wait for the copy so that the caller may release the source (the compute stream's
  // stream-ordered free does not order after this stream).
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  cudaError_t unmapErr = cudaGraphicsUnmapResources(1, &resource, stream);
  check(err, "copying the slice into the GL texture");
  check(unmapErr, "unmapping the GL texture");
}

}  // namespace stacklens::render
