// The window's tool bar: the view's mouse tool (pan, line, rectangle, ellipse), Fit and 1:1, and
// the HDU and plane choosers of the open file (hidden or disabled when there is one).
#pragma once

#include <QComboBox>
#include <QSpinBox>
#include <QToolBar>

#include "io/stack.h"
#include "render/slice_view.h"

namespace stacklens::ui {

class ToolsBar : public QToolBar {
  Q_OBJECT
 public:
  ToolsBar(render::SliceView* view, QWidget* parent = nullptr);

  // The open file's image HDUs and planes, the current ones chosen (no signal).
  void showStack(const io::StackInfo& info);
  QComboBox* hduBox() const { return hdu_; }
  QSpinBox* planeBox() const { return plane_; }

 signals:
  void hduChosen(int hdu);
  void planeChosen(int plane);

 private:
  QComboBox* hdu_;
  QSpinBox* plane_;
  QAction* planeLabel_;
  QAction* planeAction_;
};

}  // namespace stacklens::ui
