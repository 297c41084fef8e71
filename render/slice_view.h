// An OpenGL 3.3 view of one float32 slice: zoom/pan, colormap, scale and limits in the shader,
// and overlays (crosshair, line, region) for the analysis tools.
//
// A QOpenGLWindow (embedded with QWidget::createWindowContainer) rather than a QOpenGLWidget:
// a QOpenGLWidget makes Qt compose the whole top-level window through OpenGL on every frame,
// which under software rendering (Mesa llvmpipe, Xvfb) costs more per slider step than the
// slice's own frame.
#pragma once

#include <QOpenGLBuffer>
#include <QOpenGLFunctions_3_3_Core>
#include <QOpenGLShaderProgram>
#include <QOpenGLVertexArrayObject>
#include <QOpenGLWindow>
#include <QPointF>
#include <QRectF>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "render/composite_layer.h"
#include "render/display_settings.h"
#include "render/frame_timing.h"
#include "render/texture_sink.h"
#include "render/tile_grid.h"

class QPainter;

namespace stacklens::render {

// A slice's pixels, shared between the cache, the view and the analysis tools (never copied).
using SliceData = std::shared_ptr<const std::vector<float>>;

// Pixels of a display level (io/display_levels.h) covering the full-resolution pixels
// [x0, x1) × [y0, y1) of a plane too large to upload whole.
struct LevelPatch {
  SliceData pixels;
  int width = 0, height = 0;  // level pixels
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

class SliceView : public QOpenGLWindow, protected QOpenGLFunctions_3_3_Core {
  Q_OBJECT
 public:
  // What a left-button drag does. Orbit (the 3D view): drags and the wheel are reported through
  // orbited() and orbitZoomed() and move nothing themselves.
  enum class Tool { Pan, Line, Rectangle, Ellipse, Orbit };

  explicit SliceView(QWindow* parent = nullptr);
  ~SliceView() override;

  // Shows width × height pixels (row 0 first); uploaded at the next paint, not copied.
  void setSlice(SliceData data, int width, int height);
  // Convenience for tests and small images: copies the pixels.
  void setSlice(const float* data, int width, int height);
  // The texture is filled by sink (e.g. CUDA interop) at the next paint instead of an upload.
  void setExternalSlice(TextureSink* sink, int width, int height);
  // Whether a sink can fill a slice of this size: one texture, so not a plane drawn in tiles.
  bool acceptsExternalSlice(int width, int height) const;
  // Planes wider or taller than this are drawn as a grid of textures (default: the context's
  // GL_MAX_TEXTURE_SIZE; smaller values for tests).
  void setMaxTextureSide(int side);
  int maxTextureSide() const { return maxSideOverride_ > 0 ? maxSideOverride_ : maxTextureSize_; }
  // Shows a plane of width × height full-resolution pixels drawn from level patches instead of
  // its pixels: the first (coarse, the whole plane) under the later (finer, part of it). A patch
  // whose pixels are those already shown at its place is not uploaded again. setSlice ends it.
  void setLevelPatches(std::vector<LevelPatch> patches, int width, int height);
  const std::vector<LevelPatch>& levelPatches() const { return patches_; }
  void clearSlice();
  const SliceData& slice() const { return data_; }
  int sliceWidth() const { return width_; }
  int sliceHeight() const { return height_; }

  // Changing these re-uploads no pixels: the LUTs live in one texture, the scale selects one of
  // the compiled programs, the rest are uniforms (histogram equalisation recomputes a
  // 1024-entry CDF texture).
  void setDisplay(const DisplaySettings& display);
  const DisplaySettings& display() const { return display_; }
  void setLimits(float low, float high);
  // The CDF used for Scale::HistEq (recomputed from the slice when needed).
  const std::vector<float>& cdf();

  // Host uploads through a pixel buffer object instead of straight from client memory.
  // By default on for NVIDIA's OpenGL, off otherwise (decided when the context is made).
  void setUsePixelBuffer(bool on) {
    usePbo_ = on;
    pboChosen_ = true;
  }

  // Geometry: screen pixels per image pixel horizontally; a pixel is aspect times as tall as wide
  // (voxel spacing of the ortho views); FITS images have row 0 at the bottom.
  void fitToWindow();
  void setZoom(double zoom);  // 1 = one screen pixel per image pixel, keeps the centre
  double zoom() const { return zoom_; }
  QPointF centre() const { return centre_; }    // the image point at the widget's centre
  bool fitsWindow() const { return fitMode_; }  // zoom follows the window's size (Fit)
  // Shows zoom and centre as another view does (linked views); emits nothing.
  void setView(double zoom, QPointF centre);
  void setPixelAspect(double aspect);
  void setOriginBottom(bool bottom);
  bool originBottom() const { return originBottom_; }
  QPointF widgetToImage(QPointF widgetPos) const;  // pixel centres at integer coordinates
  QPointF imageToWidget(QPointF imagePos) const;

  // Draws a new frame at the next pass of the event loop (update() waits for a 5 ms timer).
  void scheduleFrame();

  // The last frame's paint, fill, draw and swap times (the scrub benchmark's render stages).
  const FrameTiming& lastFrame() const { return lastFrame_; }
  // GL_VENDOR and GL_RENDERER of the view's context (empty before it is initialised).
  const QString& glVendor() const { return glVendor_; }
  const QString& glRenderer() const { return glRenderer_; }

  // Renders the current state into an offscreen framebuffer and returns it (export, tests);
  // unlike QOpenGLWindow::grabFramebuffer it never returns a stale or undefined back buffer.
  QImage grabFramebuffer();

  void setTool(Tool tool) { tool_ = tool; }
  Tool tool() const { return tool_; }
  // Drawn with QPainter over the slice and the overlays in every frame (and in
  // grabFramebuffer): the colorbar and compass of ui/display/view_decorations.h; empty: nothing.
  void setDecoration(std::function<void(QPainter&, const SliceView&)> paint);
  void setCrosshair(std::optional<QPointF> imagePos);
  const std::optional<QPointF>& crosshair() const { return crosshair_; }
  void setLine(std::optional<std::pair<QPointF, QPointF>> line);
  void setRegion(std::optional<QRectF> rect, bool ellipse);
  // Swipe comparison: image columns from dividerX (image x, pixel centres at integers) to the
  // right show `second` (a host plane of the slice's size) instead of the slice, with a line at
  // the divider that a left drag moves (dividerMoved). Not for planes drawn in tiles.
  void setSwipe(SliceData second, double dividerX);
  void clearSwipe();
  // Channels blended additively instead of the slice (render/composite_layer.h), each of the
  // slice's size; an empty list shows the slice again.
  void setComposite(std::vector<CompositeChannel> channels);
  const std::vector<CompositeChannel>& composite() const { return composite_.channels(); }
  std::optional<double> divider() const { return second_ ? divider_ : std::nullopt; }

 signals:
  // A frame was handed to the window system (after its buffer swap; not for grabFramebuffer).
  void framePresented();
  void hovered(QPointF imagePos);  // image coordinates under the mouse
  void clicked(QPointF imagePos);  // a click without a drag (sets the crosshair)
  void lineDrawn(QPointF from, QPointF to);
  void regionDrawn(QRectF rect, bool ellipse);
  // The user zoomed or panned (wheel, drag, Fit, 1:1): for views linked to this one.
  void viewMoved(double zoom, QPointF centre);
  // Tool::Orbit: the mouse moved by delta (widget pixels) with the left button down; the wheel
  // asks for the picture factor times larger.
  void orbited(QPointF delta);
  void orbitZoomed(double factor);
  void dividerMoved(double imageX);  // the user dragged the swipe divider

 protected:
  void initializeGL() override;
  void paintGL() override;
  void resizeGL(int w, int h) override;
  bool event(QEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  QOpenGLShaderProgram* program(Scale scale, bool swipe = false);
  bool swiping() const {
    return second_ && !tiled() && second_->size() == size_t(width_) * height_;
  }
  void uploadSlice();
  void uploadTiles();  // a plane larger than one texture, from data_
  bool tiled() const {
    return patches_.empty() && (width_ > maxTextureSide() || height_ > maxTextureSide());
  }
  // Draws the level patches with the bound program; quadOf places a full-resolution box.
  void drawPatches(GLint filter, const std::function<void(double, double, double, double)>& quadOf);
  void uploadLuts();
  void paintOverlays();
  // paintGL's steps.
  void bindSliceTextures(GLint filter, FrameTiming& timing);
  void bindSecondTexture(GLint filter);
  void setDisplayUniforms(QOpenGLShaderProgram& program, bool swipe);
  void drawSlice(QOpenGLShaderProgram& program, GLint filter);
  void paintDecoration();
  void setQuad(QOpenGLShaderProgram& program, double x0, double y0, double x1, double y1);
  float ndcX(double x) const;  // widget pixels to normalised device coordinates
  float ndcY(double y) const;
  void drawLines(const std::vector<QPointF>& widgetPoints, GLenum mode, const QColor& colour);
  double verticalScale() const;  // signed screen pixels per image row

  SliceData data_;
  TextureSink* sink_ = nullptr;
  TextureSink* filledBy_ = nullptr;  // the sink that last filled the slice texture
  // Tells filledBy_ to let go of the texture (context current); makeCurrent: make it so first.
  void releaseFilledTexture(bool makeContextCurrent);
  bool uploadPending_ = false;
  int width_ = 0, height_ = 0;
  int texWidth_ = 0, texHeight_ = 0;
  DisplaySettings display_;
  std::vector<float> cdf_;
  bool cdfDirty_ = true;
  bool cdfUploadPending_ = true;
  bool usePbo_ = false, pboChosen_ = false;

  double zoom_ = 1.0, aspect_ = 1.0;
  QPointF centre_;
  bool fitMode_ = true;
  bool originBottom_ = false;
  std::function<void(QPainter&, const SliceView&)> decoration_;

  Tool tool_ = Tool::Pan;
  enum class Drag { None, Pan, Tool, Divider } drag_ = Drag::None;
  SliceData second_;
  bool secondPending_ = false;
  std::optional<double> divider_;
  GLuint secondTexture_ = 0;
  CompositeLayer composite_;
  QPointF pressPos_, lastPos_, pressImage_;
  bool moved_ = false;
  std::optional<QPointF> crosshair_;
  std::optional<std::pair<QPointF, QPointF>> line_;
  std::optional<QRectF> region_;
  bool regionEllipse_ = false;

  GLuint sliceTexture_ = 0, lutTexture_ = 0, cdfTexture_ = 0, pbo_ = 0;
  int maxTextureSize_ = 16384, maxSideOverride_ = 0;
  std::vector<TileRect> tiles_;  // when tiled(): where each of tileTextures_ lies
  std::vector<GLuint> tileTextures_;
  std::vector<LevelPatch> patches_;
  std::vector<GLuint> patchTextures_;
  std::vector<SliceData> patchUploaded_;  // the pixels each patch texture holds
  int lutCount_ = 0;
  bool framePosted_ = false;
  FrameTiming lastFrame_;
  QString glVendor_, glRenderer_;
  // Per scale, then the same with the swipe's second texture.
  std::array<std::unique_ptr<QOpenGLShaderProgram>, 2 * std::size(kAllScales)> programs_;
  QOpenGLVertexArrayObject vao_;
  QOpenGLShaderProgram overlayProgram_;
  QOpenGLVertexArrayObject overlayVao_;
  QOpenGLBuffer overlayBuffer_{QOpenGLBuffer::VertexBuffer};
};

}  // namespace stacklens::render
