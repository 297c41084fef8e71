// File ▸ Process whole stack…: the Processing dock's pipeline at every slice, or 3D
// Richardson–Lucy with its settings over the whole volume, from the open stack into a new file,
// off the GUI thread, with its plan, a progress bar and Cancel.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ui/jobs/job_dialog.h"
#include "ui/jobs/whole_stack_job.h"

namespace stacklens::ui {

class WholeStackDialog : public JobDialog {
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

  void start() override;
  QLineEdit* outputEdit() const { return output_; }
  QComboBox* operationBox() const { return operation_; }  // 0: pipeline, 1: 3D RL
  QLabel* planLabel() const { return plan_; }
  bool openWhenDone() const { return open_->isChecked(); }
  QListWidget* devicesList() const { return devices_; }  // null without GPUs
  std::vector<int> chosenDevices() const;                // the checked GPUs' indices

 signals:
  void finished(const QString& outPath);  // written (and to be opened when openWhenDone())

 private:
  void chooseOutput();
  void setInputsEnabled(bool enabled) override;
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
  QLabel* plan_;
};

class MainWindow;
// File ▸ Process whole stack…: the dialog for the open stack with the processing dock's pipeline
// (or 3D deconvolution) on its backend; the result opens when asked. Null without a stack.
WholeStackDialog* openWholeStack(MainWindow* window);

}  // namespace stacklens::ui
