// The main window reports a bad file instead of crashing, and shows slices of a good one.
#include <QApplication>
#include <QSignalSpy>
#include <QSurfaceFormat>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/main_window.h"

class MainWindowTest : public QObject {
  Q_OBJECT
 private slots:
  void badFileIsRefusedWithoutACrash() {
    stacklens::ui::MainWindow window;
    QTemporaryDir dir;
    QFile garbage(dir.filePath("garbage.fits"));
    QVERIFY(garbage.open(QIODevice::WriteOnly));
    garbage.write("this is not a FITS file at all");
    garbage.close();
    QVERIFY(!window.openFile(garbage.fileName(), /*quiet=*/true));
    QVERIFY(!window.openFile(dir.filePath("missing.tif"), /*quiet=*/true));
  }
};

int main(int argc, char** argv) {
  QSurfaceFormat format;
  format.setVersion(3, 3);
  format.setProfile(QSurfaceFormat::CoreProfile);
  QSurfaceFormat::setDefaultFormat(format);
  QApplication app(argc, argv);
  MainWindowTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "main_window_test.moc"
