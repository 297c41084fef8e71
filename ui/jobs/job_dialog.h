// The base of the dialogs that run one job off the GUI thread (Process whole stack, Z projection,
// Export movie, PSF generator, Measure PSF): Start and Close (Cancel while running), a progress
// bar, a status line, the running state, the stop flag the job polls, and a pool of one thread
// for the job (ui/jobs/dialog_job.h runs it there at the processing priority).
#pragma once

#include <QDialog>
#include <QFuture>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QThreadPool>
#include <atomic>
#include <initializer_list>

class QVBoxLayout;

namespace stacklens::ui {

class JobDialog : public QDialog {
  Q_OBJECT
 public:
  ~JobDialog() override;  // cancels a running job and waits for it

  // Starts the job from the dialog's fields (nothing while one runs).
  virtual void start() = 0;
  // The running job stops at its next check; the status says so.
  void cancel();
  // The end of a run (ui/jobs/dialog_job.h): inputs enabled again, the bar at progress (as it is
  // when negative), the status line.
  void jobEnded(int progress, const QString& status);
  bool running() const { return running_; }
  QPushButton* startButton() const { return start_; }
  QProgressBar* progressBar() const { return progress_; }
  QLabel* statusLabel() const { return status_; }

 signals:
  void failed(const QString& message);
  void cancelled();

 protected:
  // startText: the start button's label.
  JobDialog(const QString& startText, QWidget* parent);
  // The progress bar, the status line and the buttons, below the subclass's own rows;
  // extraButtons (a PSF dialog's Use and Save…) join Start and Close in the button row.
  void addJobRows(QVBoxLayout* layout, std::initializer_list<QPushButton*> extraButtons = {});
  // A run begins: inputs disabled, Close becomes Cancel, the bar at 0, the status line.
  void begin(const QString& status);
  // The subclass's inputs follow the running state (disabled while a job runs).
  virtual void setInputsEnabled(bool enabled) = 0;

  QProgressBar* progress_;
  QLabel* status_;
  std::atomic<bool> stop_{false};
  QThreadPool pool_;  // one thread of its own
  QFuture<void> future_;

 private:
  void setRunning(bool on);

  QPushButton *start_, *close_;
  bool running_ = false;
};

}  // namespace stacklens::ui
