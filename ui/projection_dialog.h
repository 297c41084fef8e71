// Image ▸ Z projection / moment map…: what to collapse (a projection or a moment, a slice range,
// raw or processed slices), where to write it, a progress bar and Cancel; the job runs off the
// GUI thread (ui/projection_job.h) and, on the GPU, again on the CPU for the timing panel.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDoubleSpinBox>
#include <QFuture>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>

#include "ui/projection_job.h"

namespace stacklens::ui {

class ProjectionDialog : public QDialog {
  Q_OBJECT
 public:
  // request: the open stack, the current slice as the range's centre, and the pipeline (when
  // one runs) for "processed". makeBackend and makeTwin run on the job's thread; makeTwin may
  // be empty (no CPU twin to time against).
  ProjectionDialog(ProjectionRequest request,
                   std::function<std::unique_ptr<compute::Backend>()> makeBackend,
                   std::function<std::unique_ptr<compute::Backend>()> makeTwin,
                   const QString& backendName, QWidget* parent = nullptr);
  ~ProjectionDialog() override;  // cancels a running job and waits for it

  void start();
  void cancel();
  // The end of a run (ui/dialog_job.h): inputs enabled again, the bar at progress (as it is
  // when negative), the status line.
  void jobEnded(int progress, const QString& status);
  bool running() const { return running_; }
  QComboBox* kindBox() const { return kind_; }  // the projections, then moments 0, 1, 2
  QComboBox* dataBox() const { return data_; }  // 0: raw, 1: processed
  QSpinBox* firstBox() const { return first_; }
  QSpinBox* lastBox() const { return last_; }
  QCheckBox* clipBox() const { return clip_; }
  QDoubleSpinBox* clipValueBox() const { return clipValue_; }
  QCheckBox* compareBox() const { return compare_; }  // null without a twin
  QLineEdit* outputEdit() const { return output_; }
  QProgressBar* progressBar() const { return progress_; }
  QLabel* statusLabel() const { return status_; }
  bool openWhenDone() const { return open_->isChecked(); }
  ProjectionRequest request() const;  // as the fields now say

 signals:
  void finished(const QString& outPath, const ProjectionOutcome& outcome);
  void failed(const QString& message);
  void cancelled();

 private:
  void choiceChanged();
  void chooseOutput();
  void setRunning(bool on);

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
  QLabel* status_;
  QProgressBar* progress_;
  QPushButton *start_, *close_;
  bool outputEdited_ = false;
  std::atomic<bool> stop_{false};
  bool running_ = false;
  QThreadPool pool_;  // one thread of its own, at the processing priority
  QFuture<void> future_;
};

class MainWindow;
// Image ▸ Z projection / moment map…: the dialog for the open stack; its result goes to the
// timing panel and opens when asked. Null without a stack.
ProjectionDialog* openProjection(MainWindow* window);

}  // namespace stacklens::ui

Q_DECLARE_METATYPE(stacklens::ui::ProjectionOutcome)
