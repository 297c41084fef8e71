// The context the command needs beyond the pipeline comes from the window: the file, its HDU
// and plane, the PSF file, and the backend the dock runs on.
#include "ui/live/copy_command.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>

#include "compute/pipeline_command.h"
#include "ui/frame/main_window.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"

namespace stacklens::ui {

QString pipelineCommandText(const MainWindow* window) {
  if (!window->stack()) return {};
  const io::StackInfo& info = window->info();
  const ProcessingDock* dock = window->tool<LiveProcessing>()->dock();
  const QFileInfo input(QString::fromStdString(info.path));
  QString suffix = input.completeSuffix();
  if (suffix.endsWith(".fz") || suffix.endsWith(".gz")) suffix = "fits";  // written uncompressed
  if (suffix.endsWith("zarr")) suffix = "fits";  // Zarr is read, not yet written
  compute::CommandContext context;
  context.input = info.path;
  context.output = input.dir().filePath(input.baseName() + "_processed." + suffix).toStdString();
  if (info.hdus.size() > 1) context.hdu = info.hdu;
  if (info.planes > 1) context.plane = info.plane;
  context.psfPath = dock->psfFile().toStdString();
  switch (dock->backendChoice()) {
    case ProcessingDock::BackendChoice::Gpu:
      context.backend = "cuda";
      break;
    case ProcessingDock::BackendChoice::Cpu:
      context.backend = "cpu";
      break;
    case ProcessingDock::BackendChoice::Compare:
      break;  // the command runs on whichever the CLI chooses
  }
  const compute::Pipeline pipeline = dock->pipeline();
  if (pipeline.segmentation.enabled)
    context.sourcesCsv = input.dir().filePath(input.baseName() + "_sources.csv").toStdString();
  if (pipeline.statistics.enabled)
    context.statisticsCsv =
        input.dir().filePath(input.baseName() + "_statistics.csv").toStdString();
  const compute::PipelineCommand command = compute::pipelineCommand(pipeline, context);
  QString text = QString::fromStdString(command.line);
  for (const std::string& note : command.notes) text += "\n# " + QString::fromStdString(note);
  return text;
}

void installCopyCommand(MainWindow* window) {
  QAction* copy = window->editMenu()->addAction(QObject::tr("Copy as &command"));
  copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  copy->setToolTip(
      QObject::tr("The stacklens-cli line that runs this pipeline on the whole stack"));
  QObject::connect(copy, &QAction::triggered, window, [window] {
    const QString text = pipelineCommandText(window);
    if (text.isEmpty()) {
      window->statusBar()->showMessage(QObject::tr("Open a stack first."), 5000);
      return;
    }
    QApplication::clipboard()->setText(text);
    auto* box = new QMessageBox(QMessageBox::Information, QObject::tr("Copy as command"),
                                QObject::tr("Copied to the clipboard:"), QMessageBox::Ok, window);
    box->setInformativeText(text);
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  });
}

}  // namespace stacklens::ui
