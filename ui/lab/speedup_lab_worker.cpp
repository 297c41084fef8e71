// The speedup lab's background runs (see speedup_lab_worker.h).
#include "ui/lab/speedup_lab_worker.h"

#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include "compute/lab/sweep_runner.h"
#include "ui/frame/thread_priority.h"

namespace stacklens::ui {

namespace lab = compute::lab;

SpeedupLabWorker::SpeedupLabWorker(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);  // one sweep at a time: two would time each other
}

SpeedupLabWorker::~SpeedupLabWorker() {
  if (cancel_) *cancel_ = true;
  pool_.waitForDone();
}

void SpeedupLabWorker::post(int generation, std::function<void(SpeedupLabWorker*)> f) {
  QPointer<SpeedupLabWorker> self(this);
  QMetaObject::invokeMethod(
      this,
      [self, generation, f = std::move(f)] {
        if (self && self->generation_ == generation) f(self.data());
      },
      Qt::QueuedConnection);
}

void SpeedupLabWorker::start(lab::SweepSpec spec) {
  lab::validate(spec);
  cancel();
  const int generation = ++generation_;
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  running_ = true;
  auto flag = cancel_;
  (void)QtConcurrent::run(&pool_, [this, spec = std::move(spec), flag, generation] {
    // Below the GUI thread's priority (the backends' threads inherit it): the window keeps
    // drawing while every core computes.
    static thread_local const bool lowered = (lowerThreadPriority(), true);
    (void)lowered;
    lab::SweepCallbacks cb;
    cb.cancel = flag.get();
    cb.machine = [this, generation](const lab::Machine& m) {
      post(generation, [m](SpeedupLabWorker* w) { emit w->machineKnown(m); });
    };
    cb.point = [this, generation](const lab::Point& p) {
      post(generation, [p](SpeedupLabWorker* w) { emit w->pointReady(p); });
    };
    cb.progress = [this, generation](int done, int total) {
      post(generation, [done, total](SpeedupLabWorker* w) { emit w->progress(done, total); });
    };
    try {
      lab::Sweep sweep = lab::runSweep(spec, cb);
      post(generation, [sweep = std::move(sweep)](SpeedupLabWorker* w) {
        w->running_ = false;
        emit w->finished(sweep);
      });
    } catch (const std::exception& e) {
      const QString why = QString::fromUtf8(e.what());
      post(generation, [why](SpeedupLabWorker* w) {
        w->running_ = false;
        emit w->failed(why);
      });
    }
  });
}

void SpeedupLabWorker::cancel() {
  if (cancel_) *cancel_ = true;
}

}  // namespace stacklens::ui
