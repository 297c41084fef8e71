// Progress and the end of a save come back to the GUI thread queued; a cancelled save reports
// no progress after Cancel.
#include "ui/stack/save_tool.h"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

namespace stacklens::ui {

SaveTool::SaveTool(QStatusBar* bar, QObject* parent)
    : QObject(parent), bar_(bar), progress_(new QProgressBar), cancelButton_(new QToolButton) {
  progress_->setRange(0, 100);
  progress_->setMaximumWidth(160);
  progress_->hide();
  cancelButton_->setText(tr("Cancel save"));
  cancelButton_->hide();
  connect(cancelButton_, &QToolButton::clicked, this, &SaveTool::cancel);
  bar_->addPermanentWidget(progress_);
  bar_->addPermanentWidget(cancelButton_);
}

SaveTool::~SaveTool() {
  cancel();
  pool_.waitForDone();
}

void SaveTool::stackOpened(const OpenedStackView& stack) {
  reader_ = stack.reader;
  slices_ = stack.slices;
  z_ = 0;
}

void SaveTool::saveData(const QString& path, bool wholeStack) {
  if (!reader_) {
    emit failed(path, tr("no stack is open"));
    return;
  }
  const io::StackInfo& info = reader_->info();
  const SaveRequest request{
      reader_, slices_, info, wholeStack ? 0 : z_, wholeStack ? info.z : 1, path.toStdString()};
  if (!save(request, path)) emit failed(path, tr("another save is still running"));
}

void SaveTool::cancel() {
  if (cancel_) cancel_->store(true);
}

bool SaveTool::save(const SaveRequest& request, const QString& path) {
  if (cancel_) return false;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  cancel_ = cancel;
  progress_->setValue(0);
  progress_->show();
  cancelButton_->show();
  bar_->showMessage(tr("Saving %1…").arg(QFileInfo(path).fileName()));
  (void)QtConcurrent::run(&pool_, [this, request, cancel, path] {
    QString error;
    bool written = false;
    try {
      written = saveSlices(request, *cancel, [this, cancel](double f) {
        if (cancel->load()) return;
        QMetaObject::invokeMethod(
            this, [this, f] { progress_->setValue(int(f * 100)); }, Qt::QueuedConnection);
      });
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, error, path, written] {
          cancel_.reset();
          progress_->hide();
          cancelButton_->hide();
          if (!error.isEmpty()) {
            emit failed(path, error);
          } else if (!written) {
            bar_->showMessage(tr("Save cancelled; nothing was written"), 5000);
            emit cancelled(path);
          } else {
            bar_->showMessage(tr("Saved %1").arg(path), 5000);
            emit saved(path);
          }
        },
        Qt::QueuedConnection);
  });
  return true;
}

}  // namespace stacklens::ui
