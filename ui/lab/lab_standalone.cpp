// runLabWindow: the speedup lab on its own (see lab_standalone.h).
#include "ui/lab/lab_standalone.h"

#include <QApplication>
#include <QEventLoop>
#include <QPixmap>
#include <QTimer>
#include <cstdio>

#include "compute/lab/sweep_csv.h"
#include "ui/display/view_export.h"
#include "ui/lab/speedup_lab_window.h"

namespace stacklens::ui {

int runLabWindow(QApplication& app, const QString& sweepPath, const QString& grabPath) {
  // A sweep that cannot be read ends here with the reason, not in a dialog nobody may see.
  compute::lab::Sweep sweep;
  if (!sweepPath.isEmpty()) try {
      sweep = compute::lab::readCsvFile(sweepPath.toStdString());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "stacklens: error: %s\n", e.what());
      return 3;
    }
  SpeedupLabWindow window;
  window.show();
  if (!sweepPath.isEmpty()) window.showSweep(std::move(sweep), sweepPath);
  if (grabPath.isEmpty()) return app.exec();
  int code = 0;
  // Once the window is up and its charts laid out: the first paints come from the event loop.
  // A loop of its own, so that ending it does not end the application's.
  QEventLoop drawn;
  QTimer::singleShot(500, &window, [&] {
    const QString error = savePngAtomically(window.grab().toImage(), grabPath, sweepPath);
    if (!error.isEmpty()) std::fprintf(stderr, "stacklens: error: %s\n", qPrintable(error));
    code = error.isEmpty() ? 0 : 3;
    drawn.quit();
  });
  drawn.exec();
  return code;
}

}  // namespace stacklens::ui
