#include "render/composite_layer.h"

#include <algorithm>
#include <cmath>

#include "render/colormap.h"
#include "render/quad_shader.h"

namespace stacklens::render {
namespace {

// One sampler per channel: GLSL 3.30 indexes sampler arrays by constant expressions only.
const char* kFragmentShader = R"(#version 330 core
uniform sampler2D c0, c1, c2, c3, c4, c5;
uniform sampler2D luts;
uniform int count;
uniform int rows[6];
uniform float lows[6], highs[6];
in vec2 uv;
out vec4 colour;
vec3 add(int i, sampler2D channel) {
  float v = texture(channel, uv).r;
  if (isnan(v) || !(v == v)) return vec3(0.0);
  float x = clamp((v - lows[i]) / (highs[i] - lows[i]), 0.0, 1.0);
  return texelFetch(luts, ivec2(clamp(int(x * 255.0 + 0.5), 0, 255), rows[i]), 0).rgb;
}
void main() {
  vec3 sum = vec3(0.0);
  if (count > 0) sum += add(0, c0);
  if (count > 1) sum += add(1, c1);
  if (count > 2) sum += add(2, c2);
  if (count > 3) sum += add(3, c3);
  if (count > 4) sum += add(4, c4);
  if (count > 5) sum += add(5, c5);
  colour = vec4(min(sum, vec3(1.0)), 1.0);
})";

int lutIndex(const CompositeChannel& c, float v) {
  const float x = std::clamp((v - c.low) / (c.high - c.low), 0.f, 1.f);
  return std::clamp(int(x * 255.f + 0.5f), 0, 255);
}

}  // namespace

QColor compositeColour(const std::vector<CompositeChannel>& channels, size_t index) {
  int rgb[3] = {0, 0, 0};
  for (const CompositeChannel& c : channels) {
    if (!c.visible || !c.data || index >= c.data->size()) continue;
    const float v = (*c.data)[index];
    if (std::isnan(v)) continue;
    const QColor add = loadColormap(c.colormap).at(lutIndex(c, v));
    rgb[0] += add.red(), rgb[1] += add.green(), rgb[2] += add.blue();
  }
  return QColor(std::min(rgb[0], 255), std::min(rgb[1], 255), std::min(rgb[2], 255));
}

void CompositeLayer::set(std::vector<CompositeChannel> channels, int width, int height) {
  if (channels.size() > size_t(kMaxChannels)) channels.resize(kMaxChannels);
  channels_ = std::move(channels);
  width_ = width, height_ = height;
}

bool CompositeLayer::active(int width, int height) const {
  if (channels_.empty() || width != width_ || height != height_) return false;
  for (const CompositeChannel& c : channels_)
    if (!c.data || c.data->size() != size_t(width) * size_t(height)) return false;
  return true;
}

void CompositeLayer::draw(QOpenGLFunctions_3_3_Core& gl, const float quad[4], unsigned luts,
                          int filter) {
  if (!program_) {
    program_ = std::make_unique<QOpenGLShaderProgram>();
    if (!program_->addShaderFromSourceCode(QOpenGLShader::Vertex, kQuadVertexShader) ||
        !program_->addShaderFromSourceCode(QOpenGLShader::Fragment, kFragmentShader) ||
        !program_->link())
      qWarning("CompositeLayer: shader build failed: %s", qPrintable(program_->log()));
  }
  const QStringList names = colormapNames();
  int rows[kMaxChannels] = {}, count = 0;
  float lows[kMaxChannels] = {}, highs[kMaxChannels] = {};
  for (const CompositeChannel& c : channels_) {
    if (!c.visible) continue;
    const int unit = 4 + count;  // units 0–3 belong to the slice view
    gl.glActiveTexture(GL_TEXTURE0 + unit);
    if (!textures_[count]) {
      gl.glGenTextures(1, &textures_[count]);
      gl.glBindTexture(GL_TEXTURE_2D, textures_[count]);
      gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
      gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
      uploaded_[count] = nullptr;
    }
    gl.glBindTexture(GL_TEXTURE_2D, textures_[count]);
    if (uploaded_[count] != c.data.get()) {
      gl.glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
      gl.glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
      gl.glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, width_, height_, 0, GL_RED, GL_FLOAT,
                      c.data->data());
      uploaded_[count] = c.data.get();
    }
    gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
    gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
    rows[count] = std::max(0, int(names.indexOf(c.colormap)));
    lows[count] = c.low;
    highs[count] = c.high > c.low ? c.high : c.low + 1;
    ++count;
  }
  gl.glActiveTexture(GL_TEXTURE1);
  gl.glBindTexture(GL_TEXTURE_2D, luts);
  gl.glActiveTexture(GL_TEXTURE0);
  program_->bind();
  program_->setUniformValue("quad", quad[0], quad[1], quad[2], quad[3]);
  const char* samplers[kMaxChannels] = {"c0", "c1", "c2", "c3", "c4", "c5"};
  for (int i = 0; i < kMaxChannels; ++i) program_->setUniformValue(samplers[i], 4 + i);
  program_->setUniformValue("luts", 1);
  program_->setUniformValue("count", count);
  program_->setUniformValueArray("rows", rows, kMaxChannels);
  program_->setUniformValueArray("lows", lows, kMaxChannels, 1);
  program_->setUniformValueArray("highs", highs, kMaxChannels, 1);
  gl.glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  program_->release();
}

void CompositeLayer::release(QOpenGLFunctions_3_3_Core& gl) {
  for (unsigned& t : textures_)
    if (t) gl.glDeleteTextures(1, &t), t = 0;
  uploaded_.fill(nullptr);
  program_.reset();
}

void CompositeLayer::forget() {
  textures_.fill(0);
  uploaded_.fill(nullptr);
  program_.reset();
}

}  // namespace stacklens::render
