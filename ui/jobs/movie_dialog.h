// File ▸ Export movie…: the slider's range of slices, or a turn of the stack as the 3D view
// draws it, as MP4 (H.264), animated GIF or PNG frames, drawn as the view draws them (its
// colormap, scale, inversion and the current limits for every frame; NaN as the colormap's low
// end), at a chosen rate and size, off the GUI thread with a progress bar and Cancel (nothing is
// left behind).
#pragma once

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSpinBox>
#include <memory>
#include <vector>

#include "compute/params.h"
#include "io/stack.h"
#include "render/display_settings.h"
#include "ui/jobs/job_dialog.h"
#include "ui/volume/volume_source.h"

namespace stacklens::ui {

struct MovieRequest {
  std::shared_ptr<const io::StackReader> reader;
  render::DisplaySettings display;  // the view's
  std::vector<float> cdf;           // the view's, for the histogram-equalised scale
  QString colormapName;
  int first = 0, last = -1;  // the range (last < 0: the last slice)
  // The 3D view's volume and camera, when it shows one: a rotation movie starts from this view
  // and turns about its vertical axis (drawn on the GPU when one is usable, else the CPU).
  std::shared_ptr<const LoadedVolume> volume;
  compute::VolumeRenderParams view;
  bool viewOriginBottom = false;  // the 3D view's rows run up the screen (FITS)
};

class MovieDialog : public JobDialog {
  Q_OBJECT
 public:
  MovieDialog(MovieRequest request, QWidget* parent = nullptr);

  void start() override;
  QSpinBox* firstBox() const { return first_; }
  QSpinBox* lastBox() const { return last_; }
  QSpinBox* widthBox() const { return width_; }
  QSpinBox* heightBox() const { return height_; }
  QComboBox* kindBox() const { return kind_; }  // 0: slices, 1: 3D rotation
  QSpinBox* turnFramesBox() const { return turnFrames_; }
  QLineEdit* outputEdit() const { return output_; }

 signals:
  void finished(const QString& path);

 private:
  void setInputsEnabled(bool enabled) override;

  MovieRequest request_;
  QSpinBox *first_, *last_, *width_, *height_, *turnFrames_;
  QComboBox* kind_;
  QDoubleSpinBox* fps_;
  QLineEdit* output_;
};

class MainWindow;
// File ▸ Export movie…: the dialog with the view's display settings (and the 3D view's volume
// and camera when it shows one). Null without a stack.
MovieDialog* openMovieExport(MainWindow* window);

}  // namespace stacklens::ui
