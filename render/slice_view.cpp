// Draws a float32 slice as a textured quad, fitted to the widget with the right aspect ratio.
#include "render/slice_view.h"

#include <algorithm>

namespace stacklens::render {

static const char* kVertexShader = R"(#version 330 core
uniform vec2 scale;
out vec2 uv;
void main() {
  vec2 corners[4] = vec2[](vec2(-1, -1), vec2(1, -1), vec2(-1, 1), vec2(1, 1));
  vec2 p = corners[gl_VertexID];
  uv = vec2((p.x + 1.0) * 0.5, (1.0 - p.y) * 0.5);
  gl_Position = vec4(p * scale, 0.0, 1.0);
})";

static const char* kFragmentShader = R"(#version 330 core
uniform sampler2D slice;
uniform float low;
uniform float high;
in vec2 uv;
out vec4 colour;
void main() {
  float v = texture(slice, uv).r;
  if (isnan(v)) { colour = vec4(1.0, 0.0, 0.0, 1.0); return; }
  float t = clamp((v - low) / max(high - low, 1e-30), 0.0, 1.0);
  colour = vec4(t, t, t, 1.0);
})";

SliceView::SliceView(QWidget* parent) : QOpenGLWidget(parent) {}

SliceView::~SliceView() {
  makeCurrent();
  if (texture_) glDeleteTextures(1, &texture_);
  doneCurrent();
}

void SliceView::setSlice(const float* data, int width, int height) {
  pending_.assign(data, data + static_cast<size_t>(width) * height);
  width_ = width;
  height_ = height;
  uploadPending_ = true;
  update();
}

void SliceView::setLimits(float low, float high) {
  low_ = low;
  high_ = high;
  update();
}

void SliceView::initializeGL() {
  initializeOpenGLFunctions();
  program_.addShaderFromSourceCode(QOpenGLShader::Vertex, kVertexShader);
  program_.addShaderFromSourceCode(QOpenGLShader::Fragment, kFragmentShader);
  program_.link();
  vao_.create();
  glGenTextures(1, &texture_);
  glBindTexture(GL_TEXTURE_2D, texture_);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

void SliceView::paintGL() {
  glClearColor(0.1f, 0.1f, 0.12f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (width_ == 0 || height_ == 0) return;
  glBindTexture(GL_TEXTURE_2D, texture_);
  if (uploadPending_) {
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, width_, height_, 0, GL_RED, GL_FLOAT, pending_.data());
    uploadPending_ = false;
  }
  // Fit the slice into the widget keeping square pixels.
  float widgetAspect = float(width()) / std::max(1, height());
  float sliceAspect = float(width_) / height_;
  float sx = 1.f, sy = 1.f;
  if (widgetAspect > sliceAspect) sx = sliceAspect / widgetAspect;
  else sy = widgetAspect / sliceAspect;
  program_.bind();
  program_.setUniformValue("scale", sx, sy);
  program_.setUniformValue("low", low_);
  program_.setUniformValue("high", high_);
  program_.setUniformValue("slice", 0);
  vao_.bind();
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  vao_.release();
  emit framePresented();
}

}  // namespace stacklens::render
