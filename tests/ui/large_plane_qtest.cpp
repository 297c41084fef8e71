// A plane larger than the viewer's memory budget (forced small here) opens without being read
// whole: the first frame comes from the coarse display level and shows the plane's halves, the
// readout reads full-resolution values from the file, and zooming in draws the finest level.
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <vector>

#include "io/stack.h"
#include "io/stack_writer.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/analysis/region_stats_tool.h"
#include "ui/display/level_view.h"
#include "ui/frame/main_window.h"
#include "ui/frame/pixel_readout.h"

using namespace stacklens;
using ui::MainWindow;

namespace {

constexpr int kWidth = 900, kHeight = 600, kEdge = 450;

// Dark left half, bright right half; x mod 7 added so that a readout between the coarse level's
// samples tells a full-resolution value from a sampled one.
float valueAt(int x) { return (x < kEdge ? 0.f : 1000.f) + float(x % 7); }

int brightness(const QImage& frame, QPointF widget) {
  const double ratio = frame.width() / std::max(1.0, double(frame.deviceIndependentSize().width()));
  return qGray(frame.pixel(int(widget.x() * ratio), int(widget.y() * ratio)));
}

}  // namespace

class LargePlaneTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("StackLensTest");
    QCoreApplication::setApplicationName("StackLensLargePlaneTest");
    QSettings().clear();
  }

  void opensFromLevelsAndReadsFullResolution() {
    QTemporaryDir dir;
    const QString path = dir.filePath("large.fits");
    std::vector<float> data(size_t(kWidth) * kHeight);
    for (int y = 0; y < kHeight; ++y)
      for (int x = 0; x < kWidth; ++x) data[size_t(y) * kWidth + x] = valueAt(x);
    io::writeStack(path.toStdString(), data.data(), 1, kHeight, kWidth, {});

    MainWindow w;
    w.slicePath()->setRawSliceBudget(size_t(1) << 20);  // planes above 256 KiB come from levels
    QVERIFY(testing::openInWindow(w, path));
    QVERIFY(QTest::qWaitForWindowExposed(&w));

    // Never read whole: no slice held, the coarse level (every 8th pixel: 113 × 75) drawn.
    QVERIFY(!w.slicePath()->currentSlice());
    QVERIFY(w.slicePath()->levelView()->active());
    QCOMPARE(w.slicePath()->levelView()->levelShown(), 3);
    QVERIFY(w.slicePath()->slices()->count() == 0);
    const auto& patches = w.sliceView()->levelPatches();
    QCOMPARE(patches.size(), size_t(1));
    QCOMPARE(patches[0].width, 113);
    QCOMPARE(patches[0].height, 75);

    // The first frame, read back: dark left of the edge, bright right of it.
    render::SliceView* view = w.sliceView();
    QImage frame = view->grabFramebuffer();
    QVERIFY(!frame.isNull());
    const int left = brightness(frame, view->imageToWidget({200, 300}));
    const int right = brightness(frame, view->imageToWidget({700, 300}));
    QVERIFY2(right > left + 60, qPrintable(QString("left %1 right %2").arg(left).arg(right)));
    QCOMPARE(brightness(frame, view->imageToWidget({100, 100})), left);
    QCOMPARE(brightness(frame, view->imageToWidget({800, 500})), right);

    // The readout reads the pixel from the file: 701 is no sample of the coarse level.
    w.hoverAt(QPointF(701, 301));
    QTRY_VERIFY2(w.tool<ui::PixelReadout>()->text().contains("value 1001"),
                 qPrintable(w.tool<ui::PixelReadout>()->text()));
    w.hoverAt(QPointF(453, 10));
    QTRY_VERIFY2(w.tool<ui::PixelReadout>()->text().contains("value 1005"),
                 qPrintable(w.tool<ui::PixelReadout>()->text()));

    // Region statistics are measured at full resolution from the file.
    double sum = 0, max = 0;
    for (int x = 447; x <= 457; ++x) sum += 6 * valueAt(x), max = std::max<double>(max, valueAt(x));
    w.setRegion(QRectF(447, 100, 10, 5), false);
    QTRY_COMPARE(w.tool<ui::RegionStatsTool>()->stats().npix, int64_t(66));
    QCOMPARE(w.tool<ui::RegionStatsTool>()->stats().sum, sum);
    QCOMPARE(w.tool<ui::RegionStatsTool>()->stats().max, max);

    // Refined progressively: at the fitted zoom (about 0.8 here) the finest level is read for
    // the view and drawn over the coarse one. The coarse sample of columns 448–455 is column 448
    // (dark); at full resolution column 452 is bright.
    QTRY_COMPARE(w.slicePath()->levelView()->levelShown(), 0);
    frame = view->grabFramebuffer();
    QVERIFY(brightness(frame, view->imageToWidget({452, 300})) > left + 60);
    QVERIFY(brightness(frame, view->imageToWidget({447, 300})) < right - 60);

    // Zoomed out, the level whose pixels fit a screen pixel; zoomed in again, the finest.
    view->setZoom(0.3);
    QTRY_COMPARE(w.slicePath()->levelView()->levelShown(), 1);
    view->setZoom(0.01);
    QTRY_COMPARE(w.slicePath()->levelView()->levelShown(), 3);
    QCOMPARE(view->levelPatches().size(), size_t(1));
    // Level 0's tiles there were read before: drawn again from the tile cache.
    QSignalSpy refined(w.slicePath()->levelView(), &ui::LevelView::refined);
    view->setView(2.0, QPointF(kEdge, 300));
    view->setZoom(2.0);
    QTRY_COMPARE(w.slicePath()->levelView()->levelShown(), 0);
    QVERIFY(w.slicePath()->levelView()->viewRefined());
    QVERIFY(!refined.isEmpty());
    QCOMPARE(refined.last().at(0).toInt(), 0);
    QVERIFY(!w.slicePath()->currentSlice());  // still never read whole
  }

  // An OME-Zarr pyramid (900, 450 and 225 pixels wide) is drawn from its own levels: the coarse
  // level is the last one sampled every 2nd pixel, and at zoom 0.3 the view shows level 1's
  // own pixels (2 × 2 means written by the pyramid), not samples of level 0.
  void omeZarrDrawsFromItsOwnLevels() {
    QTemporaryDir dir;
    const QString path = dir.filePath("large.ome.zarr");
    std::vector<float> data(size_t(kWidth) * kHeight);
    for (int y = 0; y < kHeight; ++y)
      for (int x = 0; x < kWidth; ++x) data[size_t(y) * kWidth + x] = valueAt(x) + float(y % 3);
    io::WriteOptions options;
    options.zarr.levels = 3;
    options.zarr.chunks = {1, 128, 128};
    io::writeStack(path.toStdString(), data.data(), 1, kHeight, kWidth, options);

    MainWindow w;
    w.slicePath()->setRawSliceBudget(size_t(1) << 20);
    QVERIFY(testing::openInWindow(w, path));
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(!w.slicePath()->currentSlice());
    QCOMPARE(w.sliceView()->levelPatches().front().width, 113);  // level 2 (225) every 2nd pixel

    render::SliceView* view = w.sliceView();
    view->setZoom(0.3);
    QTRY_COMPARE(w.slicePath()->levelView()->levelShown(), 1);
    const render::LevelPatch fine = view->levelPatches().back();
    io::OpenOptions atOne;
    atOne.hdu = 1;
    auto level1 = io::openStack(path.toStdString(), atOne);
    const int x0 = int(fine.x0 / 2), y0 = int(fine.y0 / 2);
    std::vector<float> want(size_t(fine.width) * fine.height);
    level1->readBox(0, y0, y0 + fine.height, x0, x0 + fine.width, want.data());
    QVERIFY(*fine.pixels == want);
    QVERIFY(want[0] != data[size_t(2 * y0) * kWidth + 2 * x0]);  // a mean, not a sample
  }
};

STACKLENS_GL_QTEST_MAIN(LargePlaneTest)
#include "large_plane_qtest.moc"
