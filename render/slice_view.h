// An OpenGL widget that draws one float32 slice; scaling and colour are applied in the shader.
#pragma once

#include <QOpenGLBuffer>
#include <QOpenGLFunctions_3_3_Core>
#include <QOpenGLShaderProgram>
#include <QOpenGLVertexArrayObject>
#include <QOpenGLWidget>
#include <vector>

namespace stacklens::render {

class SliceView : public QOpenGLWidget, protected QOpenGLFunctions_3_3_Core {
  Q_OBJECT
 public:
  explicit SliceView(QWidget* parent = nullptr);
  ~SliceView() override;

  // Copies the slice and uploads it at the next paint.
  void setSlice(const float* data, int width, int height);
  void setLimits(float low, float high);
  int sliceWidth() const { return width_; }
  int sliceHeight() const { return height_; }

 signals:
  void framePresented();

 protected:
  void initializeGL() override;
  void paintGL() override;

 private:
  std::vector<float> pending_;
  bool uploadPending_ = false;
  int width_ = 0, height_ = 0;
  float low_ = 0.f, high_ = 1.f;
  GLuint texture_ = 0;
  QOpenGLShaderProgram program_;
  QOpenGLVertexArrayObject vao_;
};

}  // namespace stacklens::render
