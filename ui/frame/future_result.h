// Hands a worker's result (or its exception) to the GUI thread through the event loop, even when
// the worker is done before this is called, so that a panel's signals never fire inside the call
// that started the work (the regions and catalog panels' imports and matches).
#pragma once

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <exception>
#include <optional>

namespace stacklens::ui {

template <typename T, typename Done, typename Failed>
void whenDone(QObject* context, QFuture<T> future, Done done, Failed failed) {
  auto* watcher = new QFutureWatcher<T>(context);
  QObject::connect(watcher, &QFutureWatcherBase::finished, context, [watcher, done, failed] {
    watcher->deleteLater();
    std::optional<T> result;
    try {
      result = watcher->result();
    } catch (const std::exception& e) {
      failed(e);
      return;
    }
    done(std::move(*result));
  });
  watcher->setFuture(std::move(future));
}

}  // namespace stacklens::ui
