// Who fills the slice texture: a host upload, or an external writer such as CUDA–OpenGL interop.
#pragma once

namespace stacklens::render {

// Fills an allocated GL_R32F texture of width × height with a slice (row 0 = image row 0). Called
// on the GUI thread with the view's OpenGL context current, from inside paintGL. A CUDA
// implementation (in a .cu file) registers the texture with cudaGraphicsGLRegisterImage once per
// texture id and copies its device buffer into the mapped array.
//
// A texture registered with CUDA must be unregistered, with its context current, before it is
// re-specified (a new size) or deleted: SliceView calls releaseTexture() on the sink that last
// filled its texture at those moments, when another sink takes over, and when the slice is
// cleared (before its owner deletes the sink).
class TextureSink {
 public:
  virtual ~TextureSink() = default;
  virtual void fillTexture(unsigned glTexture, int width, int height) = 0;
  virtual void releaseTexture() {}
};

}  // namespace stacklens::render
