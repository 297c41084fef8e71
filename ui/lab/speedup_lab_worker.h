// Runs the speedup lab's sweep off the GUI thread: points come back one by one, queued to the GUI
// thread, and a newer run or Cancel makes an older run's late results be dropped (a generation).
#pragma once

#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <memory>

#include "compute/lab/sweep.h"

namespace stacklens::ui {

class SpeedupLabWorker : public QObject {
  Q_OBJECT
 public:
  explicit SpeedupLabWorker(QObject* parent = nullptr);
  // Cancels a run and waits for it: the ops poll the flag, so the wait is one repeat at most.
  ~SpeedupLabWorker() override;

  // Starts spec (validated here: InvalidArgument propagates to the caller) and cancels any
  // run in progress.
  void start(compute::lab::SweepSpec spec);
  void cancel();
  bool running() const { return running_; }

 signals:
  void machineKnown(const compute::lab::Machine& machine);
  void pointReady(const compute::lab::Point& point);
  void progress(int done, int total);
  // The run's points (the whole sweep; cancelled set when Cancel stopped it).
  void finished(const compute::lab::Sweep& sweep);
  void failed(const QString& why);

 private:
  void post(int generation, std::function<void(SpeedupLabWorker*)> f);

  QThreadPool pool_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  int generation_ = 0;
  bool running_ = false;
};

}  // namespace stacklens::ui
