// Test helper: a quiet viewer window shown (at size, when given) with path opened in it.
#pragma once

#include <QSignalSpy>
#include <QSize>
#include <QString>

#include "ui/frame/main_window.h"

namespace stacklens::testing {

// True once the window says the stack opened (within 10 s).
inline bool openInWindow(ui::MainWindow& w, const QString& path, QSize size = {}) {
  w.setQuiet(true);
  if (size.isValid()) w.resize(size);
  w.show();
  QSignalSpy opened(&w, &ui::MainWindow::stackOpened);
  w.openFile(path);
  return opened.count() > 0 || opened.wait(10000);
}

}  // namespace stacklens::testing
