// Opening through the window as a user does: the HDU chooser on a multi-extension FITS, the plane
// chooser on a 4D cube (io's astropy fixtures and their expected values) and drag-and-drop of
// files (good, bad, not local) and of an http link to an OME-Zarr image; a stale open stops
// waiting on a stalled server.
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QMimeData>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QSurfaceFormat>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "io/stack.h"
#include "tests/render/gl_qtest_main.h"
#include "ui/frame/main_window.h"
#include "ui/frame/tools_bar.h"
#include "ui/stack/stack_opener.h"

using namespace stacklens;
using ui::MainWindow;

namespace {

const QString kFixtures = STACKLENS_IO_FIXTURES;

// Expected float32 values written by tests/io/data/make_fixtures.py (z, y, x order).
std::vector<float> expected(const QString& name, int hdu, int plane) {
  QFile f(kFixtures + QString("/%1.h%2.p%3.f32").arg(name).arg(hdu).arg(plane));
  if (!f.open(QIODevice::ReadOnly)) return {};
  const QByteArray bytes = f.readAll();
  std::vector<float> values(static_cast<size_t>(bytes.size()) / sizeof(float));
  std::memcpy(values.data(), bytes.constData(), values.size() * sizeof(float));
  return values;
}

// The slice the window shows equals slice z of the expected values.
bool showsSlice(const MainWindow& w, const std::vector<float>& want) {
  const auto& info = w.info();
  const size_t plane = static_cast<size_t>(info.x * info.y);
  if (!w.slicePath()->currentSlice() || want.size() != plane * static_cast<size_t>(info.z))
    return false;
  const auto& got = *w.slicePath()->currentSlice();
  for (size_t i = 0; i < plane; ++i)
    if (got[i] != want[static_cast<size_t>(w.slicePath()->currentZ()) * plane + i]) return false;
  return true;
}

// A drop of urls on the window, as the platform delivers it.
bool dropOn(MainWindow& w, const QList<QUrl>& urls) {
  QMimeData mime;
  mime.setUrls(urls);
  const QPointF at(w.width() / 2.0, w.height() / 2.0);
  QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&w, &enter);
  if (!enter.isAccepted()) return false;
  QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&w, &drop);
  return drop.isAccepted();
}

// Starts zarr_http_server.py serving folder; its port, or 0.
int startZarrServer(QProcess& server, const QString& folder) {
  server.start("/usr/bin/python3", {kFixtures + "/../../zarr_http_server.py", folder});
  if (!server.waitForStarted(10000) || !server.waitForReadyRead(10000)) return 0;
  return server.readLine().trimmed().toInt();
}

// Shows w, drops url on it and waits until it has opened: "" or what went wrong.
QString dropAndWaitForOpen(MainWindow& w, const QString& url) {
  w.setQuiet(true);
  w.show();
  if (!QTest::qWaitForWindowExposed(&w)) return "the window was not shown";
  QSignalSpy opened(&w, &MainWindow::stackOpened);
  if (!dropOn(w, {QUrl(url)})) return "the drop was refused";
  if (!opened.wait(30000)) return url + " did not open";
  const QString got = opened.at(0).at(0).toString();
  return got == url ? QString() : "opened " + got + " instead of " + url;
}

}  // namespace

class OpenFileTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("StackLensTest");
    QCoreApplication::setApplicationName("StackLensOpenTest");
    QSettings().clear();
    QVERIFY2(QFileInfo::exists(kFixtures + "/multi_ext.fits"), qPrintable(kFixtures));
  }

  // multi_ext.fits: empty primary, a table, SCI (7 × 5 float32) and ERR (7 × 5 × 3 int32).
  void hduChooserListsTheImagesAndSwitches() {
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &MainWindow::stackOpened);
    w.openFile(kFixtures + "/multi_ext.fits");
    QVERIFY(opened.wait(30000));
    QCOMPARE(w.info().hdu, 2);  // the first HDU with an image
    QCOMPARE(w.info().z, int64_t(1));
    QVERIFY(showsSlice(w, expected("multi_ext.fits", 2, 0)));
    QComboBox* box = w.toolsBar()->hduBox();
    QVERIFY(box->isEnabled());
    QCOMPARE(box->count(), 2);  // neither the empty primary nor the table
    QCOMPARE(box->itemData(0).toInt(), 2);
    QCOMPARE(box->itemData(1).toInt(), 3);
    QVERIFY2(box->itemText(0).contains("SCI") && box->itemText(1).contains("ERR"),
             qPrintable(box->itemText(0) + " | " + box->itemText(1)));
    QCOMPARE(box->currentIndex(), 0);
    // Choose ERR as the combo box does when the user picks it.
    box->setCurrentIndex(1);
    emit box->activated(1);
    QVERIFY(opened.wait(30000));
    QCOMPARE(w.info().hdu, 3);
    QCOMPARE(w.info().z, int64_t(3));
    QCOMPARE(w.navigation()->slider()->maximum(), 2);
    QCOMPARE(box->currentIndex(), 1);
    const auto err = expected("multi_ext.fits", 3, 0);
    QVERIFY(showsSlice(w, err));
    w.navigation()->slider()->setValue(0);
    QSignalSpy shown(w.slicePath(), &ui::SlicePath::sliceShown);
    QVERIFY(w.slicePath()->currentZ() == 0 || shown.wait(30000));
    QVERIFY(showsSlice(w, err));
    // The command line's --hdu goes through the same options.
    io::OpenOptions sci;
    sci.hdu = 2;
    w.openFile(kFixtures + "/multi_ext.fits", sci);
    QVERIFY(opened.wait(30000));
    QCOMPARE(w.info().hdu, 2);
    QCOMPARE(box->currentIndex(), 0);
  }

  // planes_4d.fits: 7 × 5 × 3 × 2 float32; the plane spin box picks the 4th-axis index.
  void planeChooserSwitchesThe4thAxis() {
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &MainWindow::stackOpened);
    w.openFile(kFixtures + "/planes_4d.fits");
    QVERIFY(opened.wait(30000));
    QCOMPARE(w.info().planes, int64_t(2));
    QCOMPARE(w.info().plane, int64_t(0));
    QVERIFY(w.toolsBar()->planeBox()->isVisibleTo(&w));
    QCOMPARE(w.toolsBar()->planeBox()->maximum(), 1);
    const auto plane0 = expected("planes_4d.fits", 0, 0), plane1 = expected("planes_4d.fits", 0, 1);
    QVERIFY(!plane0.empty() && plane0 != plane1);
    QVERIFY(showsSlice(w, plane0));
    w.toolsBar()->planeBox()->setValue(1);
    QVERIFY(opened.wait(30000));
    QCOMPARE(w.info().plane, int64_t(1));
    QCOMPARE(w.toolsBar()->planeBox()->value(), 1);
    QVERIFY(showsSlice(w, plane1));
    // A 3D file hides the plane chooser again.
    w.openFile(kFixtures + "/bitpix_float32.fits");
    QVERIFY(opened.wait(30000));
    QVERIFY(!w.toolsBar()->planeBox()->isVisibleTo(&w));
    QVERIFY(!w.toolsBar()->hduBox()->isEnabled());
  }

  void droppedFilesOpenAndBadOnesReportAnError() {
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy opened(&w, &MainWindow::stackOpened), failed(&w, &MainWindow::openFailed);
    const QString good = kFixtures + "/bitpix_float32.fits";
    QVERIFY(dropOn(w, {QUrl::fromLocalFile(good)}));
    QVERIFY(opened.wait(30000));
    QCOMPARE(opened.at(0).at(0).toString(), good);
    QVERIFY(showsSlice(w, expected("bitpix_float32.fits", 0, 0)));
    // A damaged file: the error path, and the stack shown stays.
    QTemporaryDir dir;
    QFile bad(dir.filePath("truncated.fits"));
    QFile source(good);
    QVERIFY(source.open(QIODevice::ReadOnly) && bad.open(QIODevice::WriteOnly));
    bad.write(source.read(2880 + 100));  // the header and a little of the data
    bad.close();
    QSignalSpy errors(&w, &MainWindow::errorReported);
    QVERIFY(dropOn(w, {QUrl::fromLocalFile(bad.fileName())}));
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.at(0).at(0).toString().contains("truncated.fits"),
             qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(errors.count(), 1);
    QVERIFY(w.stack() != nullptr);
    QCOMPARE(QString::fromStdString(w.info().path), good);
    for (QWidget* top : QApplication::topLevelWidgets())
      QVERIFY(!top->inherits("QMessageBox") || !top->isVisible());
    // Neither a local file nor http(s): the drag is refused and nothing is opened.
    QVERIFY(!dropOn(w, {QUrl("ftp://example.org/cube.fits")}));
    QTest::qWait(100);
    QCOMPARE(opened.count(), 1);
    QCOMPARE(failed.count(), 1);
  }

  // A link to an OME-Zarr image on a (loopback) web server opens in the background and shows what
  // the same folder shows locally.
  void droppedHttpLinkOpensOmeZarr() {
    const QString v3 = kFixtures + "/../zarr/v3";
    QProcess server;
    const int port = startZarrServer(server, v3);
    QVERIFY(port > 0);
    const QString url = QString("http://127.0.0.1:%1/ok/ome05.zarr").arg(port);
    MainWindow w;
    const QString error = dropAndWaitForOpen(w, url);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(QString::fromStdString(w.info().format), QString("zarr"));
    const auto local = io::openStack((v3 + "/ome05.zarr").toStdString());
    std::vector<float> want(size_t(local->info().z * local->info().y * local->info().x));
    for (int64_t z = 0; z < local->info().z; ++z)
      local->readSlice(z, want.data() + z * local->info().y * local->info().x);
    QVERIFY(showsSlice(w, want));
    server.closeWriteChannel();  // the server exits when its input closes
    QVERIFY(server.waitForFinished(10000));
  }

  // Chunks answered 403 (how S3 and GCS hide absent keys) read as the fill value; the window
  // still opens the image and says on its status bar that they did, so that a reader whose
  // credentials are wrong is not left looking at an empty image without a word.
  void chunksAnswered403AreSaidOnTheStatusBar() {
    QProcess server;
    const int port = startZarrServer(server, kFixtures + "/../zarr/v3");
    QVERIFY(port > 0);
    const QString url = QString("http://127.0.0.1:%1/forbidden-chunks/ome05.zarr").arg(port);
    MainWindow w;
    const QString error = dropAndWaitForOpen(w, url);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().contains("answered 403 Forbidden"),
                             15000);
    QVERIFY2(w.statusBar()->currentMessage().contains("ome05.zarr"),
             qPrintable(w.statusBar()->currentMessage()));
    server.closeWriteChannel();
    QVERIFY(server.waitForFinished(10000));
  }

  // An open that waits on a stalled server gives its thread up as soon as a newer open makes it
  // stale: with one reading thread, the newer open would otherwise wait for the stall timeout.
  void aStaleOpenStopsWaitingOnItsServer() {
    QProcess server;
    const int port = startZarrServer(server, kFixtures + "/../zarr/v3");
    QVERIFY(port > 0);
    qputenv("STACKLENS_HTTP_TIMEOUT_MS", "60000");
    QThreadPool pool;
    pool.setMaxThreadCount(1);
    ui::StackOpener opener(&pool);
    QSignalSpy opened(&opener, &ui::StackOpener::opened);
    QElapsedTimer clock;
    clock.start();
    opener.open(QString("http://127.0.0.1:%1/stall-chunks/zstd_f4.zarr").arg(port), {});
    QTest::qWait(300);  // into the wait for the middle slice's chunks
    const QString good = kFixtures + "/bitpix_float32.fits";
    opener.open(good, {});
    QVERIFY(opened.wait(30000));
    QCOMPARE(opened.at(0).at(0).toString(), good);
    QVERIFY2(clock.elapsed() < 15000, qPrintable(QString::number(clock.elapsed())));
    qunsetenv("STACKLENS_HTTP_TIMEOUT_MS");
    server.closeWriteChannel();
    QVERIFY(server.waitForFinished(10000));
  }
};

STACKLENS_GL_QTEST_MAIN(OpenFileTest)

#include "open_file_qtest.moc"
