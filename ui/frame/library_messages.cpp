// The sink runs on whichever thread logs, so it only queues the message to the GUI thread.
#include "ui/frame/library_messages.h"

#include <QCoreApplication>
#include <QPointer>
#include <QStatusBar>
#include <cstdio>

#include "compute/log.h"

namespace stacklens::ui {

void showLibraryMessages(QStatusBar* bar) {
  QPointer<QStatusBar> target(bar);
  compute::setLogSink([target](compute::LogLevel, const std::string& text) {
    std::fprintf(stderr, "stacklens: %s\n", text.c_str());
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [target, message = QString::fromStdString(text)] {
          if (target) target->showMessage(message, 15000);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace stacklens::ui
