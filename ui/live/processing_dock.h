// The processing dock: the pipeline editor (enable box and parameters per operation, presets,
// PSF file or σ, 2D/3D and slab width), backend choice CPU / GPU / Compare, view choice, cache
// size, and progress with a Cancel button for slow jobs.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "compute/pipeline.h"

namespace stacklens::ui {

class ProcessingDock : public QDockWidget {
  Q_OBJECT
 public:
  enum class BackendChoice { Cpu, Gpu, Compare };
  // Swipe: raw left of a draggable divider, processed right of it (Compare: the CPU's result
  // left, the GPU's right). Difference: the processed slice, and beside it the difference of the
  // compared backends (Compare) or processed − raw.
  enum class ViewMode { Raw, Processed, Split, Blink, Swipe, Difference };

  explicit ProcessingDock(QWidget* parent = nullptr);

  compute::Pipeline pipeline() const;
  void setPipeline(const compute::Pipeline& pipeline);  // updates the widgets, emits once
  // The same, naming the pipeline's PSF as psfName (and psfFile, the file it was read from, or
  // "" when it was made in the viewer): undo and sessions put back a PSF they kept.
  void setPipeline(const compute::Pipeline& pipeline, const QString& psfName,
                   const QString& psfFile);
  QString psfName() const { return psfPath_; }       // what the dock shows for the PSF
  QString psfFile() const { return psfFile_path_; }  // the file the PSF came from, or ""
  // "astronomy sources" or "microscopy deconvolution" (with the loaded PSF, if any).
  void applyPreset(const QString& name);

  BackendChoice backendChoice() const;
  void setBackendChoice(BackendChoice choice);
  ViewMode viewMode() const;
  void setViewMode(ViewMode mode);
  size_t cacheBudgetBytes() const;
  int blinkIntervalMs() const;  // how long each of raw and processed shows in Blink
  bool gpuAvailable() const { return gpuAvailable_; }
  QString gpuUnavailableReason() const { return gpuWhy_; }

  // Reads a 2D or 3D PSF through io (normalised to sum 1 when used); on failure returns false,
  // keeps the previous PSF and sets *error to "<path>: <reason>".
  bool loadPsf(const QString& path, QString* error = nullptr);
  // A PSF made elsewhere (the PSF generator, a measured one), normalised here; false when it
  // sums to zero. name: what the dock shows for it; file: the file it was read from, if any.
  bool setPsf(compute::Image psf, const QString& name, const QString& file = QString());

  // Feedback from the worker.
  void showProgress(double fraction);
  void showIdle();
  void showError(const QString& message);
  void showBackground(const compute::ClipStats& stats, int z);

  QComboBox* backendBox() const { return backend_; }
  QSpinBox* blinkBox() const { return blinkMs_; }
  QComboBox* presetBox() const { return preset_; }
  QLabel* statusLabel() const { return status_; }

 signals:
  void pipelineChanged();
  void backendChanged();
  void viewModeChanged(stacklens::ui::ProcessingDock::ViewMode mode);
  void cacheBudgetChanged(size_t bytes);
  void psfGeneratorRequested();  // "Generate…" beside the PSF file
  void blinkIntervalChanged(int milliseconds);
  void cancelRequested();

 private:
  // The constructor's steps, in the order the widgets are laid out.
  void addPresetRow(QWidget* content, QVBoxLayout* layout);
  void addFilterGroups(QWidget* content, QVBoxLayout* layout);
  void addDeconvolutionGroup(QWidget* content, QVBoxLayout* layout);
  void addMeasurementGroups(QWidget* content, QVBoxLayout* layout);
  void addRunControls(QWidget* content, QVBoxLayout* layout);
  void addProgressRow(QWidget* content, QVBoxLayout* layout);
  void connectControls();
  void changed();
  void updateEnabledWidgets();
  void showPsfName();

  bool gpuAvailable_ = false;
  QString gpuWhy_;
  bool updating_ = false;
  compute::Image psfImage_;
  QString psfPath_;
  QString psfFile_path_;

  QComboBox* preset_;
  QGroupBox* outliers_;
  QSpinBox* outlierSize_;
  QDoubleSpinBox* outlierThreshold_;
  QComboBox* outlierMode_;
  QGroupBox* median_;
  QSpinBox* medianSize_;
  QGroupBox* blur_;
  QDoubleSpinBox* blurSigmaY_;
  QDoubleSpinBox* blurSigmaX_;
  QDoubleSpinBox* blurSigmaZ_;
  QGroupBox* deconvolution_;
  QSpinBox* iterations_;
  QComboBox* dimensions_;
  QSpinBox* slabHalfWidth_;
  QRadioButton* psfGaussian_;
  QRadioButton* psfFile_;
  QDoubleSpinBox* psfSigmaZ_;
  QDoubleSpinBox* psfSigmaY_;
  QDoubleSpinBox* psfSigmaX_;
  QLineEdit* psfPathEdit_;
  QPushButton* psfBrowse_;
  QComboBox* boundary_;
  QCheckBox* accelerate_;
  QDoubleSpinBox* tvLambda_;
  QGroupBox* statistics_;
  QDoubleSpinBox* clipLower_;
  QDoubleSpinBox* clipUpper_;
  QSpinBox* clipIterations_;
  QGroupBox* segmentation_;
  QDoubleSpinBox* nSigma_;
  QComboBox* connectivity_;
  QSpinBox* minPixels_;
  QComboBox* backend_;
  QComboBox* view_;
  QSpinBox* blinkMs_;
  QSpinBox* cacheMiB_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QLabel* background_;
  QLabel* status_;
};

}  // namespace stacklens::ui
