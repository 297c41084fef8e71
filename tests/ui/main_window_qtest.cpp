// The main window end to end: opening (in-memory, written with io::writeStack, the shared FITS
// sample, bad files), slider and keys, readout and WCS, display changes drawn in the framebuffer,
// limits, histogram dragging, region/line/z profiles, ortho views, export, save and settings.
#include <QApplication>
#include <QMenuBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSurfaceFormat>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <cmath>

#include "io/stack_writer.h"
#include "io/wcs.h"
#include "render/colormap.h"
#include "tests/render/gl_qtest_main.h"
#include "ui/analysis/line_profile_tool.h"
#include "ui/analysis/ortho_views.h"
#include "ui/analysis/region_stats_tool.h"
#include "ui/display/histogram_tool.h"
#include "ui/frame/main_window.h"
#include "ui/frame/pixel_readout.h"
#include "ui/jobs/whole_stack_dialog.h"
#include "ui/stack/header_dialog.h"
#include "ui/stack/save_tool.h"

using namespace stacklens;
using ui::MainWindow;

namespace {

constexpr int64_t kX = 16, kY = 12, kZ = 5;

float voxel(int64_t z, int64_t y, int64_t x) {
  if (z == 2 && y == 3 && x == 4) return NAN;
  return float(1000 * z + 10 * y + x);
}

// An in-memory stack with known voxels: 1000 z + 10 y + x.
class FakeReader : public io::StackReader {
 public:
  FakeReader() {
    info_.path = "/fake/stack.tif";
    info_.format = "tiff";
    info_.z = kZ;
    info_.y = kY;
    info_.x = kX;
    info_.spacing = {2.0, 0.5, 0.5};
    info_.units = {"µm", "µm", "µm"};
    info_.spacingKnown = true;
    info_.hdus = {{0, "", "image", {kX, kY, kZ}}};
    info_.header = {{"ImageJ", "1.54f", ""}, {"spacing", "2.0", "z step"}};
  }
  const io::StackInfo& info() const override { return info_; }
  void readSlice(int64_t z, float* out) const override {
    if (z < 0 || z >= kZ) throw io::IoError(info_.path, "slice out of range");
    for (int64_t y = 0; y < kY; ++y)
      for (int64_t x = 0; x < kX; ++x) out[y * kX + x] = voxel(z, y, x);
  }
  const io::Wcs* wcs() const override { return nullptr; }

 private:
  io::StackInfo info_;
};

// A stack whose slices are slow to read (a slow disk or network share).
// 100 slices of 100 ms: a save takes 10 s, so that waiting for it and not waiting differ by far
// more than a loaded machine's delays.
class SlowReader : public FakeReader {
 public:
  void readSlice(int64_t z, float* out) const override {
    QThread::msleep(100);
    FakeReader::readSlice(z % kZ, out);
  }
  const io::StackInfo& info() const override { return slowInfo_; }
  SlowReader() : slowInfo_(FakeReader::info()) { slowInfo_.z = 100; }

 private:
  io::StackInfo slowInfo_;
};

// A stack deeper than the viewer's int slider can count.
class TooDeepReader : public FakeReader {
 public:
  TooDeepReader() : deepInfo_(FakeReader::info()) { deepInfo_.z = 3000000000LL; }
  const io::StackInfo& info() const override { return deepInfo_; }

 private:
  io::StackInfo deepInfo_;
};

bool waitShown(MainWindow& w, int z) {
  if (w.slicePath()->currentZ() == z && w.slicePath()->currentSlice()) return true;
  QSignalSpy spy(w.slicePath(), &ui::SlicePath::sliceShown);
  return spy.wait(30000) && w.slicePath()->currentZ() == z;
}

std::string readFile(const std::string& path) {
  QFile f(QString::fromStdString(path));
  return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string();
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("StackLensTest");
    QCoreApplication::setApplicationName("StackLensTest");
    QSettings().clear();
  }

  void opensAndMovesThroughSlices() {
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.openReader(std::make_shared<FakeReader>());
    QCOMPARE(w.slicePath()->currentZ(), 2);
    QCOMPARE(w.navigation()->slider()->maximum(), int(kZ - 1));
    QCOMPARE(w.sliceView()->sliceWidth(), int(kX));
    w.navigation()->slider()->setValue(4);
    QVERIFY(waitShown(w, 4));
    QCOMPARE((*w.slicePath()->currentSlice())[7 * kX + 5], voxel(4, 7, 5));
    QCOMPARE(w.navigation()->worldText(), QString("z = 8 µm"));
    // Keys: ←, Home, End, PgUp.
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QTest::keyClick(&w, Qt::Key_Left);
    QVERIFY(waitShown(w, 3));
    QTest::keyClick(&w, Qt::Key_Home);
    QVERIFY(waitShown(w, 0));
    QTest::keyClick(&w, Qt::Key_End);
    QVERIFY(waitShown(w, 4));
    QTest::keyClick(&w, Qt::Key_PageUp);
    QVERIFY(waitShown(w, 0));
  }

  // The tools put their actions at their places between the frame's own
  // (ui/frame/viewer_tools.cpp): the menus read as they did when the window built them all itself.
  void menusListEachToolsActionsInItsPlace() {
    MainWindow w;
    auto texts = [](const QMenu* menu) {
      QStringList list;
      for (const QAction* a : menu->actions())
        if (a->isVisible()) list << (a->isSeparator() ? QString("|") : a->text());
      return list;
    };
    QCOMPARE(texts(w.fileMenu()),
             QStringList({"&Open…", "Open &folder (Zarr)…", "Open &URL…", "Open &Recent",
                          "&Header…", "|", "&Export view as PNG…", "Export view with &colorbar…",
                          "Export &movie…", "Save &slice as…", "Save s&tack as…", "|",
                          "&Process whole stack…", "Z projection / &moment map…", "|",
                          "Open sess&ion…", "Save sessio&n…", "|", "&Quit"}));
    const QMenu* view = nullptr;
    for (const QAction* a : w.menuBar()->actions())
      if (a->text() == "&View") view = a->menu();
    QVERIFY(view);
    const QStringList viewTexts = texts(view);
    const QStringList expected{"&Fit to window",
                               "&1:1",
                               "Zoom &in",
                               "Zoom &out",
                               "|",
                               "&Colorbar",
                               "Co&mpass (north and east)",
                               "&Scale bar",
                               "Coordinate &grid",
                               "&3D view",
                               "C&hannels (composite)",
                               "Con&tours",
                               "|"};
    QCOMPARE(viewTexts.mid(0, expected.size()), expected);  // then the docks' toggles
    // Each tool's shortcut reaches it: Ctrl+Shift+P is File ▸ Process whole stack….
    for (const QAction* a : w.fileMenu()->actions())
      if (a->text() == "&Process whole stack…")
        QCOMPARE(a->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
  }

  void readoutShowsTheValueUnderTheCursor() {
    MainWindow w;
    auto* readout = w.tool<ui::PixelReadout>();
    w.setQuiet(true);
    w.show();
    w.openReader(std::make_shared<FakeReader>());
    w.hoverAt(QPointF(5.2, 6.8));  // nearest pixel (5, 7)
    QVERIFY2(readout->text().contains("x 5  y 7  z 2") && readout->text().contains("value 2075"),
             qPrintable(readout->text()));
    w.hoverAt(QPointF(4, 3));
    QVERIFY2(readout->text().contains("value NaN"), qPrintable(readout->text()));
    auto processed = std::make_shared<std::vector<float>>(kX * kY, 0.5f);
    readout->setProcessed(2, processed);
    QVERIFY2(readout->text().contains("processed 0.5"), qPrintable(readout->text()));
    w.hoverAt(QPointF(-3, 2));
    QVERIFY(readout->text().isEmpty());
  }

  void colormapAndScaleChangesReachTheFramebuffer() {
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.openReader(std::make_shared<FakeReader>());
    auto* panel = w.displayPanel();
    panel->setManualLimits({2000.f, 2200.f});
    panel->setColormap("viridis");
    panel->setScale(render::Scale::Sqrt);
    const auto& d = w.sliceView()->display();
    QCOMPARE(d.colormap, QString("viridis"));
    QCOMPARE(d.scale, render::Scale::Sqrt);
    QCOMPARE(d.limits.low, 2000.f);
    // The pixel drawn at image (11, 4) (off the crosshair) has the colour the CPU twin predicts.
    const QImage frame = w.sliceView()->grabFramebuffer();
    const QPoint at = w.sliceView()->imageToWidget(QPointF(11, 4)).toPoint();
    const int index = render::colourIndex(d, voxel(2, 4, 11));
    const QColor want = render::loadColormap("viridis").at(index), got = frame.pixelColor(at);
    QVERIFY2(std::abs(got.red() - want.red()) <= 3 && std::abs(got.green() - want.green()) <= 3 &&
                 std::abs(got.blue() - want.blue()) <= 3,
             qPrintable(got.name() + " vs " + want.name()));
    panel->setLimitsMode(render::LimitsMode::MinMax);
    QCOMPARE(w.sliceView()->display().limits.low, voxel(2, 0, 0));
    QCOMPARE(w.sliceView()->display().limits.high, voxel(2, kY - 1, kX - 1));
  }

  void draggingAHistogramMarkerSetsManualLimits() {
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy histogramSpy(w.tool<ui::HistogramTool>(), &ui::HistogramTool::updated);
    w.openReader(std::make_shared<FakeReader>());
    QVERIFY(histogramSpy.count() > 0 || histogramSpy.wait(30000));
    auto* h = w.tool<ui::HistogramTool>()->histogram();
    const double oldHigh = w.sliceView()->display().limits.high;
    const int from = int(h->xOf(oldHigh)), to = from - 40;
    QTest::mousePress(h, Qt::LeftButton, {}, QPoint(from, h->height() / 2));
    QTest::mouseMove(h, QPoint(to, h->height() / 2));
    QTest::mouseRelease(h, Qt::LeftButton, {}, QPoint(to, h->height() / 2));
    QCOMPARE(w.displayPanel()->limitsMode(), render::LimitsMode::Manual);
    const double newHigh = w.sliceView()->display().limits.high;
    QVERIFY(newHigh < oldHigh);
    QVERIFY(std::abs(newHigh - h->valueAt(to)) < 1e-3 * std::abs(oldHigh));
  }

  void regionLineAndOrthoViewsMatchTheVoxels() {
    MainWindow w;
    auto* region = w.tool<ui::RegionStatsTool>();
    auto* line = w.tool<ui::LineProfileTool>();
    auto* ortho = w.tool<ui::OrthoViews>();
    w.setQuiet(true);
    w.show();
    QSignalSpy orthoSpy(ortho, &ui::OrthoViews::updated);
    w.openReader(std::make_shared<FakeReader>());
    // Rectangle x 1…3, y 2…3 on slice 2: mean of 1000·2 + 10y + x.
    w.setRegion(QRectF(QPointF(1, 2), QPointF(3, 3)), false);
    QCOMPARE(region->stats().npix, int64_t(6));
    QCOMPARE(region->stats().mean, 2000.0 + 25.0 + 2.0);
    QCOMPARE(region->stats().min, 2021.0);
    QCOMPARE(region->stats().max, 2033.0);
    w.setLine(QPointF(0, 1), QPointF(10, 1));
    const auto& ys = line->plot()->ys();
    QCOMPARE(ys.size(), size_t(11));
    for (int x = 0; x <= 10; ++x) QCOMPARE(ys[size_t(x)], double(voxel(2, 1, x)));
    // Both follow the slice once the slider rests.
    w.navigation()->slider()->setValue(3);
    QVERIFY(waitShown(w, 3));
    QTRY_COMPARE(region->stats().mean, 3000.0 + 25.0 + 2.0);
    QTRY_COMPARE(line->plot()->ys()[4], double(voxel(3, 1, 4)));
    w.navigation()->slider()->setValue(2);
    QVERIFY(waitShown(w, 2));
    QTRY_COMPARE(region->stats().mean, 2000.0 + 25.0 + 2.0);
    // Ortho views at the crosshair (x 3, y 6).
    orthoSpy.clear();
    w.setCrosshair(QPoint(3, 6));
    QVERIFY(orthoSpy.wait(30000));
    const auto xz = ortho->xzView()->slice(), yz = ortho->yzView()->slice();
    QCOMPARE(ortho->xzView()->sliceWidth(), int(kX));
    QCOMPARE(ortho->xzView()->sliceHeight(), int(kZ));
    QCOMPARE(ortho->yzView()->sliceWidth(), int(kZ));
    QCOMPARE(ortho->yzView()->sliceHeight(), int(kY));
    for (int z = 0; z < kZ; ++z) {
      for (int x = 0; x < kX; ++x) QCOMPARE((*xz)[z * kX + x], voxel(z, 6, x));
      for (int y = 0; y < kY; ++y) {
        const float want = voxel(z, y, 3);
        QVERIFY(std::isnan(want) ? std::isnan((*yz)[y * kZ + z]) : (*yz)[y * kZ + z] == want);
      }
      QCOMPARE(ortho->zProfile()->ys()[size_t(z)], double(voxel(z, 6, 3)));
    }
    // While the slider moves, the ortho crosshairs follow at once (at most every 40 ms) and the
    // z-profile marker when it rests.
    QTest::qWait(60);
    w.navigation()->slider()->setValue(1);
    if (w.slicePath()->currentZ() == 1) {  // a cached slice is shown at once
      QCOMPARE(ortho->xzView()->crosshair()->y(), 1.0);
      QCOMPARE(ortho->yzView()->crosshair()->x(), 1.0);
      QVERIFY(ortho->zProfile()->marker() != 1.0);
    }
    w.navigation()->slider()->setValue(0);
    QTRY_COMPARE(ortho->zProfile()->marker(), 0.0);
    QCOMPARE(ortho->xzView()->crosshair()->y(), 0.0);
    QCOMPARE(ortho->yzView()->crosshair()->x(), 0.0);
    // The XZ view's pixels are 4× as tall as wide (z spacing 2 µm, x spacing 0.5 µm).
    const double rowHeight =
        ortho->xzView()->imageToWidget({0, 1}).y() - ortho->xzView()->imageToWidget({0, 0}).y();
    QVERIFY(std::abs(rowHeight / ortho->xzView()->zoom() - 4.0) < 1e-9);
  }

  void playbackLoopsAndBounces() {
    ui::NavigationBar nav;
    nav.setCount(3);
    QCOMPARE(nav.nextPlayed(2), 0);
    nav.setBounce(true);
    QCOMPARE(nav.nextPlayed(1), 2);
    QCOMPARE(nav.nextPlayed(2), 1);
    QCOMPARE(nav.nextPlayed(1), 0);
    QCOMPARE(nav.nextPlayed(0), 1);
    nav.setFps(50);
    nav.setPlaying(true);
    QSignalSpy spy(&nav, &ui::NavigationBar::valueChanged);
    QVERIFY(spy.wait(30000));
    nav.setPlaying(false);
    QVERIFY(!nav.playing());
  }

  void badFilesAreReportedWithoutADialog() {
    MainWindow w;
    w.setQuiet(true);
    QTemporaryDir dir;
    QFile garbage(dir.filePath("garbage.fits"));
    QVERIFY(garbage.open(QIODevice::WriteOnly));
    garbage.write("this is not a FITS file at all");
    garbage.close();
    for (const QString& path : {garbage.fileName(), dir.filePath("missing.tif")}) {
      QSignalSpy failed(&w, &MainWindow::openFailed), errors(&w, &MainWindow::errorReported);
      w.openFile(path);
      QVERIFY(failed.wait(30000));
      QVERIFY2(failed.at(0).at(0).toString().contains(QFileInfo(path).fileName()),
               qPrintable(failed.at(0).at(0).toString()));
      QCOMPARE(errors.count(), 1);
      QVERIFY(w.stack() == nullptr);
    }
    for (QWidget* top : QApplication::topLevelWidgets())
      QVERIFY(!top->inherits("QMessageBox") || !top->isVisible());
  }

  void writtenFitsOpensSavesAndReopens() {
    QTemporaryDir dir;
    const std::string in = dir.filePath("cube.fits").toStdString();
    std::vector<float> data(kZ * kY * kX);
    for (int64_t z = 0; z < kZ; ++z)
      for (int64_t y = 0; y < kY; ++y)
        for (int64_t x = 0; x < kX; ++x) data[(z * kY + y) * kX + x] = voxel(z, y, x);
    io::writeStack(in, data.data(), kZ, kY, kX, {});
    MainWindow w;
    auto* readout = w.tool<ui::PixelReadout>();
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &MainWindow::stackOpened);
    w.openFile(QString::fromStdString(in));
    QVERIFY(opened.wait(30000));
    QCOMPARE(w.info().format, std::string("fits"));
    QVERIFY(w.sliceView()->originBottom());
    w.hoverAt(QPointF(7, 9));
    QVERIFY2(readout->text().contains("value 2097"), qPrintable(readout->text()));
    // Save the whole stack as TIFF and the slice as FITS; read them back with io.
    QSignalSpy saved(w.tool<ui::SaveTool>(), &ui::SaveTool::saved);
    const QString stackOut = dir.filePath("copy.tif"), sliceOut = dir.filePath("slice.fits");
    w.tool<ui::SaveTool>()->saveData(stackOut, true);
    QVERIFY(saved.wait(30000));
    w.tool<ui::SaveTool>()->saveData(sliceOut, false);
    QVERIFY(saved.wait(30000));
    auto copy = io::openStack(stackOut.toStdString());
    QCOMPARE(copy->info().z, kZ);
    std::vector<float> slice(kX * kY);
    copy->readSlice(4, slice.data());
    QCOMPARE(slice[5 * kX + 6], voxel(4, 5, 6));
    auto one = io::openStack(sliceOut.toStdString());
    QCOMPARE(one->info().z, int64_t(1));
    one->readSlice(0, slice.data());
    QCOMPARE(slice[1 * kX + 2], voxel(2, 1, 2));
    // Writing over the open file is refused with an error, not a crash.
    QSignalSpy errors(&w, &MainWindow::errorReported);
    w.tool<ui::SaveTool>()->saveData(QString::fromStdString(in), true);
    QVERIFY(errors.wait(30000));
  }

  // A damaged FITS file (a tile-compressed header cfitsio would divide by zero on) is refused
  // with its reason and the stack already open stays.
  void aDamagedFileKeepsThePreviousStack() {
    QTemporaryDir dir;
    QFile source(QStringLiteral(STACKLENS_IO_FIXTURES "/rice.fits.fz"));
    QVERIFY(source.open(QIODevice::ReadOnly));
    QByteArray bytes = source.readAll();
    const int at = bytes.indexOf("ZTILE2  =");
    QVERIFY(at > 0);
    bytes.replace(at, 80, QByteArray("ZTILE2  =                    0").leftJustified(80, ' '));
    const QString bad = dir.filePath("damaged.fits.fz");
    QFile out(bad);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(bytes);
    out.close();
    MainWindow w;
    w.setQuiet(true);
    w.show();
    w.openReader(std::make_shared<FakeReader>());
    QSignalSpy failed(&w, &MainWindow::openFailed);
    w.openFile(bad);
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.first().at(0).toString().contains("ZTILE2"),
             qPrintable(failed.first().at(0).toString()));
    QCOMPARE(w.info().path, std::string("/fake/stack.tif"));
    QVERIFY(w.slicePath()->currentSlice());
  }

  // Dimensions beyond the viewer's are refused at open with a message, never narrowed.
  void aStackTooDeepForTheViewerIsRefused() {
    MainWindow w;
    w.setQuiet(true);
    QSignalSpy failed(&w, &MainWindow::openFailed);
    w.openReader(std::make_shared<TooDeepReader>());
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.first().at(0).toString().contains("3000000000"),
             qPrintable(failed.first().at(0).toString()));
    QVERIFY(!w.slicePath()->currentSlice());
  }

  // The check on the bundled radio cube: slice 10 saved, its RA/Dec at four pixels and
  // its spectral value are the cube's at slice 10 (wcslib, which astropy.wcs wraps).
  void theBundledRadioCubeSavedAtSliceTenKeepsItsCoordinates() {
    const QString cubePath = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube.fits");
    if (!QFileInfo::exists(cubePath)) QSKIP("the bundled samples are not built");
    QTemporaryDir dir;
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &MainWindow::stackOpened);
    w.openFile(cubePath);
    QVERIFY(opened.wait(10000));
    w.navigation()->slider()->setValue(10);
    QTRY_COMPARE(w.slicePath()->currentZ(), 10);
    QSignalSpy saved(w.tool<ui::SaveTool>(), &ui::SaveTool::saved);
    const QString out = dir.filePath("slice10.fits");
    w.tool<ui::SaveTool>()->saveData(out, false);
    QVERIFY(saved.wait(10000));
    auto cube = io::openStack(cubePath.toStdString());
    auto one = io::openStack(out.toStdString());
    QVERIFY(cube->wcs() && one->wcs());
    for (const auto& [x, y] : {std::pair{0.0, 0.0}, {17.0, 3.0}, {40.5, 60.25}, {99.0, 99.0}}) {
      const std::vector<double> want = cube->wcs()->pixelToWorld(x, y, 10);
      const std::vector<double> got = one->wcs()->pixelToWorld(x, y, 0);
      QCOMPARE(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        QVERIFY2(std::abs(got[i] - want[i]) <= 1e-9 * (1 + std::abs(want[i])),
                 qPrintable(QString("%1 %2 axis %3: %4 vs %5")
                                .arg(x)
                                .arg(y)
                                .arg(i)
                                .arg(got[i], 0, 'g', 15)
                                .arg(want[i], 0, 'g', 15)));
    }
    QCOMPARE(one->wcs()->formatSpectral(0), cube->wcs()->formatSpectral(10));
  }

  // A whole-stack save runs slice by slice with progress and stops on Cancel without leaving a
  // file; closing the window cancels it instead of waiting for it.
  void aSaveCanBeCancelledAndClosingDoesNotWaitForIt() {
    QTemporaryDir dir;
    const QString out = dir.filePath("slow.fits");
    QElapsedTimer closing;
    {
      MainWindow w;
      w.setQuiet(true);
      w.show();
      w.openReader(std::make_shared<SlowReader>());
      QSignalSpy cancelled(w.tool<ui::SaveTool>(), &ui::SaveTool::cancelled);
      w.tool<ui::SaveTool>()->saveData(out, true);  // 100 slices: 10 s
      QTest::qWait(150);
      w.tool<ui::SaveTool>()->cancel();
      QVERIFY(cancelled.wait(30000));
      QVERIFY(!QFile::exists(out));
      QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).size(), 0);
      w.tool<ui::SaveTool>()->saveData(out, true);
      QTest::qWait(150);
      closing.start();
      w.close();
      // ~MainWindow at the end of the scope waits for the pool: it must not take the 10 s
      // (cancelled, it waits for one slice's read).
    }
    QVERIFY2(closing.elapsed() < 5000, qPrintable(QString::number(closing.elapsed())));
    QVERIFY(!QFile::exists(out));
    QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).size(), 0);
  }

  // File ▸ Save slice on a radio cube: the saved slice keeps RA/Dec and the slice's velocity
  // (astropy's values for slice 2 of the fixture, tests/io/data/wcs.txt).
  void aSavedSliceKeepsItsWorldCoordinates() {
    QTemporaryDir dir;
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &MainWindow::stackOpened);
    w.openFile(QStringLiteral(STACKLENS_IO_FIXTURES "/cube_vopt.fits"));
    QVERIFY(opened.wait(30000));
    w.navigation()->slider()->setValue(2);
    QTRY_COMPARE(w.slicePath()->currentZ(), 2);
    QSignalSpy saved(w.tool<ui::SaveTool>(), &ui::SaveTool::saved);
    const QString out = dir.filePath("slice2.fits");
    w.tool<ui::SaveTool>()->saveData(out, false);
    QVERIFY(saved.wait(30000));
    auto one = io::openStack(out.toStdString());
    QVERIFY(one->wcs());
    const std::vector<double> world = one->wcs()->pixelToWorld(1.25, 3.5, 0);
    QCOMPARE(world.size(), size_t(3));
    QVERIFY(std::abs(world[0] - 85.250750685637) < 1e-9);
    QVERIFY(std::abs(world[1] - -2.448999999790) < 1e-9);
    QVERIFY(std::abs(world[2] - 17500.0) < 1e-6);
  }

  void horseHeadReadoutHasValueAndSkyPosition() {
    const QString path = STACKLENS_SHARED_DATA "/HorseHead.fits";
    if (!QFileInfo::exists(path)) QSKIP("shared sample data not present");
    MainWindow w;
    auto* readout = w.tool<ui::PixelReadout>();
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &MainWindow::stackOpened);
    w.openFile(path);
    QVERIFY(opened.wait(10000));
    // astropy: data[200, 100] = 7547 at RA 85.37172°, Dec −2.52723°.
    w.hoverAt(QPointF(100, 200));
    const QString r = readout->text();
    QVERIFY2(r.contains("value 7547") && r.contains("85.3717") && r.contains("2.5272"),
             qPrintable(r));
  }

  void exportsPngWithColorbar() {
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.openReader(std::make_shared<FakeReader>());
    QTemporaryDir dir;
    const QString plain = dir.filePath("view.png"), bar = dir.filePath("bar.png");
    QCOMPARE(w.exportPng(plain, false), QString());
    QCOMPARE(w.exportPng(bar, true), QString());
    const QImage a(plain), b(bar);
    QCOMPARE(a.size(), w.sliceView()->grabFramebuffer().size());
    QCOMPARE(b.width(), a.width());
    QVERIFY(b.height() > a.height());
    QVERIFY(!w.exportPng(dir.filePath("no/such/folder/x.png"), false).isEmpty());
  }

  // An export always gets a .png name and never replaces the open stack, even through a link.
  void exportNeverWritesOverTheOpenStack() {
    QTemporaryDir dir;
    const std::string in = dir.filePath("stack.fits").toStdString();
    std::vector<float> data(size_t(kZ * kY * kX), 3.f);
    io::writeStack(in, data.data(), kZ, kY, kX, {});
    const std::string before = readFile(in);
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &MainWindow::stackOpened);
    w.openFile(QString::fromStdString(in));
    QVERIFY(opened.wait(30000));
    QCOMPARE(w.exportPng(QString::fromStdString(in), false), QString());
    QVERIFY(QFile::exists(QString::fromStdString(in) + ".png"));
    QVERIFY(QFile::link(QString::fromStdString(in), dir.filePath("view.png")));
    const QString error = w.exportPng(dir.filePath("view.png"), false);
    QVERIFY2(error.contains("refusing"), qPrintable(error));
    QCOMPARE(readFile(in), before);
  }

  void settingsPersistAcrossWindows() {
    {
      MainWindow w;
      w.displayPanel()->setColormap("magma");
      w.displayPanel()->setScale(render::Scale::Asinh);
      w.close();
    }
    MainWindow again;
    QCOMPARE(again.sliceView()->display().colormap, QString("magma"));
    QCOMPARE(again.sliceView()->display().scale, render::Scale::Asinh);
  }

  // File ▸ Process whole stack…: the dialog deconvolves the open stack into a new file with the
  // Processing dock's settings, and the window opens the result.
  void processWholeStackOpensTheResult() {
    MainWindow w;
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &MainWindow::stackOpened);
    w.openReader(std::make_shared<FakeReader>());
    ui::openWholeStack(&w);
    auto* dialog = w.findChild<ui::WholeStackDialog*>();
    QVERIFY(dialog);
    QCOMPARE(dialog->outputEdit()->text(), QString("/fake/stack_processed.fits"));
    QTemporaryDir dir;
    const QString out = dir.filePath("whole.fits");
    dialog->outputEdit()->setText(out);
    dialog->start();
    QTRY_VERIFY_WITH_TIMEOUT(opened.count() >= 1 && opened.last().at(0).toString() == out, 60000);
    QCOMPARE(w.info().z, kZ);
    QCOMPARE(w.info().x, kX);
  }

  void headerDialogFilters() {
    FakeReader reader;
    ui::HeaderDialog dialog("header", reader.info().header);
    QCOMPARE(dialog.table()->rowCount(), 2);
    auto* filter = dialog.findChild<QLineEdit*>();
    filter->setText("z step");
    QVERIFY(dialog.table()->isRowHidden(0));
    QVERIFY(!dialog.table()->isRowHidden(1));
  }
};

STACKLENS_GL_QTEST_MAIN(MainWindowTest)

#include "main_window_qtest.moc"
