// What the dialogs that run one job off the GUI thread share (Process whole stack, Z projection,
// Export movie): the job runs on the dialog's pool at the processing priority (the backends'
// threads inherit it, so the viewer stays responsive); whatever it posts, and its end, reach the
// dialog queued on the GUI thread, and only while the dialog exists.
#pragma once

#include <QMetaObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <functional>

#include "compute/job.h"
#include "ui/processing_worker.h"

namespace stacklens::ui {

template <class Dialog>
using PostToDialog = std::function<void(std::function<void(Dialog*)>)>;

// Runs job(post) on pool. The job posts its progress and its result with post; when it throws
// compute::Cancelled, cancelled(dialog) runs, when it throws anything else failed(dialog, what).
template <class Dialog>
QFuture<void> runForDialog(QThreadPool& pool, Dialog* dialog,
                           std::function<void(const PostToDialog<Dialog>& post)> job,
                           std::function<void(Dialog*)> cancelled,
                           std::function<void(Dialog*, const QString&)> failed) {
  QPointer<Dialog> self(dialog);
  return QtConcurrent::run(&pool, [self, job = std::move(job), cancelled = std::move(cancelled),
                                   failed = std::move(failed)] {
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
      post(cancelled);
    } catch (const std::exception& e) {
      const QString message = QString::fromUtf8(e.what());
      post([failed, message](Dialog* d) { failed(d, message); });
    }
  });
}

}  // namespace stacklens::ui
