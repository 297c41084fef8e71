// Draws a float32 slice as a textured quad; scale, limits and colormap are applied per fragment.
#include "render/slice_view.h"

#include <QCoreApplication>
#include <QMouseEvent>
#include <QOpenGLFramebufferObject>
#include <QOpenGLPaintDevice>
#include <QPainter>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "render/colormap.h"
#include "render/quad_shader.h"

namespace stacklens::render {

// Keep in step with colourIndex() in display_settings.cpp (the CPU twin used by tests).
// SCALE is defined per program (see program()): llvmpipe runs every branch of a chain of
// uniform ifs for each fragment, so one program per scale leaves each fragment only its own
// scale's work (figures in ui/PERFORMANCE.md).
static const char* kFragmentShader = R"(
uniform sampler2D slice;
uniform sampler2D luts;  // 256 x colormaps, RGBA8
uniform sampler2D cdf;   // 1024 x 1, R32F
uniform int lutRow;
uniform float low;
uniform float high;
uniform float expo;
uniform bool invert;
uniform vec4 nanColour;
#ifdef SWIPE
uniform sampler2D second;  // right of the divider
uniform float divide;      // the divider as a texture coordinate
#endif
in vec2 uv;
out vec4 colour;
float stretch(float x) {
#if SCALE == 1
  return log(expo * x + 1.0) / log(expo);
#elif SCALE == 2
  return sqrt(x);
#elif SCALE == 3
  return x * x;
#elif SCALE == 4
  float a = 10.0 * x;
  return log(a + sqrt(a * a + 1.0)) / 3.0;
#elif SCALE == 5
  return (pow(expo, x) - 1.0) / expo;
#elif SCALE == 6
  int n = textureSize(cdf, 0).x;
  return texelFetch(cdf, ivec2(min(int(x * float(n)), n - 1), 0), 0).r;
#else
  return x;
#endif
}
void main() {
#ifdef SWIPE
  float v = uv.x >= divide ? texture(second, uv).r : texture(slice, uv).r;
#else
  float v = texture(slice, uv).r;
#endif
  if (isnan(v) || !(v == v)) { colour = nanColour; return; }
  float x = clamp((v - low) / (high - low), 0.0, 1.0);
  float t = clamp(stretch(x), 0.0, 1.0);
  if (invert) t = 1.0 - t;
  colour = texelFetch(luts, ivec2(clamp(int(t * 255.0 + 0.5), 0, 255), lutRow), 0);
})";

static const char* kOverlayVertexShader = R"(#version 330 core
layout(location = 0) in vec2 position;
void main() { gl_Position = vec4(position, 0.0, 1.0); })";

static const char* kOverlayFragmentShader = R"(#version 330 core
uniform vec4 colour;
out vec4 fragment;
void main() { fragment = colour; })";

SliceView::SliceView(QWindow* parent) : QOpenGLWindow(QOpenGLWindow::NoPartialUpdate, parent) {
  // Presented means handed to the window system: after the swap, not when the draw is issued.
  connect(this, &QOpenGLWindow::frameSwapped, this, [this] {
    lastFrame_.swappedNs = steadyNowNs();
    emit framePresented();
  });
}

// QWindow::requestUpdate() (what update() calls) delivers the frame after a 5 ms platform timer
// (QT_QPA_UPDATE_IDLE_TIME), half the slider-step budget under software GL. Posting the update
// request ourselves draws at the next pass of the event loop; QPaintDeviceWindow paints on every
// UpdateRequest, so update() is not called as well (it would draw a second frame 5 ms later).
// Calls before the paint coalesce into one frame. A window that is not exposed draws when it is.
void SliceView::scheduleFrame() {
  if (framePosted_ || !isExposed()) return;
  framePosted_ = true;
  QCoreApplication::postEvent(this, new QEvent(QEvent::UpdateRequest));
}

bool SliceView::event(QEvent* event) {
  if (event->type() == QEvent::UpdateRequest) framePosted_ = false;
  return QOpenGLWindow::event(event);
}

// The program for a scale, built on first use (a few ms each; most sessions use one or two).
QOpenGLShaderProgram* SliceView::program(Scale scale, bool swipe) {
  auto& slot = programs_[static_cast<size_t>(scale) + (swipe ? std::size(kAllScales) : 0)];
  if (slot) return slot.get();
  slot = std::make_unique<QOpenGLShaderProgram>();
  const QByteArray fragment = QByteArray("#version 330 core\n#define SCALE ") +
                              QByteArray::number(static_cast<int>(scale)) + "\n" +
                              (swipe ? "#define SWIPE 1\n" : "") + kFragmentShader;
  if (!slot->addShaderFromSourceCode(QOpenGLShader::Vertex, kQuadVertexShader) ||
      !slot->addShaderFromSourceCode(QOpenGLShader::Fragment, fragment) || !slot->link())
    qWarning("SliceView: shader build failed: %s", qPrintable(slot->log()));
  return slot.get();
}

QImage SliceView::grabFramebuffer() {
  if (!isValid()) return {};
  makeCurrent();
  const QSize size = this->size() * devicePixelRatio();
  QOpenGLFramebufferObject fbo(size);
  fbo.bind();
  glViewport(0, 0, size.width(), size.height());
  const FrameTiming presented = lastFrame_;  // an offscreen paint is not a presented frame
  paintGL();
  lastFrame_ = presented;
  QImage image = fbo.toImage();
  fbo.release();
  doneCurrent();
  return image;
}

void SliceView::releaseFilledTexture(bool makeContextCurrent) {
  if (!filledBy_) return;
  const bool current = makeContextCurrent && isValid();
  if (current) makeCurrent();
  filledBy_->releaseTexture();
  filledBy_ = nullptr;
  if (current) doneCurrent();
}

SliceView::~SliceView() {
  if (!isValid()) return;
  makeCurrent();
  releaseFilledTexture(false);  // before the texture goes
  composite_.release(*this);
  GLuint textures[] = {sliceTexture_, lutTexture_, cdfTexture_, secondTexture_};
  glDeleteTextures(secondTexture_ ? 4 : 3, textures);
  if (!tileTextures_.empty())
    glDeleteTextures(static_cast<GLsizei>(tileTextures_.size()), tileTextures_.data());
  if (!patchTextures_.empty())
    glDeleteTextures(static_cast<GLsizei>(patchTextures_.size()), patchTextures_.data());
  if (pbo_) glDeleteBuffers(1, &pbo_);
  for (auto& p : programs_) p.reset();
  vao_.destroy();
  overlayVao_.destroy();
  overlayBuffer_.destroy();
  doneCurrent();
}

void SliceView::setSlice(SliceData data, int width, int height) {
  const bool sizeChanged = width != width_ || height != height_;
  patches_.clear();
  data_ = std::move(data);
  sink_ = nullptr;
  width_ = data_ ? width : 0;
  height_ = data_ ? height : 0;
  uploadPending_ = true;
  cdfDirty_ = true;
  if (sizeChanged && fitMode_) fitToWindow();
  scheduleFrame();
}

void SliceView::setLevelPatches(std::vector<LevelPatch> patches, int width, int height) {
  if (filledBy_) releaseFilledTexture(true);
  const bool sizeChanged = width != width_ || height != height_;
  data_.reset();
  sink_ = nullptr;
  second_.reset();
  // The coarse (first) patch stands for the plane in equalisation: only it redoes the CDF.
  const bool coarseChanged =
      patches_.empty() || patches.empty() || patches_.front().pixels != patches.front().pixels;
  patches_ = std::move(patches);
  width_ = patches_.empty() ? 0 : width;
  height_ = patches_.empty() ? 0 : height;
  uploadPending_ = false;
  if (coarseChanged || sizeChanged) cdfDirty_ = true;
  if (sizeChanged && fitMode_) fitToWindow();
  scheduleFrame();
}

void SliceView::setSlice(const float* data, int width, int height) {
  setSlice(std::make_shared<const std::vector<float>>(data, data + size_t(width) * height), width,
           height);
}

void SliceView::setExternalSlice(TextureSink* sink, int width, int height) {
  if (filledBy_ && filledBy_ != sink) releaseFilledTexture(true);
  const bool sizeChanged = width != width_ || height != height_;
  data_.reset();
  patches_.clear();
  sink_ = sink;
  width_ = width;
  height_ = height;
  uploadPending_ = true;
  if (sizeChanged && fitMode_) fitToWindow();
  scheduleFrame();
}

bool SliceView::acceptsExternalSlice(int width, int height) const {
  return width <= maxTextureSide() && height <= maxTextureSide();
}

void SliceView::setMaxTextureSide(int side) {
  maxSideOverride_ = side;
  texWidth_ = texHeight_ = 0;  // lay the plane out again
  uploadPending_ = true;
  scheduleFrame();
}

void SliceView::setSwipe(SliceData second, double dividerX) {
  second_ = std::move(second);
  divider_ = dividerX;
  secondPending_ = true;
  scheduleFrame();
}

void SliceView::setComposite(std::vector<CompositeChannel> channels) {
  composite_.set(std::move(channels), width_, height_);
  scheduleFrame();
}

void SliceView::clearSwipe() {
  if (!second_) return;
  second_.reset();
  scheduleFrame();
}

void SliceView::clearSlice() {
  releaseFilledTexture(true);  // its owner may delete the sink next
  data_.reset();
  patches_.clear();
  sink_ = nullptr;
  width_ = height_ = 0;
  scheduleFrame();
}

void SliceView::setDisplay(const DisplaySettings& display) {
  if (display.limits.low != display_.limits.low || display.limits.high != display_.limits.high)
    cdfDirty_ = true;
  display_ = display;
  scheduleFrame();
}

void SliceView::setLimits(float low, float high) {
  DisplaySettings d = display_;
  d.limits = {low, high};
  setDisplay(d);
}

const std::vector<float>& SliceView::cdf() {
  if (cdfDirty_) {
    // A plane drawn from levels: its coarse level stands for it.
    const SliceData& from = data_ || patches_.empty() ? data_ : patches_.front().pixels;
    if (from)
      cdf_ = equalisationCdf(from->data(), from->size(), display_.limits.low, display_.limits.high,
                             cdfStride(from->size()));
    else
      cdf_ = equalisationCdf(nullptr, 0, 0.f, 1.f);
    cdfDirty_ = false;
    cdfUploadPending_ = true;
  }
  return cdf_;
}

void SliceView::fitToWindow() {
  fitMode_ = true;
  if (width_ > 0 && height_ > 0) {
    zoom_ = std::min(double(width()) / width_, double(height()) / (height_ * aspect_));
    if (!(zoom_ > 0)) zoom_ = 1.0;
    centre_ = QPointF((width_ - 1) / 2.0, (height_ - 1) / 2.0);
  }
  scheduleFrame();
  emit viewMoved(zoom_, centre_);
}

void SliceView::setZoom(double zoom) {
  fitMode_ = false;
  zoom_ = std::clamp(zoom, 1e-3, 1e3);
  scheduleFrame();
  emit viewMoved(zoom_, centre_);
}

void SliceView::setView(double zoom, QPointF centre) {
  fitMode_ = false;
  zoom_ = std::clamp(zoom, 1e-3, 1e3);
  centre_ = centre;
  scheduleFrame();
}

void SliceView::setPixelAspect(double aspect) {
  aspect_ = aspect > 0 && std::isfinite(aspect) ? aspect : 1.0;
  if (fitMode_) fitToWindow();
  scheduleFrame();
}

void SliceView::setDecoration(std::function<void(QPainter&, const SliceView&)> paint) {
  decoration_ = std::move(paint);
  scheduleFrame();
}

void SliceView::setOriginBottom(bool bottom) {
  originBottom_ = bottom;
  scheduleFrame();
}

double SliceView::verticalScale() const { return zoom_ * aspect_ * (originBottom_ ? -1.0 : 1.0); }

QPointF SliceView::widgetToImage(QPointF p) const {
  return {centre_.x() + (p.x() - width() / 2.0) / zoom_,
          centre_.y() + (p.y() - height() / 2.0) / verticalScale()};
}

QPointF SliceView::imageToWidget(QPointF p) const {
  return {width() / 2.0 + (p.x() - centre_.x()) * zoom_,
          height() / 2.0 + (p.y() - centre_.y()) * verticalScale()};
}

void SliceView::setCrosshair(std::optional<QPointF> p) {
  crosshair_ = p;
  scheduleFrame();
}

void SliceView::setLine(std::optional<std::pair<QPointF, QPointF>> line) {
  line_ = line;
  scheduleFrame();
}

void SliceView::setRegion(std::optional<QRectF> rect, bool ellipse) {
  region_ = rect;
  regionEllipse_ = ellipse;
  scheduleFrame();
}

void SliceView::initializeGL() {
  initializeOpenGLFunctions();
  glVendor_ = QString::fromLatin1(reinterpret_cast<const char*>(glGetString(GL_VENDOR)));
  glRenderer_ = QString::fromLatin1(reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  GLint maxSize = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &maxSize);
  if (maxSize > 0) maxTextureSize_ = maxSize;
  tileTextures_.clear();  // a new context: the old names are gone with it
  patchTextures_.clear();
  patchUploaded_.clear();
  secondTexture_ = 0;
  secondPending_ = true;
  // NVIDIA's OpenGL fills a large texture from client memory far more slowly than from a copy
  // into a mapped pixel buffer; llvmpipe is faster without one (figures in ui/PERFORMANCE.md).
  // STACKLENS_GL_PBO=0/1 overrides the choice.
  const QByteArray pbo = qgetenv("STACKLENS_GL_PBO");
  if (!pbo.isEmpty())
    usePbo_ = pbo == "1";
  else if (!pboChosen_)
    usePbo_ = glVendor_.contains("NVIDIA");
  for (auto& p : programs_) p.reset();  // a new context (the window was re-created)
  composite_.forget();
  program(display_.scale);
  vao_.create();
  if (!overlayProgram_.addShaderFromSourceCode(QOpenGLShader::Vertex, kOverlayVertexShader) ||
      !overlayProgram_.addShaderFromSourceCode(QOpenGLShader::Fragment, kOverlayFragmentShader) ||
      !overlayProgram_.link())
    qWarning("SliceView: overlay shader build failed: %s", qPrintable(overlayProgram_.log()));
  overlayVao_.create();
  overlayBuffer_.create();
  overlayBuffer_.setUsagePattern(QOpenGLBuffer::StreamDraw);
  GLuint textures[3];
  glGenTextures(3, textures);
  sliceTexture_ = textures[0];
  lutTexture_ = textures[1];
  cdfTexture_ = textures[2];
  for (GLuint t : textures) {
    glBindTexture(GL_TEXTURE_2D, t);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  }
  uploadLuts();
  texWidth_ = texHeight_ = 0;
  uploadPending_ = true;
  cdfUploadPending_ = true;
}

// All colormaps in one 256 × N texture: switching colormaps only changes a uniform.
void SliceView::uploadLuts() {
  const QStringList names = colormapNames();
  std::vector<uint32_t> rows;
  for (const QString& name : names) {
    const Colormap map = loadColormap(name);
    rows.insert(rows.end(), map.rgba.begin(), map.rgba.end());
  }
  lutCount_ = static_cast<int>(names.size());
  glBindTexture(GL_TEXTURE_2D, lutTexture_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 256, lutCount_, 0, GL_RGBA, GL_UNSIGNED_BYTE,
               rows.data());
}

void SliceView::uploadSlice() {
  if (tiled()) return uploadTiles();
  glBindTexture(GL_TEXTURE_2D, sliceTexture_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  if (texWidth_ != width_ || texHeight_ != height_) {
    releaseFilledTexture(false);  // registered storage must not be re-specified
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, width_, height_, 0, GL_RED, GL_FLOAT, nullptr);
    texWidth_ = width_;
    texHeight_ = height_;
  }
  if (sink_) {
    sink_->fillTexture(sliceTexture_, width_, height_);
    filledBy_ = sink_;
    return;
  }
  if (!data_) return;
  if (usePbo_) {
    const auto bytes = static_cast<GLsizeiptr>(data_->size() * sizeof(float));
    if (!pbo_) glGenBuffers(1, &pbo_);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo_);
    glBufferData(GL_PIXEL_UNPACK_BUFFER, bytes, nullptr, GL_STREAM_DRAW);  // orphan the old one
    void* mapped = glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, bytes,
                                    GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT);
    if (mapped) {
      std::memcpy(mapped, data_->data(), static_cast<size_t>(bytes));
      glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
      glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width_, height_, GL_RED, GL_FLOAT, nullptr);
      glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
      return;
    }
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);  // mapping failed: fall back to a plain upload
  }
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width_, height_, GL_RED, GL_FLOAT, data_->data());
}

// Each tile a texture of its own, filled from the plane's rows (GL_UNPACK_ROW_LENGTH: no copy).
void SliceView::uploadTiles() {
  releaseFilledTexture(false);  // a sink's texture is not used for tiled planes
  if (texWidth_ != width_ || texHeight_ != height_ || tileTextures_.empty()) {
    tiles_ = tileGrid(width_, height_, maxTextureSide());
    if (!tileTextures_.empty())
      glDeleteTextures(static_cast<GLsizei>(tileTextures_.size()), tileTextures_.data());
    tileTextures_.assign(tiles_.size(), 0);
    glGenTextures(static_cast<GLsizei>(tileTextures_.size()), tileTextures_.data());
    for (size_t i = 0; i < tiles_.size(); ++i) {
      glBindTexture(GL_TEXTURE_2D, tileTextures_[i]);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
      glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, tiles_[i].width, tiles_[i].height, 0, GL_RED,
                   GL_FLOAT, nullptr);
    }
    texWidth_ = width_;
    texHeight_ = height_;
  }
  if (!data_) return;
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, width_);
  for (size_t i = 0; i < tiles_.size(); ++i) {
    const TileRect& t = tiles_[i];
    glBindTexture(GL_TEXTURE_2D, tileTextures_[i]);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, t.width, t.height, GL_RED, GL_FLOAT,
                    data_->data() + size_t(t.y0) * size_t(width_) + size_t(t.x0));
  }
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
}

// One texture per patch, uploaded only when its pixels change: a patch takes the texture that
// holds its pixels already (wherever it stood in the list before), so a refinement over the same
// coarse level, or a tile that stays in view while others come and go, is not uploaded again.
void SliceView::drawPatches(GLint filter,
                            const std::function<void(double, double, double, double)>& quadOf) {
  std::vector<int> slotOf(patches_.size(), -1);
  std::vector<char> taken(patchTextures_.size(), 0);
  for (size_t i = 0; i < patches_.size(); ++i)
    for (size_t s = 0; s < patchTextures_.size() && patches_[i].pixels; ++s)
      if (!taken[s] && patchUploaded_[s] == patches_[i].pixels) {
        slotOf[i] = int(s);
        taken[s] = 1;
        break;
      }
  size_t free = 0;
  for (size_t i = 0; i < patches_.size(); ++i) {
    if (slotOf[i] >= 0) continue;
    while (free < taken.size() && taken[free]) ++free;
    if (free == taken.size()) {
      GLuint texture = 0;
      glGenTextures(1, &texture);
      glBindTexture(GL_TEXTURE_2D, texture);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
      patchTextures_.push_back(texture);
      patchUploaded_.emplace_back();
      taken.push_back(0);
    }
    slotOf[i] = int(free);
    taken[free] = 1;
    patchUploaded_[free].reset();  // to be filled below
  }
  // Textures no patch uses now keep no pixels alive.
  for (size_t s = 0; s < taken.size(); ++s)
    if (!taken[s]) patchUploaded_[s].reset();
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  for (size_t i = 0; i < patches_.size(); ++i) {
    const LevelPatch& patch = patches_[i];
    if (!patch.pixels || patch.width <= 0 || patch.height <= 0) continue;
    const size_t s = size_t(slotOf[i]);
    glBindTexture(GL_TEXTURE_2D, patchTextures_[s]);
    if (patchUploaded_[s] != patch.pixels) {
      glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, patch.width, patch.height, 0, GL_RED, GL_FLOAT,
                   patch.pixels->data());
      patchUploaded_[s] = patch.pixels;
    }
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
    quadOf(patch.x0, patch.y0, patch.x1, patch.y1);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  }
}

void SliceView::resizeGL(int, int) {
  if (fitMode_) fitToWindow();
}

void SliceView::paintGL() {
  FrameTiming timing;
  timing.paintStartNs = timing.fillEndNs = steadyNowNs();
  glDisable(GL_BLEND);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_SCISSOR_TEST);
  glClearColor(0.12f, 0.12f, 0.14f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (width_ > 0 && height_ > 0) {
    const GLint filter = display_.smooth ? GL_LINEAR : GL_NEAREST;
    bindSliceTextures(filter, timing);
    const bool swipe = swiping();
    if (swipe) bindSecondTexture(filter);
    QOpenGLShaderProgram& p = *program(display_.scale, swipe);
    p.bind();
    setDisplayUniforms(p, swipe);
    drawSlice(p, filter);
    p.release();
    if (crosshair_ || line_ || region_ || swipe) paintOverlays();
    if (decoration_) paintDecoration();
  }
  timing.paintEndNs = steadyNowNs();
  lastFrame_ = timing;
}

float SliceView::ndcX(double x) const { return float(2.0 * x / std::max(1, width()) - 1.0); }
float SliceView::ndcY(double y) const { return float(1.0 - 2.0 * y / std::max(1, height())); }

// The quad of image pixels [x0, x1) × [y0, y1) in normalised device coordinates.
void SliceView::setQuad(QOpenGLShaderProgram& program, double x0, double y0, double x1, double y1) {
  const QPointF a = imageToWidget({x0 - 0.5, y0 - 0.5});
  const QPointF b = imageToWidget({x1 - 0.5, y1 - 0.5});
  program.setUniformValue("quad", ndcX(a.x()), ndcY(a.y()), ndcX(b.x()), ndcY(b.y()));
}

// Units 0, 1, 2: the slice (uploaded first when a new one is pending), the colour maps and the
// equalisation's CDF; unit 0 is left active.
void SliceView::bindSliceTextures(GLint filter, FrameTiming& timing) {
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, sliceTexture_);
  if (uploadPending_) {
    timing.filled = true;
    timing.external = sink_ != nullptr;
    uploadSlice();
    uploadPending_ = false;
    timing.fillEndNs = steadyNowNs();
  }
  glBindTexture(GL_TEXTURE_2D, sliceTexture_);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, lutTexture_);
  glActiveTexture(GL_TEXTURE2);
  glBindTexture(GL_TEXTURE_2D, cdfTexture_);
  if (display_.scale == Scale::HistEq) {
    cdf();
    if (cdfUploadPending_) {
      glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, kCdfSize, 1, 0, GL_RED, GL_FLOAT, cdf_.data());
      cdfUploadPending_ = false;
    }
  } else if (cdfUploadPending_) {
    // Keep a valid texture bound even when equalisation is off.
    const float ramp[2] = {0.5f, 1.f};
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, 2, 1, 0, GL_RED, GL_FLOAT, ramp);
  }
  glActiveTexture(GL_TEXTURE0);
}

// Unit 3: the swipe's second image, made on first use and uploaded when a new one is pending.
void SliceView::bindSecondTexture(GLint filter) {
  glActiveTexture(GL_TEXTURE3);
  if (!secondTexture_) {
    glGenTextures(1, &secondTexture_);
    glBindTexture(GL_TEXTURE_2D, secondTexture_);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  }
  glBindTexture(GL_TEXTURE_2D, secondTexture_);
  if (secondPending_) {
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, width_, height_, 0, GL_RED, GL_FLOAT, second_->data());
    secondPending_ = false;
  }
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
  glActiveTexture(GL_TEXTURE0);
}

// The bound program's textures, the whole slice's quad and the display settings.
void SliceView::setDisplayUniforms(QOpenGLShaderProgram& p, bool swipe) {
  if (swipe) {
    p.setUniformValue("second", 3);
    p.setUniformValue("divide", float((*divider_ + 0.5) / width_));
  }
  setQuad(p, 0, 0, width_, height_);
  p.setUniformValue("slice", 0);
  p.setUniformValue("luts", 1);
  p.setUniformValue("cdf", 2);
  p.setUniformValue("lutRow", std::max(0, int(colormapNames().indexOf(display_.colormap))));
  p.setUniformValue("low", display_.limits.low);
  p.setUniformValue("high", display_.limits.high);
  p.setUniformValue("expo", display_.exponent);
  p.setUniformValue("invert", display_.invert);
  p.setUniformValue("nanColour", display_.nanColour);
}

// The slice as it is held: composited channels, display-level patches, one texture, or tiles.
void SliceView::drawSlice(QOpenGLShaderProgram& p, GLint filter) {
  vao_.bind();
  if (composite_.active(width_, height_) && !tiled()) {
    p.release();
    const QPointF a = imageToWidget({-0.5, -0.5});
    const QPointF b = imageToWidget({width_ - 0.5, height_ - 0.5});
    const float quad[4] = {ndcX(a.x()), ndcY(a.y()), ndcX(b.x()), ndcY(b.y())};
    composite_.draw(*this, quad, lutTexture_, filter);
  } else if (!patches_.empty()) {
    drawPatches(filter,
                [&](double x0, double y0, double x1, double y1) { setQuad(p, x0, y0, x1, y1); });
  } else if (!tiled()) {
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  } else {
    for (size_t i = 0; i < tiles_.size() && i < tileTextures_.size(); ++i) {
      const TileRect& t = tiles_[i];
      glBindTexture(GL_TEXTURE_2D, tileTextures_[i]);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
      setQuad(p, t.x0, t.y0, t.x0 + t.width, t.y0 + t.height);
      glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    }
  }
  vao_.release();
}

// Into whichever framebuffer is bound (the window's, or grabFramebuffer's).
void SliceView::paintDecoration() {
  QOpenGLPaintDevice device(size() * devicePixelRatio());
  device.setDevicePixelRatio(devicePixelRatio());
  QPainter painter(&device);
  painter.setRenderHint(QPainter::Antialiasing);
  decoration_(painter, *this);
}

// Overlays are plain GL lines: QPainter on a GL surface costs more per frame than the slice.
void SliceView::drawLines(const std::vector<QPointF>& points, GLenum mode, const QColor& colour) {
  std::vector<float> ndc;
  ndc.reserve(points.size() * 2);
  for (const QPointF& p : points) {
    ndc.push_back(float(2.0 * p.x() / std::max(1, width()) - 1.0));
    ndc.push_back(float(1.0 - 2.0 * p.y() / std::max(1, height())));
  }
  overlayProgram_.bind();
  overlayProgram_.setUniformValue("colour", colour);
  overlayVao_.bind();
  overlayBuffer_.bind();
  overlayBuffer_.allocate(ndc.data(), static_cast<int>(ndc.size() * sizeof(float)));
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
  glDrawArrays(mode, 0, static_cast<GLsizei>(points.size()));
  overlayBuffer_.release();
  overlayVao_.release();
  overlayProgram_.release();
}

void SliceView::paintOverlays() {
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  if (swiping()) {
    const double x = imageToWidget({*divider_, 0}).x();
    drawLines({{x, 0}, {x, double(height())}}, GL_LINES, QColor(255, 255, 255, 220));
  }
  if (crosshair_) {
    const QPointF c = imageToWidget(*crosshair_);
    drawLines({{0, c.y()}, {double(width()), c.y()}, {c.x(), 0}, {c.x(), double(height())}},
              GL_LINES, QColor(0, 255, 120, 150));
  }
  if (line_)
    drawLines({imageToWidget(line_->first), imageToWidget(line_->second)}, GL_LINES,
              QColor(255, 220, 0));
  if (region_) {
    const QRectF r = QRectF(imageToWidget(region_->topLeft() - QPointF(0.5, 0.5)),
                            imageToWidget(region_->bottomRight() + QPointF(0.5, 0.5)))
                         .normalized();
    std::vector<QPointF> outline;
    if (regionEllipse_) {
      for (int i = 0; i < 96; ++i) {
        const double a = 2.0 * M_PI * i / 96;
        outline.emplace_back(r.center().x() + r.width() / 2 * std::cos(a),
                             r.center().y() + r.height() / 2 * std::sin(a));
      }
    } else {
      outline = {r.topLeft(), r.topRight(), r.bottomRight(), r.bottomLeft()};
    }
    drawLines(outline, GL_LINE_LOOP, QColor(0, 200, 255));
  }
  glDisable(GL_BLEND);
}

void SliceView::wheelEvent(QWheelEvent* event) {
  if (tool_ == Tool::Orbit) {
    emit orbitZoomed(std::pow(1.0015, event->angleDelta().y()));
    event->accept();
    return;
  }
  if (width_ == 0) return;
  const QPointF pos = event->position();
  const QPointF anchor = widgetToImage(pos);
  zoom_ = std::clamp(zoom_ * std::pow(1.0015, event->angleDelta().y()), 1e-3, 1e3);
  fitMode_ = false;
  // Keep the image point under the cursor where it is.
  centre_ = QPointF(anchor.x() - (pos.x() - width() / 2.0) / zoom_,
                    anchor.y() - (pos.y() - height() / 2.0) / verticalScale());
  scheduleFrame();
  emit viewMoved(zoom_, centre_);
  event->accept();
}

void SliceView::mousePressEvent(QMouseEvent* event) {
  pressPos_ = lastPos_ = event->position();
  pressImage_ = widgetToImage(pressPos_);
  moved_ = false;
  if (event->button() == Qt::LeftButton && swiping() &&
      std::abs(pressPos_.x() - imageToWidget({*divider_, 0}).x()) <= 6) {
    drag_ = Drag::Divider;  // the divider is grabbed whatever the tool
    return;
  }
  if (event->button() == Qt::MiddleButton ||
      (event->button() == Qt::LeftButton && tool_ == Tool::Pan))
    drag_ = Drag::Pan;
  else if (event->button() == Qt::LeftButton)
    drag_ = Drag::Tool;
}

void SliceView::mouseMoveEvent(QMouseEvent* event) {
  const QPointF pos = event->position();
  if ((pos - pressPos_).manhattanLength() > 3) moved_ = true;
  if (drag_ == Drag::Divider) {
    divider_ = std::clamp(widgetToImage(pos).x(), -0.5, width_ - 0.5);
    scheduleFrame();
    emit dividerMoved(*divider_);
  } else if (drag_ == Drag::Pan) {
    const QPointF d = pos - lastPos_;
    centre_ -= QPointF(d.x() / zoom_, d.y() / verticalScale());
    fitMode_ = false;
    scheduleFrame();
    emit viewMoved(zoom_, centre_);
  } else if (drag_ == Drag::Tool && tool_ == Tool::Orbit) {
    emit orbited(pos - lastPos_);
  } else if (drag_ == Drag::Tool && moved_) {
    const QPointF here = widgetToImage(pos);
    if (tool_ == Tool::Line) {
      line_ = std::make_pair(pressImage_, here);
    } else {
      region_ = QRectF(pressImage_, here).normalized();
      regionEllipse_ = tool_ == Tool::Ellipse;
    }
    scheduleFrame();
  }
  lastPos_ = pos;
  emit hovered(widgetToImage(pos));
}

void SliceView::mouseReleaseEvent(QMouseEvent* event) {
  const Drag drag = drag_;
  drag_ = Drag::None;
  if (drag == Drag::Divider) return;
  if (!moved_) {
    if (event->button() == Qt::LeftButton) emit clicked(widgetToImage(event->position()));
    return;
  }
  if (drag == Drag::Tool && tool_ != Tool::Orbit) {
    if (tool_ == Tool::Line && line_)
      emit lineDrawn(line_->first, line_->second);
    else if (region_)
      emit regionDrawn(*region_, regionEllipse_);
  }
}

}  // namespace stacklens::render
