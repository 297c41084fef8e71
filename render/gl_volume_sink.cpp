// The OpenGL ray-marcher: a full-screen quad into the slice texture (through a framebuffer
// object), one fragment per ray. The geometry comes from compute::volumeGeometry, the same
// numbers the CPU and CUDA renderers use.
#include "render/gl_volume_sink.h"

#include <QOpenGLContext>
#include <QOpenGLFunctions_3_3_Core>
#include <QOpenGLShaderProgram>
#include <QOpenGLVersionFunctionsFactory>
#include <QOpenGLVertexArrayObject>

#include <algorithm>

#include "compute/volume_render.h"

namespace stacklens::render {
namespace {

const char* kVertexShader = R"(#version 330 core
void main() {
  vec2 corners[4] = vec2[](vec2(-1, -1), vec2(1, -1), vec2(-1, 1), vec2(1, 1));
  gl_Position = vec4(corners[gl_VertexID], 0.0, 1.0);
})";

// Keep in step with compute/volume_ray.h (marchVolumeRay and its helpers). MODE is defined per
// program (VolumeMode's value): llvmpipe runs every branch of uniform ifs for each fragment.
// Texture coordinates advance by a constant step along the ray instead of being made from t.
const char* kFragmentShader = R"(
uniform sampler3D volume;
uniform vec3 row0, row1, row2;  // the rotation, view <- model
uniform vec3 halfSide, toIndex, size;
uniform vec2 outSize;
uniform float pixel, stepLength, voxelStep, low, high, attenuation, isoLevel;
out float value;

vec3 origin, direction;

float sampleAt(vec3 p) { return texture(volume, (p + 0.5) / size).r; }
vec3 indexAt(float t) { return (origin + t * direction + halfSide) * toIndex - 0.5; }
vec3 coordinateAt(float t) { return (origin + t * direction + halfSide) * toIndex / size; }

float isoShade(vec3 p) {
  vec3 grad;
  grad.x = sampleAt(p + vec3(1, 0, 0)) - sampleAt(p - vec3(1, 0, 0));
  grad.y = sampleAt(p + vec3(0, 1, 0)) - sampleAt(p - vec3(0, 1, 0));
  grad.z = sampleAt(p + vec3(0, 0, 1)) - sampleAt(p - vec3(0, 0, 1));
  grad *= 0.5 * toIndex;
  float norm = length(grad);
  if (!(norm > 0.0)) return 1.0;
  return 0.2 + 0.8 * abs(dot(grad, direction) / norm);
}

void main() {
  float nan = intBitsToFloat(0x7fc00000);
  vec2 ij = gl_FragCoord.xy - 0.5;  // framebuffer row j is the image's row j
  float u = (ij.x + 0.5 - 0.5 * outSize.x) * pixel;
  float v = (ij.y + 0.5 - 0.5 * outSize.y) * pixel;
  origin = row0 * u + row1 * v;
  direction = row2;
  float t0 = -1e30, t1 = 1e30;
  for (int a = 0; a < 3; ++a) {
    float o = origin[a], d = direction[a], h = halfSide[a];
    if (abs(d) < 1e-12) {
      if (o < -h || o > h) { value = nan; return; }
      continue;
    }
    float ta = (-h - o) / d, tb = (h - o) / d;
    t0 = max(t0, min(ta, tb));
    t1 = min(t1, max(ta, tb));
  }
  if (!(t1 > t0)) { value = nan; return; }
  int n = max(1, int(ceil((t1 - t0) / stepLength - 1e-3)));
  float dt = (t1 - t0) / float(n);
  float range = high - low;
  vec3 at = coordinateAt(t0 + 0.5 * dt);
  vec3 step = direction * dt * toIndex / size;
#if MODE == 3
  // The crossing is looked for first and shaded after the loop: a light loop body matters where
  // neighbouring fragments march in lockstep (llvmpipe's SIMD lanes).
  float before = nan, crossing = nan;
  int hit = -1;
  for (int k = 0; k < n; ++k, at += step) {
    float s = texture(volume, at).r;
    if (s >= isoLevel) {
      hit = k, crossing = s;
      break;
    }
    before = s;
  }
  if (hit < 0) {
    value = nan;
    return;
  }
  float t = t0 + (float(hit) + 0.5) * dt;
  if (!isnan(before) && crossing > before) t += (isoLevel - before) / (crossing - before) * dt - dt;
  value = low + isoShade(indexAt(t)) * range;
#else
  float best = -1e38, sum = 0.0, seen = 0.0;
  int count = 0;
  float perVoxel = dt / voxelStep;
  for (int k = 0; k < n; ++k, at += step) {
    float s = texture(volume, at).r;
    if (isnan(s)) continue;
    ++count;
#if MODE == 0
    best = max(best, s);
#elif MODE == 2
    sum += s;
#else
    seen += clamp((s - low) / range, 0.0, 1.0) * perVoxel;
    best = max(best, low + (s - low) * exp(-attenuation * max(seen - 1.0, 0.0)));
#endif
  }
#if MODE == 2
  value = count == 0 ? nan : sum / float(count);
#else
  value = count == 0 ? nan : best;
#endif
#endif
})";

}  // namespace

struct GlVolumeSink::Gl {
  QOpenGLFunctions_3_3_Core* f = nullptr;
  std::unique_ptr<QOpenGLShaderProgram> programs[4];  // per VolumeMode, made when first used
  QOpenGLVertexArrayObject vao;
  GLuint volume = 0, framebuffer = 0;
};

GlVolumeSink::GlVolumeSink() = default;
GlVolumeSink::~GlVolumeSink() = default;

void GlVolumeSink::setVolume(compute::Image volume) {
  volume_ = std::move(volume);
  volumePending_ = true;
}

void GlVolumeSink::releaseTexture() {
  if (!gl_) return;
  if (gl_->volume) gl_->f->glDeleteTextures(1, &gl_->volume);
  if (gl_->framebuffer) gl_->f->glDeleteFramebuffers(1, &gl_->framebuffer);
  gl_->vao.destroy();
  gl_.reset();
  volumePending_ = !volume_.empty();
}

void GlVolumeSink::fillTexture(unsigned glTexture, int width, int height) {
  error_.clear();
  if (volume_.empty()) return;
  if (!gl_) {
    auto gl = std::make_unique<Gl>();
    gl->f = QOpenGLVersionFunctionsFactory::get<QOpenGLFunctions_3_3_Core>(
        QOpenGLContext::currentContext());
    if (!gl->f) {
      error_ = "the view's OpenGL has no 3.3 core functions";
      return;
    }
    gl->vao.create();
    gl->f->glGenFramebuffers(1, &gl->framebuffer);
    gl->f->glGetIntegerv(GL_MAX_3D_TEXTURE_SIZE, &maxSide_);
    gl_ = std::move(gl);
    volumePending_ = true;
  }
  QOpenGLFunctions_3_3_Core& f = *gl_->f;
  const compute::Shape s = volume_.shape();
  if (volumePending_) {
    if (s.x > maxSide_ || s.y > maxSide_ || s.z > maxSide_) {
      error_ = "this OpenGL takes 3D textures of up to " + std::to_string(maxSide_) + " a side";
      return;
    }
    if (!gl_->volume) f.glGenTextures(1, &gl_->volume);
    f.glBindTexture(GL_TEXTURE_3D, gl_->volume);
    for (GLenum wrap : {GL_TEXTURE_WRAP_S, GL_TEXTURE_WRAP_T, GL_TEXTURE_WRAP_R})
      f.glTexParameteri(GL_TEXTURE_3D, wrap, GL_CLAMP_TO_EDGE);
    f.glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    f.glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    f.glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    f.glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    f.glTexImage3D(GL_TEXTURE_3D, 0, GL_R32F, GLsizei(s.x), GLsizei(s.y), GLsizei(s.z), 0, GL_RED,
                   GL_FLOAT, volume_.data());
    volumePending_ = false;
  }
  compute::VolumeRenderParams p = params_;
  p.width = width, p.height = height;
  const compute::VolumeGeometry g = compute::volumeGeometry(s, volume_.spacing, p);

  std::unique_ptr<QOpenGLShaderProgram>& made = gl_->programs[std::clamp(g.mode, 0, 3)];
  if (!made) {
    made = std::make_unique<QOpenGLShaderProgram>();
    const QByteArray source =
        "#version 330 core\n#define MODE " + QByteArray::number(g.mode) + "\n" + kFragmentShader;
    if (!made->addShaderFromSourceCode(QOpenGLShader::Vertex, kVertexShader) ||
        !made->addShaderFromSourceCode(QOpenGLShader::Fragment, source) || !made->link()) {
      error_ = "the volume shader did not build: " + made->log().toStdString();
      made.reset();
      return;
    }
  }
  GLint framebuffer = 0, viewport[4];
  f.glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &framebuffer);
  f.glGetIntegerv(GL_VIEWPORT, viewport);
  f.glBindFramebuffer(GL_FRAMEBUFFER, gl_->framebuffer);
  f.glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, glTexture, 0);
  if (f.glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) {
    f.glViewport(0, 0, width, height);
    QOpenGLShaderProgram& program = *made;
    program.bind();
    program.setUniformValue("volume", 0);
    auto vec3 = [&](const char* name, const float* v) {
      program.setUniformValue(name, v[0], v[1], v[2]);
    };
    vec3("row0", g.rotation), vec3("row1", g.rotation + 3), vec3("row2", g.rotation + 6);
    vec3("halfSide", g.half), vec3("toIndex", g.toIndex);
    program.setUniformValue("size", float(g.size[0]), float(g.size[1]), float(g.size[2]));
    program.setUniformValue("outSize", float(width), float(height));
    program.setUniformValue("pixel", g.pixel);
    program.setUniformValue("stepLength", g.step);
    program.setUniformValue("voxelStep", g.voxelStep);
    program.setUniformValue("low", g.low);
    program.setUniformValue("high", g.high);
    program.setUniformValue("attenuation", g.attenuation);
    program.setUniformValue("isoLevel", g.isoLevel);
    f.glActiveTexture(GL_TEXTURE0);
    f.glBindTexture(GL_TEXTURE_3D, gl_->volume);
    gl_->vao.bind();
    f.glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    gl_->vao.release();
    program.release();
    f.glBindTexture(GL_TEXTURE_3D, 0);
  } else {
    error_ = "the slice texture cannot be drawn into";
  }
  f.glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, 0, 0);
  f.glBindFramebuffer(GL_FRAMEBUFFER, GLuint(framebuffer));
  f.glViewport(viewport[0], viewport[1], viewport[2], viewport[3]);
}

}  // namespace stacklens::render
