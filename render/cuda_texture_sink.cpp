// CudaTextureSink: SliceView's external-writer hook implemented with the CUDA–GL interop writer.
#include "render/cuda_texture_sink.h"

#include <exception>

#include "render/interop/cuda_texture_writer.h"

namespace stacklens::render {

CudaTextureSink::CudaTextureSink() = default;
CudaTextureSink::~CudaTextureSink() = default;

void CudaTextureSink::setSlice(compute::Image deviceImage, int64_t z) {
  image_ = std::move(deviceImage);
  z_ = z;
}

void CudaTextureSink::fillTexture(unsigned glTexture, int width, int height) {
  try {
    if (!writer_ || glTexture != texture_ || width != width_ || height != height_) {
      writer_.reset();  // unregister the old storage before registering the new one
      writer_ = std::make_unique<CudaTextureWriter>(glTexture);
      texture_ = glTexture;
      width_ = width;
      height_ = height;
    }
    writer_->write(image_, z_);
    error_.clear();
  } catch (const std::exception& e) {
    writer_.reset();
    error_ = e.what();
  }
}

void CudaTextureSink::releaseTexture() {
  writer_.reset();
  texture_ = 0;
  width_ = height_ = 0;
}

}  // namespace stacklens::render
