// File ▸ Save slice / Save stack in the window: one save at a time on a worker
// (ui/stack/stack_save.h), with a progress bar and a Cancel button in the status bar.
#pragma once

#include <QObject>
#include <QProgressBar>
#include <QStatusBar>
#include <QThreadPool>
#include <QToolButton>
#include <atomic>
#include <memory>

#include "ui/stack/stack_save.h"

namespace stacklens::ui {

class SaveTool : public QObject {
  Q_OBJECT
 public:
  // The progress bar and Cancel go into bar (hidden while no save runs); saves run on pool.
  SaveTool(QStatusBar* bar, QThreadPool* pool, QObject* parent = nullptr);

  bool running() const { return bool(cancel_); }
  // Starts the save; false (nothing started) while another one runs.
  bool save(const SaveRequest& request, const QString& path);
  void cancel();  // the running save stops at its next slice and writes nothing

 signals:
  void saved(const QString& path);
  void cancelled(const QString& path);
  void failed(const QString& path, const QString& message);

 private:
  QStatusBar* bar_;
  QThreadPool* pool_;
  QProgressBar* progress_;
  QToolButton* cancelButton_;
  std::shared_ptr<std::atomic<bool>> cancel_;  // the running save's, null when none runs
};

}  // namespace stacklens::ui
