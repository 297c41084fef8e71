// Feeds SliceView from a slice on the CUDA device through the interop writer (no host copy).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "compute/image.h"
#include "render/texture_sink.h"

namespace stacklens::render {

class CudaTextureWriter;

// Give it a device image and slice index, then SliceView::setExternalSlice(&sink, x, y). The
// texture is registered with CUDA once per texture id and size (SliceView reallocates the
// texture when the size changes). Failures never escape paintGL: they are kept in lastError().
class CudaTextureSink : public TextureSink {
 public:
  CudaTextureSink();
  ~CudaTextureSink() override;
  void setSlice(compute::Image deviceImage, int64_t z);
  void fillTexture(unsigned glTexture, int width, int height) override;
  void releaseTexture() override;  // unregisters the texture (the context is current)
  const std::string& lastError() const { return error_; }

 private:
  compute::Image image_;
  int64_t z_ = 0;
  unsigned texture_ = 0;
  int width_ = 0, height_ = 0;
  std::unique_ptr<CudaTextureWriter> writer_;
  std::string error_;
};

}  // namespace stacklens::render
