// File ▸ Process whole stack…: the Processing dock's pipeline at every slice, or 3D
// Richardson–Lucy with its settings over the whole volume, from the open stack into a new file,
// off the GUI thread, with its plan, a progress bar and Cancel.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QFuture>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ui/whole_stack_job.h"

namespace stacklens::ui {

class WholeStackDialog : public QDialog {
  Q_OBJECT
 public:
  // makeBackend runs on the job's thread (a CUDA context takes a while to make). With
  // request.pipeline set the operation can be chosen (the pipeline first), else it is 3D RL.
  // gpuNames: the visible GPUs when the job runs on CUDA (a checkable list; every one checked
  // at first): 3D Richardson–Lucy shares its blocks among those checked.
  WholeStackDialog(WholeStackRequest request,
                   std::function<std::unique_ptr<compute::Backend>()> makeBackend,
                   const QString& backendName, QWidget* parent = nullptr,
                   const std::vector<std::string>& gpuNames = {});
  ~WholeStackDialog() override;  // cancels a running job and waits for it

  void start();
  void cancel();
  // The end of a run (ui/dialog_job.h): inputs enabled again, the bar at progress (as it is
  // when negative), the status line.
  void jobEnded(int progress, const QString& status);
  bool running() const { return running_; }
  QLineEdit* outputEdit() const { return output_; }
  QComboBox* operationBox() const { return operation_; }  // 0: pipeline, 1: 3D RL
  QProgressBar* progressBar() const { return progress_; }
  QLabel* planLabel() const { return plan_; }
  QLabel* statusLabel() const { return status_; }
  bool openWhenDone() const { return open_->isChecked(); }
  QListWidget* devicesList() const { return devices_; }  // null without GPUs
  std::vector<int> chosenDevices() const;                // the checked GPUs' indices

 signals:
  void finished(const QString& outPath);  // written (and to be opened when openWhenDone())
  void failed(const QString& message);
  void cancelled();

 private:
  void chooseOutput();
  void setRunning(bool on);
  void showOperation();

  enum Operation { CurrentPipeline = 0, Deconvolution3D = 1 };

  WholeStackRequest request_;
  std::optional<compute::Pipeline> pipeline_;  // the dock's, when one was given
  QComboBox* operation_;
  QLabel* operationText_;
  std::function<std::unique_ptr<compute::Backend>()> makeBackend_;
  QLineEdit* output_;
  QCheckBox* open_;
  QListWidget* devices_ = nullptr;
  QLabel *plan_, *status_;
  QProgressBar* progress_;
  QPushButton *start_, *cancel_;
  std::atomic<bool> stop_{false};
  bool running_ = false;
  QThreadPool pool_;  // one thread of its own, at the processing priority
  QFuture<void> future_;
};

class MainWindow;
// File ▸ Process whole stack…: the dialog for the open stack with the processing dock's pipeline
// (or 3D deconvolution) on its backend; the result opens when asked. Null without a stack.
WholeStackDialog* openWholeStack(MainWindow* window);

}  // namespace stacklens::ui
