// View ▸ Contours: contour lines of the shown slice, or of the same slice of another file of the
// same size, at levels evenly spaced inside the display limits (a count) or listed, after an
// optional Gaussian smoothing; computed on a worker (compute/contours.h), drawn over the view
// (ui/display/view_decorations.h) and exported as DS9 regions.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QThreadPool>
#include <QWidget>
#include <memory>
#include <vector>

#include "compute/contours.h"
#include "io/stack.h"
#include "render/slice_view.h"

namespace stacklens::ui {

class ViewDecorations;

class ContoursPanel : public QWidget {
  Q_OBJECT
 public:
  ContoursPanel(ViewDecorations* decorations, QWidget* parent = nullptr);
  ~ContoursPanel() override;

  void setStack(std::shared_ptr<const io::StackReader> reader);
  // The slice shown (its data) and the display limits: contours follow both.
  void setSlice(int z, render::SliceData data, int width, int height);
  void setLimits(float low, float high);
  void setDrawing(bool on);
  bool drawing() const { return on_->isChecked(); }
  // Levels: a count inside the limits, or a list ("1, 2.5, 4").
  void setLevelCount(int count);
  void setLevelList(const QString& list);
  // Contours of this file's slice instead of the shown one ("" for the shown slice again).
  void setSourceFile(const QString& path);
  std::vector<double> levels() const;
  const std::vector<compute::ContourLine>& lines() const { return lines_; }
  // Writes the lines as a DS9 region file (image coordinates): closed lines as polygons, open
  // ones as connected line segments, each tagged with its level. Returns an error or "".
  QString exportRegions(const QString& path) const;
  QString status() const { return status_->text(); }

 signals:
  void contoursReady(int z);  // lines() are the shown slice's
  void exportRequested();     // "Export to DS9 regions…" (the window asks for a name)

 private:
  void recompute();

  ViewDecorations* decorations_;
  QCheckBox* on_;
  QComboBox* mode_;
  QSpinBox* count_;
  QLineEdit* list_;
  QDoubleSpinBox* smoothing_;
  QLabel* source_;
  QLabel* status_;
  QThreadPool pool_;
  std::shared_ptr<const io::StackReader> stack_, other_;
  render::SliceData slice_;
  int z_ = 0, width_ = 0, height_ = 0;
  float low_ = 0, high_ = 1;
  std::vector<compute::ContourLine> lines_;
  quint64 generation_ = 0;
};

}  // namespace stacklens::ui
