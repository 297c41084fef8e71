#include "ui/volume/volume_panel.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compute/blocked/block_plan.h"
#include "compute/volume_render.h"
#include "ui/volume/volume_worker.h"
#ifdef STACKLENS_HAVE_CUDA_TEXTURE_SINK
#include "render/cuda_texture_sink.h"
#endif

namespace stacklens::ui {
namespace {

constexpr double kDegreesPerPixel = 0.4;

bool sameCamera(const compute::VolumeRenderParams& a, const compute::VolumeRenderParams& b) {
  return a.mode == b.mode && a.width == b.width && a.height == b.height && a.zoom == b.zoom &&
         std::equal(std::begin(a.rotation), std::end(a.rotation), std::begin(b.rotation)) &&
         a.low == b.low && a.high == b.high && a.attenuation == b.attenuation &&
         a.isoLevel == b.isoLevel && a.stepScale == b.stepScale;
}

}  // namespace

VolumePanel::VolumePanel(QWidget* parent) : QWidget(parent) {
  QWidget* viewContainer = makeView();
  makeControls();
  layOut(viewContainer);
  startWorker();
  connectControls();
  connectView();
}

// The view draws the frames and turns mouse drags into orbits; it lives in a window container.
QWidget* VolumePanel::makeView() {
  view_ = new render::SliceView;
  view_->setTool(render::SliceView::Tool::Orbit);
  QWidget* container = QWidget::createWindowContainer(view_, this);
  container->setMinimumSize(160, 160);
  container->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  return container;
}

void VolumePanel::makeControls() {
  source_ = new QComboBox;
  source_->addItems({tr("Raw stack"), tr("Processed (current pipeline)")});
  mode_ = new QComboBox;
  mode_->addItems(
      {tr("Maximum intensity"), tr("Attenuated MIP"), tr("Average"), tr("Iso-surface")});
  attenuation_ = new QDoubleSpinBox;
  attenuation_->setRange(0.0, 10.0);
  attenuation_->setDecimals(3);
  attenuation_->setSingleStep(0.01);
  attenuation_->setValue(params_.attenuation);
  attenuation_->setToolTip(
      tr("Attenuated MIP: how fast bright matter hides what lies behind it "
         "(per voxel of path)"));
  isoLevel_ = new QDoubleSpinBox;
  isoLevel_->setDecimals(4);
  isoLevel_->setRange(-1e30, 1e30);
  isoLevel_->setToolTip(tr("Iso-surface: the data value whose surface is drawn"));
  quality_ = new QComboBox;
  quality_->addItems({tr("Fine (½ voxel steps)"), tr("Normal (1 voxel)"), tr("Fast (2 voxels)")});
  quality_->setCurrentIndex(1);

  reset_ = new QPushButton(tr("Reset"));
  side_ = new QPushButton(tr("Side"));
  top_ = new QPushButton(tr("Top"));
  compare_ = new QPushButton(tr("Compare with CPU"));
  compare_->setToolTip(
      tr("Draw this frame on the CPU too, and show both times and their "
         "difference in the timing panel"));
  cancel_ = new QPushButton(tr("Cancel"));
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  status_ = new QLabel;
  status_->setWordWrap(true);
}

// Controls above, the view in the middle (taking the space), the loading bar and status below.
void VolumePanel::layOut(QWidget* viewContainer) {
  auto* controls = new QGridLayout;
  controls->addWidget(new QLabel(tr("Data")), 0, 0);
  controls->addWidget(source_, 0, 1);
  controls->addWidget(new QLabel(tr("Render")), 0, 2);
  controls->addWidget(mode_, 0, 3);
  controls->addWidget(new QLabel(tr("Attenuation")), 1, 0);
  controls->addWidget(attenuation_, 1, 1);
  controls->addWidget(new QLabel(tr("Iso level")), 1, 2);
  controls->addWidget(isoLevel_, 1, 3);
  controls->addWidget(new QLabel(tr("Sampling")), 2, 0);
  controls->addWidget(quality_, 2, 1);
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {reset_, side_, top_, compare_}) buttons->addWidget(b);
  auto* loading = new QHBoxLayout;
  loading->addWidget(progress_);
  loading->addWidget(cancel_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addLayout(buttons);
  layout->addWidget(viewContainer, 1);
  layout->addLayout(loading);
  layout->addWidget(status_);
  progress_->hide();
  cancel_->hide();
}

// Loading and rendering run on the worker; its callbacks come back on the GUI thread.
void VolumePanel::startWorker() {
  VolumeWorker::Callbacks callbacks;
  callbacks.progress = [this](double f) { progress_->setValue(int(1000 * f)); };
  callbacks.loaded = [this](auto volume, const QString& gpuNote) { onLoaded(volume, gpuNote); };
  callbacks.failed = [this](const QString& why) {
    progress_->hide();
    cancel_->hide();
    status_->setText(tr("3D view: %1").arg(why));
    emit failed(why);
  };
  callbacks.rendered = [this](compute::Image frame, double ms, compute::VolumeRenderParams p) {
    onRendered(std::move(frame), ms, p);
  };
  callbacks.compared = [this](const TimingRow& row) {
    compare_->setEnabled(true);
    emit operationTimed(row);
  };
  worker_ = std::make_unique<VolumeWorker>(std::move(callbacks));
}

void VolumePanel::connectControls() {
  connect(source_, &QComboBox::currentIndexChanged, this, [this] { load(); });
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] { requestFrame(); });
  connect(attenuation_, &QDoubleSpinBox::valueChanged, this, [this] { requestFrame(); });
  connect(isoLevel_, &QDoubleSpinBox::valueChanged, this, [this] { requestFrame(); });
  connect(quality_, &QComboBox::currentIndexChanged, this, [this] { requestFrame(); });
  connect(reset_, &QPushButton::clicked, this, &VolumePanel::resetView);
  connect(side_, &QPushButton::clicked, this, [this] {
    compute::orbitRotation(90, 0, params_.rotation);
    requestFrame();
  });
  connect(top_, &QPushButton::clicked, this, [this] {
    compute::orbitRotation(0, 90, params_.rotation);
    requestFrame();
  });
  connect(compare_, &QPushButton::clicked, this, &VolumePanel::compareWithCpu);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    worker_->cancelLoad();
    progress_->hide();
    cancel_->hide();
    status_->setText(tr("Loading cancelled."));
    stale_ = true;
  });
}

void VolumePanel::connectView() {
  connect(view_, &render::SliceView::orbited, this, [this](QPointF d) {
    // The volume's front follows the mouse (rows run up the screen when the origin is at the
    // bottom, as for FITS).
    const double down = view_->originBottom() ? -1.0 : 1.0;
    turn(down * d.y() * kDegreesPerPixel, -d.x() * kDegreesPerPixel);
  });
  connect(view_, &render::SliceView::orbitZoomed, this, [this](double factor) {
    params_.zoom = std::clamp(params_.zoom * factor, 0.1, 50.0);
    requestFrame();
  });
  connect(view_, &render::SliceView::framePresented, this, &VolumePanel::onFramePresented);
}

VolumePanel::~VolumePanel() {
  worker_.reset();      // no callback after this
  view_->clearSlice();  // the sinks let go of the view's texture while they exist
}

void VolumePanel::setStack(std::shared_ptr<const io::StackReader> reader, bool gpu) {
  reader_ = std::move(reader);
  wantGpu_ = gpu;
  volume_.reset();
  view_->clearSlice();
  view_->setOriginBottom(reader_ && reader_->info().format == "fits");
  stale_ = true;
  if (isVisible()) load();
}

void VolumePanel::setDisplay(const render::DisplaySettings& display) {
  render::DisplaySettings d = display;
  d.nanColour = QColor(31, 31, 36);  // rays that meet nothing: the view's background
  view_->setDisplay(d);
  requestFrame();
}

void VolumePanel::setProcessed(bool processed) { source_->setCurrentIndex(processed ? 1 : 0); }

void VolumePanel::setMode(compute::VolumeMode mode) { mode_->setCurrentIndex(int(mode)); }

void VolumePanel::turn(double tiltDegrees, double turnDegrees) {
  compute::turnView(params_.rotation, tiltDegrees, turnDegrees, params_.rotation);
  requestFrame();
}

void VolumePanel::resetView() {
  compute::orbitRotation(0, 0, params_.rotation);
  params_.zoom = 1.0;
  requestFrame();
}

void VolumePanel::compareWithCpu() {
  if (!volume_) return;
  compare_->setEnabled(false);
  worker_->compare(params_);
}

QString VolumePanel::rendererName() const {
  if (!volume_) return {};
  return worker_->gpu() ? QStringLiteral("CUDA") : QStringLiteral("OpenGL");
}

void VolumePanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) load();
}

void VolumePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  requestFrame();
}

void VolumePanel::load() {
  if (!reader_) return;
  if (!isVisible()) {
    stale_ = true;
    return;
  }
  stale_ = false;
  volume_.reset();
  VolumeRequest request;
  request.reader = reader_;
  if (source_->currentIndex() == 1) request.pipeline = pipeline_;
  // CUDA keeps the whole volume in a texture (4 GiB: 512 × 1024² unbinned); Mesa's software
  // OpenGL draws every sample on the CPU, so its volumes are kept small.
  const size_t wanted = wantGpu_ ? size_t(4) << 30 : size_t(512) << 20;
  request.budget = std::min(wanted, compute::defaultHostBudget() / 2);
  request.maxSide =
      wantGpu_ ? 16384 : (glSink_.maxTextureSide() > 0 ? glSink_.maxTextureSide() : 2048);
  progress_->setValue(0);
  progress_->show();
  cancel_->show();
  status_->setText(tr("Loading the volume…"));
  worker_->load(request, wantGpu_);
}

void VolumePanel::setOutputSize(QSize size) {
  fixedSize_ = size;
  requestFrame();
}

QSize VolumePanel::outputSize() const {
  if (!fixedSize_.isEmpty()) return fixedSize_;
  const double ratio = view_->devicePixelRatio();
  const int cap = worker_->gpu() ? 1024 : 512;
  double w = std::max(16.0, view_->width() * ratio), h = std::max(16.0, view_->height() * ratio);
  const double shrink = std::min(1.0, cap / std::max(w, h));
  return {std::max(16, int(w * shrink)), std::max(16, int(h * shrink))};
}

void VolumePanel::requestFrame() {
  if (!volume_) return;
  const QSize size = outputSize();
  params_.width = size.width(), params_.height = size.height();
  params_.mode = compute::VolumeMode(mode_->currentIndex());
  params_.low = view_->display().limits.low;
  params_.high = view_->display().limits.high;
  params_.attenuation = attenuation_->value();
  params_.isoLevel = isoLevel_->value();
  params_.stepScale = quality_->currentIndex() == 0 ? 0.5 : quality_->currentIndex() == 1 ? 1 : 2;
  framePending_ = true;
  if (worker_->gpu()) {
    worker_->render(params_, download_);
  } else {
    glSink_.setParams(params_);
    view_->setExternalSlice(&glSink_, params_.width, params_.height);
  }
}

void VolumePanel::onLoaded(std::shared_ptr<const LoadedVolume> volume, const QString& gpuNote) {
  progress_->hide();
  cancel_->hide();
  volume_ = volume;
  note_ = QString::fromStdString(volume->note);
  if (!gpuNote.isEmpty()) note_ += (note_.isEmpty() ? "" : "; ") + gpuNote;
  if (!worker_->gpu()) glSink_.setVolume(volume->volume);
#ifdef STACKLENS_HAVE_CUDA_TEXTURE_SINK
  if (worker_->gpu() && !cudaSink_) cudaSink_ = std::make_unique<render::CudaTextureSink>();
#else
  download_ = true;
#endif
  const QSignalBlocker quiet(isoLevel_);
  const double step = (volume->high - volume->low) / 100;
  isoLevel_->setSingleStep(step > 0 ? step : 1);
  isoLevel_->setValue(0.5 * (view_->display().limits.low + view_->display().limits.high));
  view_->fitToWindow();
  requestFrame();
  emit volumeLoaded();
}

void VolumePanel::onRendered(compute::Image frame, double ms,
                             const compute::VolumeRenderParams& p) {
  lastFrameMs_ = ms;
  const bool current = sameCamera(p, params_);
  if (frame.location() == compute::Location::Host) {
    auto pixels =
        std::make_shared<std::vector<float>>(frame.data(), frame.data() + frame.shape().count());
    view_->setSlice(std::move(pixels), p.width, p.height);
  } else {
#ifdef STACKLENS_HAVE_CUDA_TEXTURE_SINK
    cudaSink_->setSlice(std::move(frame), 0);
    view_->setExternalSlice(cudaSink_.get(), p.width, p.height);
#endif
  }
  shownIsCurrent_ = current;
}

void VolumePanel::onFramePresented() {
  if (!volume_ || !framePending_) return;
#ifdef STACKLENS_HAVE_CUDA_TEXTURE_SINK
  if (worker_->gpu() && !download_ && cudaSink_ && !cudaSink_->lastError().empty()) {
    // This OpenGL is not on the CUDA device (e.g. software OpenGL): frames go through the host.
    note_ +=
        (note_.isEmpty() ? "" : "; ") + tr("frames copied through the host (%1)")
                                            .arg(QString::fromStdString(cudaSink_->lastError()));
    download_ = true;
    requestFrame();
    return;
  }
#endif
  if (worker_->gpu() && !shownIsCurrent_) return;  // a newer camera's frame is on its way
  if (!worker_->gpu()) {
    if (!glSink_.lastError().empty()) {
      status_->setText(tr("3D view: %1").arg(QString::fromStdString(glSink_.lastError())));
      return;
    }
    const render::FrameTiming& t = view_->lastFrame();
    if (t.filled) lastFrameMs_ = double(t.fillEndNs - t.paintStartNs) / 1e6;
  }
  framePending_ = false;
  updateStatus();
  emit frameShown();
}

void VolumePanel::updateStatus() {
  const compute::Shape s = volume_->volume.shape();
  QString text = tr("%1 · %2 × %3 × %4 voxels · %5×%6 · %7 ms a frame")
                     .arg(rendererName())
                     .arg(s.z)
                     .arg(s.y)
                     .arg(s.x)
                     .arg(params_.width)
                     .arg(params_.height)
                     .arg(lastFrameMs_, 0, 'f', 1);
  if (!note_.isEmpty()) text += "\n" + note_;
  status_->setText(text);
}

}  // namespace stacklens::ui
