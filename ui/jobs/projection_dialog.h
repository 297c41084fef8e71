// Image ▸ Z projection / moment map…: what to collapse (a projection or a moment, a slice range,
// raw or processed slices), where to write it, a progress bar and Cancel; the job runs off the
// GUI thread (ui/jobs/projection_job.h) and, on the GPU, again on the CPU for the timing panel.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSpinBox>
#include <functional>
#include <memory>

#include "ui/jobs/job_dialog.h"
#include "ui/jobs/projection_job.h"

namespace stacklens::ui {

class ProjectionDialog : public JobDialog {
  Q_OBJECT
 public:
  // request: the open stack, the current slice as the range's centre, and the pipeline (when
  // one runs) for "processed". makeBackend and makeTwin run on the job's thread; makeTwin may
  // be empty (no CPU twin to time against).
  ProjectionDialog(ProjectionRequest request,
                   std::function<std::unique_ptr<compute::Backend>()> makeBackend,
                   std::function<std::unique_ptr<compute::Backend>()> makeTwin,
                   const QString& backendName, QWidget* parent = nullptr);

  void start() override;
  QComboBox* kindBox() const { return kind_; }  // the projections, then moments 0, 1, 2
  QComboBox* dataBox() const { return data_; }  // 0: raw, 1: processed
  QSpinBox* firstBox() const { return first_; }
  QSpinBox* lastBox() const { return last_; }
  QCheckBox* clipBox() const { return clip_; }
  QDoubleSpinBox* clipValueBox() const { return clipValue_; }
  QCheckBox* compareBox() const { return compare_; }  // null without a twin
  QLineEdit* outputEdit() const { return output_; }
  bool openWhenDone() const { return open_->isChecked(); }
  ProjectionRequest request() const;  // as the fields now say

 signals:
  void finished(const QString& outPath, const ProjectionOutcome& outcome);

 private:
  void choiceChanged();
  void chooseOutput();
  void setInputsEnabled(bool enabled) override;

  ProjectionRequest request_;
  std::optional<compute::Pipeline> pipeline_;
  std::function<std::unique_ptr<compute::Backend>()> makeBackend_, makeTwin_;
  QComboBox *kind_, *data_;
  QSpinBox *first_, *last_;
  QCheckBox* clip_;
  QDoubleSpinBox* clipValue_;
  QCheckBox* compare_ = nullptr;
  QLineEdit* output_;
  QCheckBox* open_;
  bool outputEdited_ = false;
};

class MainWindow;
// Image ▸ Z projection / moment map…: the dialog for the open stack; its result goes to the
// timing panel and opens when asked. Null without a stack.
ProjectionDialog* openProjection(MainWindow* window);

}  // namespace stacklens::ui

Q_DECLARE_METATYPE(stacklens::ui::ProjectionOutcome)
