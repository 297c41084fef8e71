// Channels blended additively in SliceView (Fiji's composite, DS9's RGB frame): each visible
// channel is mapped linearly from its [low, high] to its colormap (black to a colour, usually),
// and the colours add, clamped to white. NaN adds nothing. The GL side lives here so that
// slice_view.cpp only asks it to draw; compositeColour() is its CPU twin for tests.
#pragma once

#include <QColor>
#include <QOpenGLFunctions_3_3_Core>
#include <QOpenGLShaderProgram>
#include <QString>
#include <array>
#include <memory>
#include <vector>

namespace stacklens::render {

using ChannelData = std::shared_ptr<const std::vector<float>>;

struct CompositeChannel {
  ChannelData data;  // width × height, row 0 first
  QString name;      // what the readout calls it (e.g. "plane 1", a file name)
  QString colormap = "red";
  float low = 0, high = 1;
  bool visible = true;
};

inline constexpr int kMaxChannels = 6;

// The colour of pixel `index` (row-major) of a composite; luts in colormapNames() order.
QColor compositeColour(const std::vector<CompositeChannel>& channels, size_t index);

class CompositeLayer {
 public:
  // At most kMaxChannels; data of another size than the view's slice is not drawn.
  void set(std::vector<CompositeChannel> channels, int width, int height);
  void clear() { channels_.clear(); }
  bool active(int width, int height) const;
  const std::vector<CompositeChannel>& channels() const { return channels_; }
  // Draws the quad (the caller's vertex array bound, context current). luts: the view's 256 ×
  // N colormap texture; filter: GL_NEAREST or GL_LINEAR.
  void draw(QOpenGLFunctions_3_3_Core& gl, const float quad[4], unsigned luts, int filter);
  void release(QOpenGLFunctions_3_3_Core& gl);  // textures and program (context current)
  void forget();  // the context was lost with everything in it: make all anew

 private:
  std::vector<CompositeChannel> channels_;
  int width_ = 0, height_ = 0;
  std::array<unsigned, kMaxChannels> textures_{};
  std::array<const std::vector<float>*, kMaxChannels> uploaded_{};  // what each texture holds
  std::unique_ptr<QOpenGLShaderProgram> program_;
};

}  // namespace stacklens::render
