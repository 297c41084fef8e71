// The processing dock: widgets ↔ compute::Pipeline, presets, PSF file loading, backend choice.
#include "ui/live/processing_dock.h"

#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QScrollArea>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <cmath>

#include "compute/pipeline_command.h"
#include "io/stack.h"

namespace stacklens::ui {
namespace {

QDoubleSpinBox* doubleBox(QWidget* parent, double min, double max, double value, int decimals,
                          double step) {
  auto* box = new QDoubleSpinBox(parent);
  box->setRange(min, max);
  box->setDecimals(decimals);
  box->setSingleStep(step);
  box->setValue(value);
  return box;
}

QSpinBox* intBox(QWidget* parent, int min, int max, int value, int step = 1) {
  auto* box = new QSpinBox(parent);
  box->setRange(min, max);
  box->setSingleStep(step);
  box->setValue(value);
  return box;
}

QGroupBox* group(QWidget* parent, const QString& title, QFormLayout** form) {
  auto* box = new QGroupBox(title, parent);
  box->setCheckable(true);
  box->setChecked(false);
  *form = new QFormLayout(box);
  return box;
}

}  // namespace

ProcessingDock::ProcessingDock(QWidget* parent) : QDockWidget(tr("Processing"), parent) {
  setObjectName("processingDock");
  std::string why;
  gpuAvailable_ = compute::cudaUsable(&why);
  gpuWhy_ = QString::fromStdString(why);

  auto* content = new QWidget(this);
  auto* layout = new QVBoxLayout(content);

  addPresetRow(content, layout);
  addFilterGroups(content, layout);
  addDeconvolutionGroup(content, layout);
  addMeasurementGroups(content, layout);
  addRunControls(content, layout);
  addProgressRow(content, layout);
  showIdle();

  auto* scroll = new QScrollArea(this);
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  setWidget(scroll);

  connectControls();
  updateEnabledWidgets();
}

// The preset chooser above the stages ("Custom" once any parameter is changed).
void ProcessingDock::addPresetRow(QWidget* content, QVBoxLayout* layout) {
  auto* presetRow = new QHBoxLayout();
  preset_ = new QComboBox(content);
  preset_->addItem(tr("Custom"));
  for (const auto& name : compute::presetNames()) preset_->addItem(QString::fromStdString(name));
  presetRow->addWidget(new QLabel(tr("Preset"), content));
  presetRow->addWidget(preset_, 1);
  layout->addLayout(presetRow);
}

// The per-slice filters, in the order the pipeline runs them: outliers, median, blur.
void ProcessingDock::addFilterGroups(QWidget* content, QVBoxLayout* layout) {
  QFormLayout* form = nullptr;
  outliers_ = group(content, tr("Outlier removal"), &form);
  outlierSize_ = intBox(outliers_, 3, 31, 3, 2);
  outlierThreshold_ = doubleBox(outliers_, 0, 1e9, 50, 3, 1);
  outlierMode_ = new QComboBox(outliers_);
  outlierMode_->addItems({tr("bright and dark"), tr("bright"), tr("dark")});
  form->addRow(tr("Window"), outlierSize_);
  form->addRow(tr("Threshold"), outlierThreshold_);
  form->addRow(tr("Replace"), outlierMode_);
  outlierThreshold_->setToolTip(
      tr("A pixel further than this from its local median is replaced "
         "by the median"));
  layout->addWidget(outliers_);

  median_ = group(content, tr("Median filter"), &form);
  medianSize_ = intBox(median_, 1, 31, 3, 2);
  form->addRow(tr("Size"), medianSize_);
  layout->addWidget(median_);

  blur_ = group(content, tr("Gaussian blur"), &form);
  blurSigmaY_ = doubleBox(blur_, 0.1, 100, 1, 2, 0.1);
  blurSigmaX_ = doubleBox(blur_, 0.1, 100, 1, 2, 0.1);
  blurSigmaZ_ = doubleBox(blur_, 0, 16, 0, 2, 0.1);
  blurSigmaZ_->setToolTip(tr("0 blurs each slice in 2D; more blurs across neighbouring slices"));
  form->addRow(tr("σ y (px)"), blurSigmaY_);
  form->addRow(tr("σ x (px)"), blurSigmaX_);
  form->addRow(tr("σ z (slices)"), blurSigmaZ_);
  layout->addWidget(blur_);
}

// Richardson–Lucy: iterations, mode and slab, the PSF (Gaussian or a file), boundary, TV.
void ProcessingDock::addDeconvolutionGroup(QWidget* content, QVBoxLayout* layout) {
  QFormLayout* form = nullptr;
  deconvolution_ = group(content, tr("Richardson–Lucy deconvolution"), &form);
  iterations_ = intBox(deconvolution_, 1, 1000, 20);
  dimensions_ = new QComboBox(deconvolution_);
  dimensions_->addItems({tr("2D, per slice"), tr("3D, on a slab")});
  slabHalfWidth_ = intBox(deconvolution_, 1, 64, 4);
  slabHalfWidth_->setToolTip(
      tr("3D: slices on each side of the current one; the result is "
         "the slab's centre slice"));
  psfGaussian_ = new QRadioButton(tr("Gaussian"), deconvolution_);
  psfFile_ = new QRadioButton(tr("File"), deconvolution_);
  psfGaussian_->setChecked(true);
  auto* psfRow = new QHBoxLayout();
  psfRow->addWidget(psfGaussian_);
  psfRow->addWidget(psfFile_);
  psfSigmaZ_ = doubleBox(deconvolution_, 0.1, 32, 2, 2, 0.1);
  psfSigmaY_ = doubleBox(deconvolution_, 0.1, 32, 1.5, 2, 0.1);
  psfSigmaX_ = doubleBox(deconvolution_, 0.1, 32, 1.5, 2, 0.1);
  psfPathEdit_ = new QLineEdit(deconvolution_);
  psfPathEdit_->setReadOnly(true);
  psfPathEdit_->setPlaceholderText(tr("no PSF file"));
  psfBrowse_ = new QPushButton(tr("Browse…"), deconvolution_);
  auto* psfGenerate = new QPushButton(tr("Generate…"), deconvolution_);
  psfGenerate->setToolTip(
      tr("Make a PSF from a model (Gaussian, Moffat, Born & Wolf, Gibson & "
         "Lanni)"));
  auto* fileRow = new QHBoxLayout();
  fileRow->addWidget(psfPathEdit_, 1);
  fileRow->addWidget(psfBrowse_);
  fileRow->addWidget(psfGenerate);
  connect(psfGenerate, &QPushButton::clicked, this, &ProcessingDock::psfGeneratorRequested);
  boundary_ = new QComboBox(deconvolution_);
  // auto, then Boundary's order.
  boundary_->addItems({tr("auto"), tr("reflect"), tr("periodic"), tr("zero"), tr("reflect-exact")});
  boundary_->setItemData(0,
                         tr("Reflect-exact when the PSF is mirror-symmetric and TV is off, else "
                            "reflect, as stacklens-cli deconvolve chooses"),
                         Qt::ToolTipRole);
  boundary_->setItemData(4,
                         tr("Every convolution reads the image reflected past its edges: no "
                            "padding; needs a PSF symmetric along each axis"),
                         Qt::ToolTipRole);
  accelerate_ = new QCheckBox(tr("Biggs–Andrews acceleration"), deconvolution_);
  tvLambda_ = doubleBox(deconvolution_, 0, 1, 0, 4, 0.001);
  tvLambda_->setToolTip(tr("Total-variation regularisation weight; 0 = off"));
  form->addRow(tr("Iterations"), iterations_);
  form->addRow(tr("Mode"), dimensions_);
  form->addRow(tr("Slab ± slices"), slabHalfWidth_);
  form->addRow(tr("PSF"), psfRow);
  form->addRow(tr("PSF σ z"), psfSigmaZ_);
  form->addRow(tr("PSF σ y"), psfSigmaY_);
  form->addRow(tr("PSF σ x"), psfSigmaX_);
  form->addRow(tr("PSF file"), fileRow);
  form->addRow(tr("Boundary"), boundary_);
  form->addRow(accelerate_);
  form->addRow(tr("TV λ"), tvLambda_);
  layout->addWidget(deconvolution_);
}

// Background statistics and segmentation.
void ProcessingDock::addMeasurementGroups(QWidget* content, QVBoxLayout* layout) {
  QFormLayout* form = nullptr;
  statistics_ = group(content, tr("Background statistics (σ-clipped)"), &form);
  clipLower_ = doubleBox(statistics_, 0.1, 100, 3, 2, 0.1);
  clipUpper_ = doubleBox(statistics_, 0.1, 100, 3, 2, 0.1);
  clipIterations_ = intBox(statistics_, 0, 100, 10);
  clipIterations_->setSpecialValueText(tr("until converged"));
  form->addRow(tr("κ lower"), clipLower_);
  form->addRow(tr("κ upper"), clipUpper_);
  form->addRow(tr("Max iterations"), clipIterations_);
  layout->addWidget(statistics_);

  segmentation_ = group(content, tr("Segmentation"), &form);
  nSigma_ = doubleBox(segmentation_, 0.1, 1000, 5, 2, 0.5);
  nSigma_->setToolTip(tr("Threshold = clipped median + nσ · clipped σ"));
  connectivity_ = new QComboBox(segmentation_);
  connectivity_->addItems({"8", "4"});
  minPixels_ = intBox(segmentation_, 1, 1000000, 1);
  form->addRow(tr("Threshold (nσ)"), nSigma_);
  form->addRow(tr("Connectivity"), connectivity_);
  form->addRow(tr("Min pixels"), minPixels_);
  layout->addWidget(segmentation_);
}

// Where it runs and what the view shows: backend, view mode, blink interval, result cache.
void ProcessingDock::addRunControls(QWidget* content, QVBoxLayout* layout) {
  auto* run = new QFormLayout();
  backend_ = new QComboBox(content);
  backend_->addItems({tr("CPU"), tr("GPU (CUDA)"), tr("Compare CPU vs GPU")});
  if (!gpuAvailable_) {
    auto* model = qobject_cast<QStandardItemModel*>(backend_->model());
    QStandardItem* gpu = model->item(1);
    gpu->setFlags(gpu->flags() & ~Qt::ItemIsEnabled);
    gpu->setToolTip(tr("GPU unavailable: %1").arg(gpuWhy_));
    model->item(2)->setToolTip(tr("No GPU (%1): compares the CPU backend with a one-thread CPU "
                                  "backend standing in for the GPU")
                                   .arg(gpuWhy_));
    backend_->setToolTip(tr("GPU unavailable: %1").arg(gpuWhy_));
  }
  view_ = new QComboBox(content);
  view_->addItems(
      {tr("Raw"), tr("Processed"), tr("Side by side"), tr("Blink"), tr("Swipe"), tr("Difference")});
  view_->setCurrentIndex(1);
  blinkMs_ = intBox(content, 50, 10000, 500, 50);
  blinkMs_->setSuffix(" ms");
  blinkMs_->setToolTip(tr("Blink: how long the raw and the processed slice each show"));
  cacheMiB_ = intBox(content, 0, 65536, 512, 64);
  cacheMiB_->setSuffix(" MiB");
  cacheMiB_->setToolTip(
      tr("Memory for processed slices kept for scrubbing back (least "
         "recently used dropped first)"));
  run->addRow(tr("Backend"), backend_);
  run->addRow(tr("View"), view_);
  run->addRow(tr("Blink every"), blinkMs_);
  run->addRow(tr("Result cache"), cacheMiB_);
  layout->addLayout(run);
}

// Progress and Cancel, the background statistics and the status line.
void ProcessingDock::addProgressRow(QWidget* content, QVBoxLayout* layout) {
  auto* progressRow = new QHBoxLayout();
  progress_ = new QProgressBar(content);
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  cancel_ = new QPushButton(tr("Cancel"), content);
  progressRow->addWidget(progress_, 1);
  progressRow->addWidget(cancel_);
  layout->addLayout(progressRow);
  background_ = new QLabel(content);
  background_->setWordWrap(true);
  background_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_ = new QLabel(content);
  status_->setWordWrap(true);
  layout->addWidget(background_);
  layout->addWidget(status_);
  layout->addStretch(1);
}

// Any parameter change marks the preset "Custom" and re-reads the pipeline; the other controls
// say what they change.
void ProcessingDock::connectControls() {
  for (auto* g : {outliers_, median_, blur_, deconvolution_, statistics_, segmentation_})
    connect(g, &QGroupBox::toggled, this, &ProcessingDock::changed);
  for (auto* s :
       {outlierSize_, medianSize_, iterations_, slabHalfWidth_, clipIterations_, minPixels_})
    connect(s, &QSpinBox::valueChanged, this, &ProcessingDock::changed);
  for (auto* d : {outlierThreshold_, blurSigmaY_, blurSigmaX_, blurSigmaZ_, psfSigmaZ_, psfSigmaY_,
                  psfSigmaX_, tvLambda_, clipLower_, clipUpper_, nSigma_})
    connect(d, &QDoubleSpinBox::valueChanged, this, &ProcessingDock::changed);
  for (auto* c : {outlierMode_, dimensions_, boundary_, connectivity_})
    connect(c, &QComboBox::currentIndexChanged, this, &ProcessingDock::changed);
  connect(accelerate_, &QCheckBox::toggled, this, &ProcessingDock::changed);
  connect(psfGaussian_, &QRadioButton::toggled, this, &ProcessingDock::changed);
  connect(preset_, &QComboBox::activated, this, [this](int index) {
    if (index > 0) applyPreset(preset_->itemText(index));
  });
  connect(psfBrowse_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("PSF stack"), {}, tr("Stacks (*.fits *.fit *.fts *.fz *.gz *.tif *.tiff)"));
    QString error;
    if (!path.isEmpty() && !loadPsf(path, &error)) showError(error);
  });
  connect(backend_, &QComboBox::currentIndexChanged, this, [this] { emit backendChanged(); });
  connect(view_, &QComboBox::currentIndexChanged, this,
          [this] { emit viewModeChanged(viewMode()); });
  connect(blinkMs_, &QSpinBox::valueChanged, this, &ProcessingDock::blinkIntervalChanged);
  connect(cacheMiB_, &QSpinBox::valueChanged, this,
          [this] { emit cacheBudgetChanged(cacheBudgetBytes()); });
  connect(cancel_, &QPushButton::clicked, this, &ProcessingDock::cancelRequested);
}

void ProcessingDock::changed() {
  if (updating_) return;
  preset_->setCurrentIndex(0);
  updateEnabledWidgets();
  status_->clear();
  emit pipelineChanged();
}

void ProcessingDock::updateEnabledWidgets() {
  const bool threeD = dimensions_->currentIndex() == 1;
  slabHalfWidth_->setEnabled(threeD);
  psfSigmaZ_->setEnabled(threeD && psfGaussian_->isChecked());
  psfSigmaY_->setEnabled(psfGaussian_->isChecked());
  psfSigmaX_->setEnabled(psfGaussian_->isChecked());
  psfFile_->setEnabled(!psfImage_.empty());
  psfFile_->setToolTip(psfImage_.empty() ? tr("Choose a PSF file with Browse… first") : psfPath_);
}

compute::Pipeline ProcessingDock::pipeline() const {
  compute::Pipeline p;
  p.outliers.enabled = outliers_->isChecked();
  p.outliers.params.size = outlierSize_->value();
  p.outliers.params.threshold = outlierThreshold_->value();
  p.outliers.params.mode = outlierMode_->currentIndex() == 1   ? compute::OutlierMode::Bright
                           : outlierMode_->currentIndex() == 2 ? compute::OutlierMode::Dark
                                                               : compute::OutlierMode::Both;
  p.median.enabled = median_->isChecked();
  p.median.size = medianSize_->value();
  p.blur.enabled = blur_->isChecked();
  p.blur.params.sigmaY = blurSigmaY_->value();
  p.blur.params.sigmaX = blurSigmaX_->value();
  p.blur.params.sigmaZ = blurSigmaZ_->value();
  auto& d = p.deconvolution;
  d.enabled = deconvolution_->isChecked();
  d.params.iterations = iterations_->value();
  d.params.threeD = dimensions_->currentIndex() == 1;
  d.autoBoundary = boundary_->currentIndex() == 0;
  d.params.boundary = d.autoBoundary
                          ? compute::Boundary::Reflect
                          : static_cast<compute::Boundary>(boundary_->currentIndex() - 1);
  d.params.accelerate = accelerate_->isChecked();
  d.params.tvLambda = tvLambda_->value();
  d.slabHalfWidth = slabHalfWidth_->value();
  d.psfSigmaZ = psfSigmaZ_->value();
  d.psfSigmaY = psfSigmaY_->value();
  d.psfSigmaX = psfSigmaX_->value();
  if (psfFile_->isChecked()) d.psf = psfImage_;
  p.statistics.enabled = statistics_->isChecked();
  p.statistics.params.kappaLower = clipLower_->value();
  p.statistics.params.kappaUpper = clipUpper_->value();
  p.statistics.params.maxIterations = clipIterations_->value();
  p.segmentation.enabled = segmentation_->isChecked();
  p.segmentation.params.nSigma = nSigma_->value();
  p.segmentation.params.connectivity = connectivity_->currentIndex() == 1 ? 4 : 8;
  p.segmentation.params.minPixels = minPixels_->value();
  p.segmentation.params.clip = p.statistics.params;
  return p;
}

void ProcessingDock::setPipeline(const compute::Pipeline& p, const QString& psfName,
                                 const QString& psfFile) {
  if (!p.deconvolution.psf.empty()) {
    psfImage_ = p.deconvolution.psf;
    psfPath_ = psfName;
    psfFile_path_ = psfFile;
    showPsfName();
  }
  setPipeline(p);
}

void ProcessingDock::setPipeline(const compute::Pipeline& p) {
  updating_ = true;
  outliers_->setChecked(p.outliers.enabled);
  outlierSize_->setValue(p.outliers.params.size);
  outlierThreshold_->setValue(p.outliers.params.threshold);
  outlierMode_->setCurrentIndex(p.outliers.params.mode == compute::OutlierMode::Bright ? 1
                                : p.outliers.params.mode == compute::OutlierMode::Dark ? 2
                                                                                       : 0);
  median_->setChecked(p.median.enabled);
  medianSize_->setValue(p.median.size);
  blur_->setChecked(p.blur.enabled);
  blurSigmaY_->setValue(p.blur.params.sigmaY);
  blurSigmaX_->setValue(p.blur.params.sigmaX);
  blurSigmaZ_->setValue(p.blur.params.sigmaZ);
  const auto& d = p.deconvolution;
  deconvolution_->setChecked(d.enabled);
  iterations_->setValue(d.params.iterations);
  dimensions_->setCurrentIndex(d.params.threeD ? 1 : 0);
  boundary_->setCurrentIndex(d.autoBoundary ? 0 : 1 + static_cast<int>(d.params.boundary));
  accelerate_->setChecked(d.params.accelerate);
  tvLambda_->setValue(d.params.tvLambda);
  slabHalfWidth_->setValue(d.slabHalfWidth);
  psfSigmaZ_->setValue(d.psfSigmaZ);
  psfSigmaY_->setValue(d.psfSigmaY);
  psfSigmaX_->setValue(d.psfSigmaX);
  if (!d.psf.empty() && d.psf.data() != psfImage_.data()) {
    psfImage_ = d.psf;
    psfPath_ = tr("(PSF given by the caller)");
    psfFile_path_.clear();
    psfPathEdit_->setText(psfPath_);
  }
  (d.psf.empty() ? psfGaussian_ : psfFile_)->setChecked(true);
  statistics_->setChecked(p.statistics.enabled);
  clipLower_->setValue(p.statistics.params.kappaLower);
  clipUpper_->setValue(p.statistics.params.kappaUpper);
  clipIterations_->setValue(std::max(0, p.statistics.params.maxIterations));
  segmentation_->setChecked(p.segmentation.enabled);
  nSigma_->setValue(p.segmentation.params.nSigma);
  connectivity_->setCurrentIndex(p.segmentation.params.connectivity == 4 ? 1 : 0);
  minPixels_->setValue(int(std::min<int64_t>(p.segmentation.params.minPixels, 1000000)));
  updating_ = false;
  updateEnabledWidgets();
  status_->clear();
  emit pipelineChanged();
}

void ProcessingDock::applyPreset(const QString& name) {
  compute::Pipeline p = compute::preset(name.toStdString(), psfImage_);
  setPipeline(p);
  preset_->setCurrentText(name);
}

ProcessingDock::BackendChoice ProcessingDock::backendChoice() const {
  return static_cast<BackendChoice>(backend_->currentIndex());
}

void ProcessingDock::setBackendChoice(BackendChoice choice) {
  if (choice == BackendChoice::Gpu && !gpuAvailable_) {
    showError(tr("GPU unavailable: %1").arg(gpuWhy_));
    return;
  }
  backend_->setCurrentIndex(static_cast<int>(choice));
}

int ProcessingDock::blinkIntervalMs() const { return blinkMs_->value(); }

ProcessingDock::ViewMode ProcessingDock::viewMode() const {
  return static_cast<ViewMode>(view_->currentIndex());
}

void ProcessingDock::setViewMode(ViewMode mode) { view_->setCurrentIndex(static_cast<int>(mode)); }

size_t ProcessingDock::cacheBudgetBytes() const { return size_t(cacheMiB_->value()) << 20; }

bool ProcessingDock::loadPsf(const QString& path, QString* error) {
  try {
    auto reader = io::openStack(path.toStdString());
    const auto& info = reader->info();
    if (info.z > 512 || info.y > 1024 || info.x > 1024)
      throw io::IoError(path.toStdString(), "too large for a PSF (at most 512 × 1024 × 1024)");
    compute::Image psf = compute::Image::host({info.z, info.y, info.x});
    for (int64_t z = 0; z < info.z; ++z) reader->readSlice(z, psf.slice(z));
    try {
      psf = compute::normalisedPsf(psf);  // the rule `stacklens-cli process --psf` applies
    } catch (const compute::InvalidArgument& e) {
      throw io::IoError(path.toStdString(), e.what());
    }
    setPsf(std::move(psf), path, path);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return true;
}

bool ProcessingDock::setPsf(compute::Image psf, const QString& name, const QString& file) {
  double sum = 0;
  for (int64_t i = 0; i < psf.shape().count(); ++i) sum += psf.data()[i];
  if (!(sum > 0)) return false;
  for (int64_t i = 0; i < psf.shape().count(); ++i)
    psf.data()[i] = static_cast<float>(psf.data()[i] / sum);
  psfImage_ = std::move(psf);
  psfPath_ = name;
  psfFile_path_ = file;
  showPsfName();
  const bool wasFile = psfFile_->isChecked();
  psfFile_->setChecked(true);
  if (wasFile) changed();  // a new PSF behind the same radio button
  return true;
}

void ProcessingDock::showPsfName() {
  psfPathEdit_->setText(QString("%1 (%2 × %3 × %4)")
                            .arg(psfPath_)
                            .arg(psfImage_.shape().z)
                            .arg(psfImage_.shape().y)
                            .arg(psfImage_.shape().x));
  updateEnabledWidgets();
}

void ProcessingDock::showProgress(double fraction) {
  progress_->setVisible(true);
  cancel_->setVisible(true);
  progress_->setValue(int(std::lround(std::clamp(fraction, 0.0, 1.0) * 1000)));
}

void ProcessingDock::showIdle() {
  progress_->setVisible(false);
  cancel_->setVisible(false);
  progress_->setValue(0);
}

void ProcessingDock::showError(const QString& message) {
  status_->setText(message);
  status_->setStyleSheet("color: #c62828");
}

void ProcessingDock::showBackground(const compute::ClipStats& stats, int z) {
  background_->setText(tr("Background of slice %1 (σ-clipped): median %2, σ %3, %4 iterations")
                           .arg(z)
                           .arg(stats.clipped.median, 0, 'g', 6)
                           .arg(stats.clipped.std, 0, 'g', 4)
                           .arg(stats.iterations));
}

}  // namespace stacklens::ui
