// File ▸ Save slice / Save stack in the window: one save at a time on a worker of its own
// (ui/stack/stack_save.h), with a progress bar and a Cancel button in the status bar. A tool:
// it follows the open stack and the slice shown, which "Save slice" saves.
#pragma once

#include <QObject>
#include <QProgressBar>
#include <QStatusBar>
#include <QThreadPool>
#include <QToolButton>
#include <atomic>
#include <memory>

#include "ui/frame/viewer_tool.h"
#include "ui/stack/stack_save.h"

namespace stacklens::ui {

class SaveTool : public QObject, public ViewerTool {
  Q_OBJECT
 public:
  // The progress bar and Cancel go into bar (hidden while no save runs).
  explicit SaveTool(QStatusBar* bar, QObject* parent = nullptr);
  // Waits for a running save, which stop() or cancel() make end at its next slice.
  ~SaveTool() override;

  bool running() const { return bool(cancel_); }
  // Saves the open stack whole, or the slice shown, to path (FITS or TIFF by its extension);
  // failed() says why when there is no stack or another save still runs.
  void saveData(const QString& path, bool wholeStack);
  // Starts the save; false (nothing started) while another one runs.
  bool save(const SaveRequest& request, const QString& path);
  void cancel();  // the running save stops at its next slice and writes nothing

  void stackOpened(const OpenedStackView& stack) override;
  void sliceShown(const ShownSlice& slice) override { z_ = slice.z; }
  void stop() override { cancel(); }

 signals:
  void saved(const QString& path);
  void cancelled(const QString& path);
  void failed(const QString& path, const QString& message);

 private:
  QStatusBar* bar_;
  QThreadPool pool_;
  std::shared_ptr<io::StackReader> reader_;
  std::shared_ptr<compute::SliceStore> slices_;
  int z_ = 0;
  QProgressBar* progress_;
  QToolButton* cancelButton_;
  std::shared_ptr<std::atomic<bool>> cancel_;  // the running save's, null when none runs
};

}  // namespace stacklens::ui
