// The projection dialog: the job on a pool thread, its reports queued back to the dialog.
#include "ui/jobs/projection_dialog.h"

#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <chrono>

#include "compute/job.h"
#include "compute/projection.h"
#include "ui/frame/main_window.h"
#include "ui/jobs/dialog_job.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"
#include "ui/live/timing_panel.h"

namespace stacklens::ui {
namespace {

const compute::Projection kProjections[] = {compute::Projection::Max,  compute::Projection::Min,
                                            compute::Projection::Mean, compute::Projection::Sum,
                                            compute::Projection::Std,  compute::Projection::Median};
constexpr int kProjectionCount = 6;

}  // namespace

ProjectionDialog::ProjectionDialog(ProjectionRequest request,
                                   std::function<std::unique_ptr<compute::Backend>()> makeBackend,
                                   std::function<std::unique_ptr<compute::Backend>()> makeTwin,
                                   const QString& backendName, QWidget* parent)
    : JobDialog(tr("Start"), parent),
      request_(std::move(request)),
      makeBackend_(std::move(makeBackend)),
      makeTwin_(std::move(makeTwin)) {
  setWindowTitle(tr("Z projection / moment map"));
  pipeline_ = request_.pipeline;
  const io::StackInfo& info = request_.reader->info();
  auto* form = new QFormLayout;
  kind_ = new QComboBox;
  for (compute::Projection op : kProjections)
    kind_->addItem(tr("Z project: %1").arg(compute::projectionName(op)));
  kind_->addItem(tr("Moment 0: integrated intensity"));
  kind_->addItem(tr("Moment 1: intensity-weighted coordinate"));
  kind_->addItem(tr("Moment 2: intensity-weighted dispersion"));
  form->addRow(tr("Make:"), kind_);
  first_ = new QSpinBox;
  last_ = new QSpinBox;
  for (QSpinBox* b : {first_, last_}) b->setRange(0, int(info.z - 1));
  first_->setValue(int(request_.first));
  last_->setValue(int(request_.last < 0 ? info.z - 1 : request_.last));
  auto* range = new QHBoxLayout;
  range->addWidget(first_);
  range->addWidget(new QLabel(tr("to")));
  range->addWidget(last_);
  form->addRow(tr("Slices:"), range);
  clip_ = new QCheckBox(tr("Leave out voxels below"));
  clipValue_ = new QDoubleSpinBox;
  clipValue_->setRange(-1e30, 1e30);
  clipValue_->setDecimals(6);
  auto* clipRow = new QHBoxLayout;
  clipRow->addWidget(clip_);
  clipRow->addWidget(clipValue_);
  form->addRow(tr("Noise clip:"), clipRow);
  data_ = new QComboBox;
  data_->addItem(tr("Raw slices"));
  data_->addItem(tr("Processed slices (the current pipeline)"));
  const bool pipelineRuns = pipeline_ && pipeline_->anyEnabled();
  if (!pipelineRuns) qobject_cast<QStandardItemModel*>(data_->model())->item(1)->setEnabled(false);
  data_->setCurrentIndex(0);
  form->addRow(tr("Data:"), data_);
  form->addRow(tr("Backend:"), new QLabel(backendName));
  if (makeTwin_) {
    compare_ = new QCheckBox(tr("Also on the CPU, for the timing panel"));
    compare_->setChecked(true);
    form->addRow(QString(), compare_);
  }
  output_ = new QLineEdit;
  auto* browse = new QPushButton(tr("Browse…"));
  auto* row = new QHBoxLayout;
  row->addWidget(output_);
  row->addWidget(browse);
  form->addRow(tr("Output:"), row);
  open_ = new QCheckBox(tr("Open the result when done"));
  open_->setChecked(true);
  form->addRow(QString(), open_);
  status_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  addJobRows(layout);
  connect(kind_, &QComboBox::currentIndexChanged, this, &ProjectionDialog::choiceChanged);
  connect(data_, &QComboBox::currentIndexChanged, this, &ProjectionDialog::choiceChanged);
  connect(output_, &QLineEdit::textEdited, this, [this] { outputEdited_ = true; });
  connect(browse, &QPushButton::clicked, this, &ProjectionDialog::chooseOutput);
  choiceChanged();
}

ProjectionRequest ProjectionDialog::request() const {
  ProjectionRequest r = request_;
  const int kind = kind_->currentIndex();
  r.moment = kind >= kProjectionCount;
  if (r.moment)
    r.order = kind - kProjectionCount;
  else
    r.op = kProjections[kind];
  r.first = std::min(first_->value(), last_->value());
  r.last = std::max(first_->value(), last_->value());
  r.clip = r.moment && clip_->isChecked() ? clipValue_->value()
                                          : -std::numeric_limits<double>::infinity();
  r.pipeline = data_->currentIndex() == 1 ? pipeline_ : std::nullopt;
  r.outPath = output_->text().toStdString();
  return r;
}

// The clip applies to moments only; the output's default name follows the choice until edited.
void ProjectionDialog::choiceChanged() {
  const bool moment = kind_->currentIndex() >= kProjectionCount;
  clip_->setEnabled(moment);
  clipValue_->setEnabled(moment);
  if (!outputEdited_) {
    ProjectionRequest r = request();
    output_->setText(QString::fromStdString(defaultProjectionPath(r)));
  }
}

void ProjectionDialog::chooseOutput() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Write the image to"), output_->text(),
                                                    tr("FITS (*.fits *.fit)"));
  if (path.isEmpty()) return;
  output_->setText(path);
  outputEdited_ = true;
}

void ProjectionDialog::setInputsEnabled(bool enabled) {
  for (QWidget* w :
       std::initializer_list<QWidget*>{kind_, data_, first_, last_, clip_, clipValue_, output_})
    w->setEnabled(enabled);
  if (enabled) choiceChanged();  // the clip's state follows the kind again
}

void ProjectionDialog::start() {
  if (running()) return;
  const ProjectionRequest request = this->request();
  auto twin = compare_ && compare_->isChecked() ? makeTwin_ : nullptr;
  begin(tr("Starting…"));
  future_ = runForDialog<ProjectionDialog>(
      pool_, this,
      [this, request, make = makeBackend_, twin](const PostToDialog<ProjectionDialog>& post) {
        auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        std::unique_ptr<compute::Backend> backend = make();
        std::unique_ptr<compute::Backend> cpu = twin ? twin() : nullptr;
        const ProjectionOutcome outcome =
            runProjection(request, *backend, cpu.get(), &stop_, [&](double f) {
              const auto now = std::chrono::steady_clock::now();
              if (now - last < std::chrono::milliseconds(50) && f < 1.0) return;
              last = now;
              post([f](ProjectionDialog* d) { d->progress_->setValue(int(f * 1000)); });
            });
        const QString out = QString::fromStdString(request.outPath);
        post([out, outcome](ProjectionDialog* d) {
          d->jobEnded(1000, tr("Written: %1").arg(out));
          emit d->finished(out, outcome);
        });
      });
}

}  // namespace stacklens::ui

namespace stacklens::ui {

// A range of slices (the whole stack at first), raw or processed, on the dock's backend and, on
// the GPU, on the CPU too for the timing panel.
ProjectionDialog* openProjection(MainWindow* window) {
  if (!window->stack()) return nullptr;
  ProjectionRequest request;
  request.reader = window->sharedStack();
  request.pipeline = window->tool<LiveProcessing>()->dock()->pipeline();
  const bool gpu = window->tool<LiveProcessing>()->gpuChosen();
  auto cpu = [] { return compute::makeCpuBackend(); };
  std::function<std::unique_ptr<compute::Backend>()> make = cpu, twin;
  if (gpu) {
    make = [] { return compute::makeCudaBackend(); };
    twin = cpu;
  }
  auto* dialog = new ProjectionDialog(request, make, twin,
                                      gpu ? QObject::tr("GPU (CUDA)") : QObject::tr("CPU"), window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  QObject::connect(dialog, &ProjectionDialog::finished, window,
                   [window, dialog](const QString& out, const ProjectionOutcome& o) {
                     TimingRow row;
                     row.stage = QString::fromStdString(o.title);
                     if (o.backend == "cuda") {
                       row.gpuTotalMs = o.milliseconds;
                       row.cpuMs = o.cpuMilliseconds;
                       row.speedupTotal = o.cpuMilliseconds / o.milliseconds;
                       row.maxAbs = o.maxAbs;
                       row.relL2 = o.relL2;
                     } else {
                       row.cpuMs = o.milliseconds;
                     }
                     window->tool<LiveProcessing>()->timingPanel()->showOperation(row);
                     if (dialog->openWhenDone()) window->openFile(out);
                   });
  dialog->show();
  return dialog;
}

}  // namespace stacklens::ui
