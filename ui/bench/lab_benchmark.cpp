// runLabBenchmark: the lab window's own run, measured from the Run button to the last point.
#include "ui/bench/lab_benchmark.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QTimer>
#include <cstdio>

#include "ui/lab/speedup_lab_window.h"

namespace stacklens::ui {

int runLabBenchmark(QApplication& app) {
  SpeedupLabWindow window;
  window.show();
  QElapsedTimer clock;
  int code = 0;
  QObject::connect(&window, &SpeedupLabWindow::runFinished, &app, [&] {
    const QLabel* status = window.findChild<QLabel*>(QStringLiteral("labStatus"));
    QJsonObject o;
    o["points"] = qint64(window.sweep().points.size());
    o["seconds"] = clock.elapsed() / 1000.0;
    o["longest_gui_pause_ms"] = window.longestPauseMs();
    o["status"] = status ? status->text() : QString();
    std::printf("%s\n", QJsonDocument(o).toJson(QJsonDocument::Compact).constData());
    std::fflush(stdout);
    code = window.sweep().points.empty() ? 1 : 0;
    app.quit();
  });
  // Started as a person would press Run: once the window is up and drawn (its first paint is
  // not the sweep's to answer for).
  QTimer::singleShot(500, &window, [&] {
    clock.start();
    if (!window.startRun()) {
      code = 1;
      app.quit();
    }
  });
  app.exec();
  return code;
}

}  // namespace stacklens::ui
