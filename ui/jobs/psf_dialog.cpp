#include "ui/jobs/psf_dialog.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QVBoxLayout>
#include <algorithm>

#include <QStatusBar>
#include "io/stack_writer.h"
#include "ui/frame/main_window.h"
#include "ui/jobs/dialog_job.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"

namespace stacklens::ui {
namespace {

struct FieldSpec {
  const char* name;
  const char* label;
  double low, high, value;
  int decimals;
  bool star;  // a star's field (else a microscope's)
};

// The fields and their defaults (compute/psf/psf_models.h).
const FieldSpec kFields[] = {
    {"fwhm", "FWHM (px)", 0.1, 1000, 3, 2, true},
    {"beta", "Moffat β", 1.01, 100, 2.5, 2, true},
    {"ellipticity", "Ellipticity", 0, 0.99, 0, 3, true},
    {"angle", "Angle (°)", -360, 360, 0, 1, true},
    {"na", "NA", 0.05, 1.7, 1.4, 3, false},
    {"wavelength", "Emission λ (µm)", 0.2, 2, 0.53, 3, false},
    {"excitation", "Excitation λ (µm)", 0.2, 2, 0.488, 3, false},
    {"ni", "Immersion index", 1, 2, 1.518, 4, false},
    {"ns", "Specimen index", 1, 2, 1.33, 4, false},
    {"ng", "Coverslip index", 1, 2, 1.5, 4, false},
    {"tg", "Coverslip (µm)", 0, 1000, 170, 1, false},
    {"ti", "Working distance (µm)", 0, 10000, 150, 1, false},
    {"depth", "Source depth (µm)", 0, 1000, 0, 2, false},
    {"lateral", "Pixel size (µm)", 0.001, 10, 0.1, 4, false},
    {"axial", "Plane spacing (µm)", 0.001, 100, 0.2, 4, false},
};

}  // namespace

PsfDialog::PsfDialog(QWidget* parent) : JobDialog(tr("Generate"), parent) {
  setWindowTitle(tr("PSF generator"));
  model_ = new QComboBox;
  model_->addItems({tr("Gaussian star (2D)"), tr("Moffat star (2D)"), tr("Born & Wolf (3D)"),
                    tr("Gibson & Lanni (3D)")});
  model_->setCurrentIndex(3);
  mode_ = new QComboBox;
  mode_->addItems({tr("Widefield"), tr("Confocal"), tr("Two-photon")});
  form_ = new QFormLayout;
  form_->addRow(tr("Model:"), model_);
  form_->addRow(tr("Microscope:"), mode_);
  for (const FieldSpec& f : kFields) {
    auto* box = new QDoubleSpinBox;
    box->setObjectName(f.name);
    box->setRange(f.low, f.high);
    box->setDecimals(f.decimals);
    box->setValue(f.value);
    form_->addRow(tr(f.label), box);
  }
  size_ = new QSpinBox;
  size_->setRange(1, 4097);
  size_->setSingleStep(2);
  size_->setValue(65);
  sizeZ_ = new QSpinBox;
  sizeZ_->setRange(1, 4097);
  sizeZ_->setSingleStep(2);
  sizeZ_->setValue(33);
  oversampling_ = new QSpinBox;
  oversampling_->setRange(1, 8);
  form_->addRow(tr("Size (px, odd):"), size_);
  form_->addRow(tr("Planes:"), sizeZ_);
  form_->addRow(tr("Oversampling:"), oversampling_);

  preview_ = new render::SliceView;
  QWidget* container = QWidget::createWindowContainer(preview_, this);
  container->setMinimumSize(220, 220);
  render::DisplaySettings d;
  d.colormap = "magma";
  d.scale = render::Scale::Log;
  preview_->setDisplay(d);

  status_->setWordWrap(true);
  use_ = new QPushButton(tr("Use for deconvolution"));
  saveButton_ = new QPushButton(tr("Save…"));
  use_->setEnabled(false);
  saveButton_->setEnabled(false);
  auto* columns = new QHBoxLayout;
  columns->addLayout(form_);
  columns->addWidget(container, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(columns);
  addJobRows(layout, {use_, saveButton_});

  connect(model_, &QComboBox::currentIndexChanged, this, &PsfDialog::showFields);
  connect(use_, &QPushButton::clicked, this, [this] { emit usePsf(psf_, describe()); });
  connect(saveButton_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the PSF as"), "psf.tif",
                                                      tr("Images (*.tif *.tiff *.fits)"));
    if (path.isEmpty()) return;
    const QString error = save(path);
    status_->setText(error.isEmpty() ? tr("Saved: %1").arg(path) : error);
  });
  showFields();
}

QDoubleSpinBox* PsfDialog::field(const QString& name) const {
  return findChild<QDoubleSpinBox*>(name);
}

// Each model's fields only.
void PsfDialog::showFields() {
  const bool star = starModel();
  for (const FieldSpec& f : kFields) {
    const bool shown = f.star == star && (QString(f.name) != "beta" || model_->currentIndex() == 1);
    form_->setRowVisible(field(f.name), shown);
  }
  form_->setRowVisible(mode_, !star);
  form_->setRowVisible(sizeZ_, !star);
  size_->setValue(star ? 15 : 65);
}

compute::psf::StarPsf PsfDialog::starParams() const {
  compute::psf::StarPsf p;
  p.profile = model_->currentIndex() == 1 ? compute::psf::StarPsf::Profile::Moffat
                                          : compute::psf::StarPsf::Profile::Gaussian;
  p.fwhm = field("fwhm")->value();
  p.beta = field("beta")->value();
  p.ellipticity = field("ellipticity")->value();
  p.angle = field("angle")->value();
  p.size = size_->value() | 1;
  p.oversampling = oversampling_->value();
  return p;
}

compute::psf::MicroscopePsf PsfDialog::microscopeParams() const {
  using M = compute::psf::MicroscopePsf;
  M p;
  p.model = model_->currentIndex() == 2 ? M::Model::BornWolf : M::Model::GibsonLanni;
  p.mode = M::Mode(mode_->currentIndex());
  p.na = field("na")->value();
  p.wavelength = field("wavelength")->value();
  p.excitation = field("excitation")->value();
  p.ni = p.niDesign = field("ni")->value();
  p.ns = field("ns")->value();
  p.ng = p.ngDesign = field("ng")->value();
  p.tg = p.tgDesign = field("tg")->value();
  p.tiDesign = field("ti")->value();
  p.depth = field("depth")->value();
  p.lateral = field("lateral")->value();
  p.axial = field("axial")->value();
  p.sizeXY = size_->value() | 1;
  p.sizeZ = sizeZ_->value() | 1;
  p.oversampling = oversampling_->value();
  return p;
}

QString PsfDialog::describe() const {
  if (starModel())
    return tr("%1, FWHM %2 px").arg(model_->currentText()).arg(field("fwhm")->value());
  return tr("%1 %2, NA %3, %4 µm")
      .arg(model_->currentText(), mode_->currentText().toLower())
      .arg(field("na")->value())
      .arg(field("wavelength")->value());
}

void PsfDialog::setInputsEnabled(bool enabled) {
  model_->setEnabled(enabled);
  mode_->setEnabled(enabled);
  use_->setEnabled(enabled && !psf_.empty());
  saveButton_->setEnabled(enabled && !psf_.empty());
}

void PsfDialog::start() {
  if (running()) return;
  const bool star = starModel();
  const auto starParams = this->starParams();
  const auto microscopeParams = this->microscopeParams();
  psf_ = {};
  begin(tr("Generating…"));
  future_ = runForDialog<PsfDialog>(
      pool_, this, [this, star, starParams, microscopeParams](const PostToDialog<PsfDialog>& post) {
        compute::Image psf =
            star ? compute::psf::starPsf(starParams)
                 : compute::psf::microscopePsf(
                       microscopeParams, compute::Job(&stop_, [&](double f) {
                         post([f](PsfDialog* d) { d->progress_->setValue(int(f * 1000)); });
                       }));
        post([psf](PsfDialog* d) {
          d->psf_ = psf;
          const compute::Shape s = psf.shape();
          const float* centre = psf.slice(s.z / 2);
          auto plane = std::make_shared<std::vector<float>>(centre, centre + s.sliceCount());
          const auto [low, high] = std::minmax_element(plane->begin(), plane->end());
          d->preview_->setSlice(plane, int(s.x), int(s.y));
          d->preview_->setLimits(std::max(*low, *high * 1e-4f), *high);
          d->jobEnded(1000, tr("%1 × %2 × %3, sum 1, centre at (%4, %5, %6)")
                                .arg(s.z)
                                .arg(s.y)
                                .arg(s.x)
                                .arg(s.z / 2)
                                .arg(s.y / 2)
                                .arg(s.x / 2));
          emit d->finished();
        });
      });
}

QString PsfDialog::save(const QString& path) const {
  if (psf_.empty()) return tr("Generate a PSF first");
  io::WriteOptions options;
  options.history.push_back("stacklens PSF generator: " + describe().toStdString());
  if (psf_.spacing.known) {
    options.spacing = {psf_.spacing.z, psf_.spacing.y, psf_.spacing.x};
    options.units = {psf_.spacing.unit, psf_.spacing.unit, psf_.spacing.unit};
    options.spacingKnown = true;
  }
  try {
    const compute::Shape s = psf_.shape();
    io::writeStack(path.toStdString(), psf_.data(), s.z, s.y, s.x, options);
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

}  // namespace stacklens::ui

namespace stacklens::ui {

PsfDialog* openPsfGenerator(MainWindow* window) {
  auto* dialog = new PsfDialog(window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  QObject::connect(dialog, &PsfDialog::usePsf, window,
                   [window](const compute::Image& psf, const QString& what) {
                     // The dock normalises its own copy.
                     compute::Image own = compute::Image::host(psf.shape());
                     std::copy_n(psf.data(), psf.shape().count(), own.data());
                     own.spacing = psf.spacing;
                     if (window->tool<LiveProcessing>()->dock()->setPsf(std::move(own), what))
                       window->statusBar()->showMessage(
                           QObject::tr("Deconvolution uses the generated PSF: %1").arg(what), 5000);
                   });
  dialog->show();
  return dialog;
}

}  // namespace stacklens::ui
