// Processing ▸ PSF generator…: a PSF from a model (compute/psf/psf_models.h) — a Gaussian or
// Moffat star, or a Born & Wolf or Gibson & Lanni microscope PSF (widefield, confocal,
// two-photon) — made off the GUI thread with a progress bar and Cancel, previewed (its central
// plane), then used for deconvolution at once or saved with its spacing.
#pragma once

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QPushButton>
#include <QSpinBox>

#include "compute/image.h"
#include "compute/psf/psf_models.h"
#include "render/slice_view.h"
#include "ui/jobs/job_dialog.h"

namespace stacklens::ui {

class PsfDialog : public JobDialog {
  Q_OBJECT
 public:
  explicit PsfDialog(QWidget* parent = nullptr);

  void start() override;  // Generate
  // Writes the PSF (FITS or TIFF by the extension) with its spacing; returns an error or "".
  QString save(const QString& path) const;
  const compute::Image& psf() const { return psf_; }
  QString describe() const;  // e.g. "Gibson & Lanni widefield, NA 1.4, 530 nm"
  // The fields as they stand.
  bool starModel() const { return model_->currentIndex() < 2; }
  compute::psf::StarPsf starParams() const;
  compute::psf::MicroscopePsf microscopeParams() const;
  QComboBox* modelBox() const { return model_; }  // Gaussian, Moffat, Born & Wolf, Gibson & Lanni
  QComboBox* modeBox() const { return mode_; }
  QDoubleSpinBox* field(const QString& name) const;  // "fwhm", "na", "depth", ... (or null)
  QSpinBox* sizeBox() const { return size_; }
  QSpinBox* sizeZBox() const { return sizeZ_; }
  QPushButton* useButton() const { return use_; }
  render::SliceView* preview() const { return preview_; }
  QString status() const { return status_->text(); }

 signals:
  void finished();
  void usePsf(const compute::Image& psf, const QString& description);

 private:
  void showFields();
  void setInputsEnabled(bool enabled) override;

  QComboBox *model_, *mode_;
  QFormLayout* form_;
  QSpinBox *size_, *sizeZ_, *oversampling_;
  QPushButton *use_, *saveButton_;
  render::SliceView* preview_;
  compute::Image psf_;
};

class MainWindow;
// The processing dock's PSF ▸ Generate…: the generator, whose "Use for deconvolution" hands its
// PSF to the dock. Deleted when closed.
PsfDialog* openPsfGenerator(MainWindow* window);

}  // namespace stacklens::ui
