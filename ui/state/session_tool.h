// File ▸ Save session… / Open session…: the window's state captured into a Session
// (ui/state/session.h) and put back — the file opened first when it is another one, the rest once
// it has opened.
#pragma once

#include <QObject>
#include <QString>
#include <functional>

#include "ui/state/session.h"

namespace stacklens::ui {

class MainWindow;

class SessionTool : public QObject {
  Q_OBJECT
 public:
  // Made once per window (later calls return it) with its two File-menu actions; the regions
  // tool, when installed before, takes part.
  static SessionTool* install(MainWindow* window);

  Session capture() const;
  // Puts the session back; emits restored() when all of it is in place, or failed().
  void restore(const Session& session);
  // Writes the window's session to path (""), or returns the error; warnings say what was left out.
  QString save(const QString& path, QStringList* warnings = nullptr) const;
  // Reads and restores; false (and failed()) when the file cannot be read.
  bool open(const QString& path);

  // Tools with state of their own (regions) take part through these two functions.
  void setRegionsAccess(std::function<QString()> capture,
                        std::function<void(const QString&)> restore);

 signals:
  void restored();
  void failed(const QString& message);

 private:
  explicit SessionTool(MainWindow* window);
  void applyAfterOpen(const Session& session);
  void chooseAndSave();
  void chooseAndOpen();

  MainWindow* window_;
  std::function<QString()> captureRegions_;
  std::function<void(const QString&)> restoreRegions_;
};

}  // namespace stacklens::ui
