// Analysis ▸ Measure PSF from stars/beads…: an empirical PSF from the data, as photutils'
// EPSFBuilder or a bead-averaging plugin in Fiji makes one: stars of the slice shown (2D) or beads
// of the whole stack (3D), clicked on the view or picked among the brightest isolated detected
// sources, are cut out, background-subtracted, recentred and median-stacked off the GUI thread
// (compute/psf/measured_psf.h); the PSF is previewed with its FWHM, used for deconvolution at
// once or saved with its spacing and the stars it came from.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <optional>
#include <vector>

#include "compute/psf/measured_psf.h"
#include "render/slice_view.h"
#include "ui/jobs/job_dialog.h"

namespace stacklens::ui {

class MainWindow;

class PsfMeasureDialog : public JobDialog {
  Q_OBJECT
 public:
  enum class Mode { Stars2D, Beads3D };
  enum Column { Number, X, Y, Z, Status };
  // The key of the star markers among the view's overlays (ui/display/view_decorations.h).
  static constexpr const char* kOverlayKey = "psf-measure-stars";

  explicit PsfMeasureDialog(MainWindow* window);
  ~PsfMeasureDialog() override;  // cancels a running job and waits for it

  void setMode(Mode mode);
  Mode mode() const { return Mode(mode_->currentIndex()); }
  // Stars in 0-based image pixels; z is the slice (only 3D uses it). A star within a pixel of one
  // in the list is not added twice.
  void addStar(compute::psf::PsfStar star);
  void removeSelected();
  void clearStars();
  const std::vector<compute::psf::PsfStar>& stars() const { return stars_; }
  // While on, a click on the view adds a star at the clicked pixel (of the slice shown in 3D).
  void setAddByClicking(bool on) { addByClicking_->setChecked(on); }
  // Adds the brightest isolated sources of the slice shown (compute::psf::pickPsfStars): those of
  // the sources table when the Processing dock segments, else of a segmentation run here on a
  // worker (5σ above the clipped background). Emits picked(count added).
  void pickFromSources();

  // Measure: on a worker, with the progress bar and Cancel; emits measured(), failed() or
  // cancelled().
  void measure();
  void start() override { measure(); }

  // Hands the PSF to the Processing dock's deconvolution ("measured from N stars").
  void useForDeconvolution();
  // Writes the PSF (FITS or TIFF by the extension, with its spacing and HISTORY lines naming the
  // stars and the parameters) on a worker, atomically; emits saved(path, "" or the error).
  void save(const QString& path);

  compute::psf::MeasuredPsfParams params() const;
  QString whyNotMeasurable(bool threeD, render::SliceData* slice) const;
  const compute::psf::MeasuredPsf& result() const { return result_; }
  QString describe() const;  // "measured from 12 stars"
  // The HISTORY lines a saved PSF carries.
  std::vector<std::string> history() const;

  QComboBox* modeBox() const { return mode_; }
  QTableWidget* starTable() const { return table_; }
  QSpinBox* pickCountBox() const { return pickCount_; }
  QSpinBox* sizeBox() const { return size_; }
  QSpinBox* sizeZBox() const { return sizeZ_; }
  QDoubleSpinBox* clipBox() const { return clip_; }
  QPushButton* measureButton() const { return startButton(); }
  QPushButton* useButton() const { return use_; }
  render::SliceView* preview() const { return preview_; }
  render::SliceView* sectionPreview() const { return section_; }  // XZ through the centre (3D)
  QString fwhmText() const { return fwhm_->text(); }
  QString status() const { return status_->text(); }

 signals:
  void starsChanged();
  void picked(int added);
  void measured();
  void saved(const QString& path, const QString& error);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void setInputsEnabled(bool enabled) override;
  void refreshTable();
  void refreshOverlay();
  void removeOverlay();
  void addPicked(const std::vector<compute::Source>& sources, int z, const QString& from);
  void showResult(compute::psf::MeasuredPsf result, std::vector<compute::psf::PsfStar> stars);
  void forgetResult();
  void chooseAndSave();

  MainWindow* window_;
  QComboBox* mode_;
  QTableWidget* table_;
  QPushButton *addByClicking_, *pick_, *remove_, *clear_;
  QSpinBox *pickCount_, *size_, *sizeZ_;
  QDoubleSpinBox *clip_, *saturation_;
  QLabel* fwhm_;
  QPushButton *use_, *saveButton_;
  QWidget* sectionHolder_;
  render::SliceView *preview_, *section_;

  std::vector<compute::psf::PsfStar> stars_;
  // The last measurement's verdict on each star, parallel to stars_ (none: not measured yet).
  std::vector<std::optional<compute::psf::PsfStarReport>> reports_;
  compute::psf::MeasuredPsf result_;
  std::vector<compute::psf::PsfStar> resultStars_;  // the stars result_ was measured from
  compute::psf::MeasuredPsfParams resultParams_;
  int resultSlice_ = 0;
  bool overlayShown_ = false;
  std::optional<int> pendingPick_;  // the slice whose sources table a pick waits for
  quint64 pickGeneration_ = 0;
  quint64 measureGeneration_ = 0;  // a result of an older stack is dropped
};

// Analysis ▸ Measure PSF from stars/beads…: the window's dialog, made (non-modal, deleted when
// closed) or raised.
PsfMeasureDialog* openPsfMeasure(MainWindow* window);
// Adds that action to the window's Analysis menu.
void installPsfMeasureTool(MainWindow* window);

}  // namespace stacklens::ui
