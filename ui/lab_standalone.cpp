// runLabWindow: the speedup lab on its own (see lab_standalone.h).
#include "ui/lab_standalone.h"

#include <QApplication>
#include <QBuffer>
#include <QEventLoop>
#include <QPixmap>
#include <QTimer>
#include <cstdio>

#include "compute/lab/sweep_csv.h"
#include "io/whole_file.h"
#include "ui/speedup_lab_window.h"

namespace stacklens::ui {
namespace {

// The window as PNG at path, written whole under a temporary name (io::writeWholeFile).
bool saveWindow(QWidget& window, const QString& path) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!window.grab().save(&buffer, "PNG")) {
    std::fprintf(stderr, "stacklens: error: cannot encode the window as PNG\n");
    return false;
  }
  try {
    io::writeWholeFile(path.toStdString(), bytes.toStdString());
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stacklens: error: %s\n", e.what());
    return false;
  }
}

}  // namespace

int runLabWindow(QApplication& app, const QString& sweepPath, const QString& grabPath) {
  // A sweep that cannot be read ends here with the reason, not in a dialog nobody may see.
  if (!sweepPath.isEmpty()) try {
      (void)compute::lab::readCsvFile(sweepPath.toStdString());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "stacklens: error: %s\n", e.what());
      return 3;
    }
  SpeedupLabWindow window;
  window.show();
  if (!sweepPath.isEmpty()) window.openSweep(sweepPath);
  if (grabPath.isEmpty()) return app.exec();
  int code = 0;
  // Once the window is up and its charts laid out: the first paints come from the event loop.
  // A loop of its own, so that ending it does not end the application's.
  QEventLoop drawn;
  QTimer::singleShot(500, &window, [&] {
    code = saveWindow(window, grabPath) ? 0 : 3;
    drawn.quit();
  });
  drawn.exec();
  return code;
}

}  // namespace stacklens::ui
