// The job dialogs' shared start, cancel and end: the buttons and inputs follow the running state.
#include "ui/jobs/job_dialog.h"

#include <QDialogButtonBox>
#include <QVBoxLayout>

namespace stacklens::ui {

JobDialog::JobDialog(const QString& startText, QWidget* parent) : QDialog(parent) {
  pool_.setMaxThreadCount(1);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  status_ = new QLabel;
  start_ = new QPushButton(startText);
  close_ = new QPushButton(tr("Close"));
  connect(start_, &QPushButton::clicked, this, [this] { start(); });
  connect(close_, &QPushButton::clicked, this, [this] {
    if (running_)
      cancel();
    else
      close();
  });
}

// The job posts to the dialog only while it exists (ui/jobs/dialog_job.h), and polls stop_, which
// lives here: the job may outlive the subclass's part until this returns.
JobDialog::~JobDialog() {
  stop_ = true;
  future_.waitForFinished();
}

void JobDialog::addJobRows(QVBoxLayout* layout, std::initializer_list<QPushButton*> extraButtons) {
  auto* buttons = new QDialogButtonBox;
  buttons->addButton(start_, QDialogButtonBox::AcceptRole);
  for (QPushButton* button : extraButtons) buttons->addButton(button, QDialogButtonBox::ActionRole);
  buttons->addButton(close_, QDialogButtonBox::RejectRole);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(buttons);
}

void JobDialog::setRunning(bool on) {
  running_ = on;
  start_->setEnabled(!on);
  setInputsEnabled(!on);
  close_->setText(on ? tr("Cancel") : tr("Close"));
}

void JobDialog::begin(const QString& status) {
  stop_ = false;
  setRunning(true);
  progress_->setValue(0);
  status_->setText(status);
}

void JobDialog::jobEnded(int progress, const QString& status) {
  setRunning(false);
  if (progress >= 0) progress_->setValue(progress);
  status_->setText(status);
}

void JobDialog::cancel() {
  if (!running_) return;
  stop_ = true;
  status_->setText(tr("Cancelling…"));
}

}  // namespace stacklens::ui
