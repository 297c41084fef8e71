// How a job dialog (ui/jobs/job_dialog.h: Process whole stack, Z projection, Export movie, the PSF
// dialogs) runs its job: on the dialog's pool at the processing priority (the backends' threads
// inherit it, so the viewer stays responsive); whatever it posts, and its end, reach the dialog
// queued on the GUI thread, and only while the dialog exists.
#pragma once

#include <QMetaObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <functional>

#include "compute/job.h"
#include "ui/frame/thread_priority.h"

namespace stacklens::ui {

template <class Dialog>
using PostToDialog = std::function<void(std::function<void(Dialog*)>)>;

// Runs job(post) on pool. The job posts its progress and its result with post; when it throws
// compute::Cancelled the dialog says so and emits cancelled(), when it throws anything else it
// says why and emits failed(message). Dialog::jobEnded(progress, status) ends a run on the
// dialog: its inputs enabled again, the bar at progress (left as it is when negative), status.
template <class Dialog>
QFuture<void> runForDialog(QThreadPool& pool, Dialog* dialog,
                           std::function<void(const PostToDialog<Dialog>& post)> job) {
  QPointer<Dialog> self(dialog);
  return QtConcurrent::run(&pool, [self, job = std::move(job)] {
    static thread_local const bool lowered = (lowerThreadPriority(), true);
    (void)lowered;
    const PostToDialog<Dialog> post = [self](std::function<void(Dialog*)> f) {
      QMetaObject::invokeMethod(
          self.data(),
          [self, f = std::move(f)] {
            if (self) f(self.data());
          },
          Qt::QueuedConnection);
    };
    try {
      job(post);
    } catch (const compute::Cancelled&) {
      post([](Dialog* d) {
        d->jobEnded(0, Dialog::tr("Cancelled; nothing was written."));
        emit d->cancelled();
      });
    } catch (const std::exception& e) {
      const QString message = QString::fromUtf8(e.what());
      post([message](Dialog* d) {
        d->jobEnded(-1, Dialog::tr("Failed: %1").arg(message));
        emit d->failed(message);
      });
    }
  });
}

}  // namespace stacklens::ui
