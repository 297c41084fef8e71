// Draws a volume into SliceView's slice texture with an OpenGL 3D-texture ray-marcher: the 3D
// view's renderer where CUDA is missing. Its shader is the GLSL twin of compute/volume_ray.h
// (same rays, same samples), so it writes the same data values that Backend::renderVolume
// returns, and the view's colormap and limits apply to them as to a slice.
#pragma once

#include <memory>
#include <string>

#include "compute/image.h"
#include "compute/params.h"
#include "render/texture_sink.h"

namespace stacklens::render {

class GlVolumeSink : public TextureSink {
 public:
  GlVolumeSink();
  ~GlVolumeSink() override;  // GL objects left: call SliceView::clearSlice() first
  // The volume (host, float32; its spacing gives the voxels' aspect), uploaded at the next fill.
  void setVolume(compute::Image volume);
  // How to look at it; p.width × p.height must be the size given to SliceView::setExternalSlice.
  void setParams(const compute::VolumeRenderParams& p) { params_ = p; }
  void fillTexture(unsigned glTexture, int width, int height) override;
  void releaseTexture() override;  // frees every GL object (the context is current)
  // Why the last fill drew nothing (no 3D textures this large, a shader that did not compile).
  const std::string& lastError() const { return error_; }
  // The largest side of a 3D texture the view's OpenGL takes (0 before the first fill).
  int maxTextureSide() const { return maxSide_; }

 private:
  struct Gl;
  std::unique_ptr<Gl> gl_;
  compute::Image volume_;
  bool volumePending_ = false;
  compute::VolumeRenderParams params_;
  std::string error_;
  int maxSide_ = 0;
};

}  // namespace stacklens::render
