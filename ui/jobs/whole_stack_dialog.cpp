// The whole-stack dialog: the job on a pool thread, its reports queued back to the dialog.
#include "ui/jobs/whole_stack_dialog.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QPointer>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <chrono>

#include <QDir>
#include "compute/device_list.h"
#include "compute/job.h"
#include "ui/frame/main_window.h"
#include "ui/jobs/dialog_job.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"
#include "ui/live/processing_worker.h"

namespace stacklens::ui {

WholeStackDialog::WholeStackDialog(WholeStackRequest request,
                                   std::function<std::unique_ptr<compute::Backend>()> makeBackend,
                                   const QString& backendName, QWidget* parent,
                                   const std::vector<std::string>& gpuNames)
    : JobDialog(tr("Start"), parent),
      request_(std::move(request)),
      makeBackend_(std::move(makeBackend)) {
  setWindowTitle(tr("Process whole stack"));
  const io::StackInfo& info = request_.reader->info();
  auto* form = new QFormLayout;
  form->addRow(tr("Input:"), new QLabel(QString("%1 (%2 × %3 × %4)")
                                            .arg(QString::fromStdString(info.path))
                                            .arg(info.z)
                                            .arg(info.y)
                                            .arg(info.x)));
  pipeline_ = request_.pipeline;
  operation_ = new QComboBox;
  operation_->addItem(tr("The current pipeline at every slice (what the viewer shows)"));
  operation_->addItem(tr("3D Richardson–Lucy over the whole volume"));
  form->addRow(tr("Operation:"), operation_);
  operationText_ = new QLabel;
  operationText_->setWordWrap(true);
  form->addRow(QString(), operationText_);
  const bool pipelineRuns = pipeline_ && pipeline_->anyEnabled();
  operation_->setCurrentIndex(pipelineRuns ? CurrentPipeline : Deconvolution3D);
  if (!pipelineRuns)
    qobject_cast<QStandardItemModel*>(operation_->model())
        ->item(CurrentPipeline)
        ->setEnabled(false);
  form->addRow(tr("Backend:"), new QLabel(backendName));
  if (!gpuNames.empty()) {
    devices_ = new QListWidget;
    for (size_t i = 0; i < gpuNames.size(); ++i) {
      auto* item = new QListWidgetItem(
          tr("GPU %1: %2").arg(i).arg(QString::fromStdString(gpuNames[i])), devices_);
      item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
      item->setCheckState(Qt::Checked);
    }
    devices_->setMaximumHeight(devices_->sizeHintForRow(0) *
                                   int(std::min<size_t>(gpuNames.size(), 4)) +
                               2 * devices_->frameWidth());
    devices_->setToolTip(tr("3D Richardson–Lucy shares its blocks among the checked GPUs"));
    form->addRow(tr("GPUs:"), devices_);
  }
  output_ = new QLineEdit(QString::fromStdString(request_.outPath));
  auto* browse = new QPushButton(tr("Browse…"));
  auto* row = new QHBoxLayout;
  row->addWidget(output_);
  row->addWidget(browse);
  form->addRow(tr("Output:"), row);
  open_ = new QCheckBox(tr("Open the result when done"));
  open_->setChecked(true);
  form->addRow(QString(), open_);
  plan_ = new QLabel(tr("The plan of blocks is made when the job starts."));
  plan_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(plan_);
  addJobRows(layout);
  connect(operation_, &QComboBox::currentIndexChanged, this, &WholeStackDialog::showOperation);
  showOperation();
  connect(browse, &QPushButton::clicked, this, &WholeStackDialog::chooseOutput);
}

// The request follows the chosen operation; the text says what it will run.
void WholeStackDialog::showOperation() {
  const compute::Shape psf = request_.psf.shape();
  if (operation_->currentIndex() == CurrentPipeline && pipeline_) {
    request_.pipeline = pipeline_;
    const int64_t half = pipeline_->slabHalfWidth();
    operationText_->setText(
        tr("%1%2 (the Processing dock's settings). Statistics and sources go to CSV tables beside "
           "the output.")
            .arg(QString::fromStdString(pipeline_->describe()))
            .arg(half > 0 ? tr("; each slice with %1 slices on each side").arg(half) : QString()));
  } else {
    request_.pipeline.reset();
    operationText_->setText(tr("3D Richardson–Lucy, %1 iterations, PSF %2 × %3 × %4 (the "
                               "Processing dock's settings), in blocks when the stack does not "
                               "fit the memory budget")
                                .arg(request_.params.iterations)
                                .arg(psf.z)
                                .arg(psf.y)
                                .arg(psf.x));
  }
}

void WholeStackDialog::chooseOutput() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Write the result to"), output_->text(),
                                   tr("FITS or TIFF (*.fits *.fit *.tif *.tiff)"));
  if (!path.isEmpty()) output_->setText(path);
}

std::vector<int> WholeStackDialog::chosenDevices() const {
  std::vector<int> chosen;
  if (!devices_) return chosen;
  for (int i = 0; i < devices_->count(); ++i)
    if (devices_->item(i)->checkState() == Qt::Checked) chosen.push_back(i);
  return chosen;
}

void WholeStackDialog::setInputsEnabled(bool enabled) {
  output_->setEnabled(enabled);
  operation_->setEnabled(enabled);
  if (devices_) devices_->setEnabled(enabled);
}

void WholeStackDialog::start() {
  if (running()) return;
  request_.outPath = output_->text().toStdString();
  request_.devices = chosenDevices();
  if (devices_ && request_.devices.empty()) {
    status_->setText(tr("Check at least one GPU."));
    return;
  }
  begin(tr("Starting…"));
  future_ = runForDialog<WholeStackDialog>(
      pool_, this,
      [this, request = request_, make = makeBackend_](const PostToDialog<WholeStackDialog>& post) {
        // Reports reach the dialog at most twenty a second (the last one always).
        auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        std::unique_ptr<compute::Backend> backend = make();
        const QString plan =
            QString::fromStdString(describeWholeStack(request, *backend)).trimmed();
        post([plan](WholeStackDialog* d) { d->plan_->setText(plan); });
        runWholeStack(request, *backend, &stop_, [&](const WholeStackProgress& p) {
          const auto now = std::chrono::steady_clock::now();
          if (now - last < std::chrono::milliseconds(50) && p.fraction < 1.0) return;
          last = now;
          post([p](WholeStackDialog* d) {
            d->progress_->setValue(static_cast<int>(p.fraction * 1000));
            d->status_->setText(tr("%1… %2 %")
                                    .arg(QString::fromStdString(p.phase))
                                    .arg(static_cast<int>(p.fraction * 100)));
          });
        });
        const QString out = QString::fromStdString(request.outPath);
        post([out](WholeStackDialog* d) {
          d->jobEnded(1000, tr("Written: %1").arg(out));
          emit d->finished(out);
        });
      });
}

}  // namespace stacklens::ui

namespace stacklens::ui {

WholeStackDialog* openWholeStack(MainWindow* window) {
  if (!window->stack()) return nullptr;
  WholeStackRequest request;
  request.reader = window->sharedStack();
  const compute::Pipeline current = window->tool<LiveProcessing>()->dock()->pipeline();
  request.pipeline = current;
  compute::Pipeline rl3d = current;
  rl3d.deconvolution.params.threeD = true;
  request.psf = compute::pipelinePsf(rl3d);
  request.params = compute::deconvolutionParams(rl3d, request.psf);
  const QFileInfo input(window->filePath());
  request.outPath =
      input.dir().filePath(input.completeBaseName() + "_processed.fits").toStdString();
  const bool gpu = window->tool<LiveProcessing>()->gpuChosen();
  std::function<std::unique_ptr<compute::Backend>()> make;
  if (gpu)
    make = [] { return compute::makeCudaBackend(); };
  else
    make = [] { return compute::makeCpuBackend(); };
  auto* dialog =
      new WholeStackDialog(request, make, gpu ? QObject::tr("GPU (CUDA)") : QObject::tr("CPU"),
                           window, gpu ? compute::cudaDeviceNames() : std::vector<std::string>{});
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  QObject::connect(dialog, &WholeStackDialog::finished, window,
                   [window, dialog](const QString& out) {
                     if (dialog->openWhenDone()) window->openFile(out);
                   });
  dialog->show();
  return dialog;
}

}  // namespace stacklens::ui
