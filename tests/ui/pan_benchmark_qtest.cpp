// The pan benchmark drags the view across a multiscale OME-Zarr: each step presents a frame that
// shows a different part of the plane, and the JSON reports what was measured (never timing).
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <vector>

#include "tests/render/gl_qtest_main.h"
#include "tests/ui/striped_plane.h"
#include "ui/bench/pan_benchmark.h"
#include "ui/display/level_view.h"
#include "ui/frame/main_window.h"

using namespace stacklens;

namespace {

constexpr int kWidth = 4000, kHeight = 500;

// Vertical stripes 50 pixels wide: any horizontal move of the view changes the frame.
QString writeStripes(const QTemporaryDir& dir) {
  // Levels 4000, 2000 and 1000 pixels wide.
  return test::writeStripedOmeZarr(
      dir, kWidth, kHeight, [](int x) { return float((x / 50) % 2 * 1000); }, 3, 128);
}

// Runs the benchmark on path in a window whose memory budget makes the plane come from levels;
// each presented step's frame is read back into frames.
QJsonObject runPan(const QString& path, int steps, double zoom, int stepPixels,
                   std::vector<QImage>* frames) {
  ui::MainWindow w;
  w.setQuiet(true);
  w.slicePath()->setRawSliceBudget(size_t(1)
                                   << 20);  // planes above 256 KiB come from display levels
  w.resize(800, 600);
  auto* bench = new ui::PanBenchmark(&w, steps, zoom, stepPixels, &w);
  QObject::connect(&w, &ui::MainWindow::stackOpened, bench, &ui::PanBenchmark::start,
                   Qt::SingleShotConnection);
  QObject::connect(bench, &ui::PanBenchmark::stepPresented, &w,
                   [&w, frames](int) { frames->push_back(w.sliceView()->grabFramebuffer()); });
  QSignalSpy finished(bench, &ui::PanBenchmark::finished);
  w.show();
  w.openFile(path);
  if (!finished.wait(60000)) return {};
  return QJsonDocument::fromJson(finished.front().at(0).toString().toUtf8()).object();
}

}  // namespace

class PanBenchmarkTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("StackLensTest");
    QCoreApplication::setApplicationName("StackLensPanBenchmarkTest");
    QSettings().clear();
  }

  void everyStepPresentsAMovedFrameAndTheJsonSaysWhatWasMeasured() {
    QTemporaryDir dir;
    const QString path = writeStripes(dir);
    std::vector<QImage> frames;
    const QJsonObject o = runPan(path, 6, 0.5, 40, &frames);
    QVERIFY2(!o.isEmpty(), "the benchmark did not finish");
    QVERIFY2(!o.contains("error"), qPrintable(o["error"].toString()));

    // The settled view and one frame per step, each different from the one before.
    QCOMPARE(int(frames.size()), 7);
    for (size_t i = 1; i < frames.size(); ++i) {
      QVERIFY(!frames[i].isNull());
      QVERIFY2(frames[i] != frames[i - 1], qPrintable(QString("step %1 drew nothing new").arg(i)));
    }

    QCOMPARE(o["frames"].toInt(), 6);
    QCOMPARE(o["zoom"].toDouble(), 0.5);
    QCOMPARE(o["pan_px_per_frame"].toInt(), 40);
    QCOMPARE(o["distance_px"].toDouble(), 6 * 40 / 0.5);
    // The three stored levels, then strided ones down to the small budget's coarsest side.
    QVERIFY(o["levels"].toInt() >= 3);
    QCOMPARE(o["level"].toInt(), 1);  // 2 full-resolution pixels per level pixel at zoom 0.5
    QCOMPARE(o["plane_size"].toString(), QString("4000x500"));
    QCOMPARE(o["dropped"].toInt(), 0);
    const int placeholders = o["placeholder_frames"].toInt(-1);
    QVERIFY(placeholders >= 0 && placeholders <= 6);
    QVERIFY(o["refine_after_pan_ms"].toDouble(-1) >= 0);  // refined after the release
    // Every move was shown from the level by the end, each no sooner than its own frame.
    QCOMPARE(o["moves_never_refined"].toInt(-1), 0);
    QVERIFY(o["move_refined_p50_ms"].toDouble() >= o["frame_p50_ms"].toDouble());
    QVERIFY(o["move_refined_max_ms"].toDouble() >= o["move_refined_p95_ms"].toDouble());
    QVERIFY(o["tiles_read"].toInt() > 0);  // level 1's tiles at least
    QVERIFY(o["tiles_read_stale"].toInt(-1) >= 0 && o["tiles_cancelled"].toInt(-1) >= 0);
    QVERIFY(o["settle_ms"].toDouble(-1) >= 0);
    for (const char* key : {"fps_median", "fps_p5", "frame_p50_ms", "frame_p95_ms", "frame_max_ms",
                            "gui_stall_max_ms", "peak_rss_mb"})
      QVERIFY2(o[key].toDouble(-1) > 0, key);
    QVERIFY(o["fps_p5"].toDouble() <= o["fps_median"].toDouble());
    QVERIFY(o["frame_p50_ms"].toDouble() <= o["frame_p95_ms"].toDouble());
  }

  void aPlaneNoWiderThanTheViewIsAnError() {
    QTemporaryDir dir;
    const QString path = writeStripes(dir);
    std::vector<QImage> frames;
    const QJsonObject o = runPan(path, 6, 0.05, 40, &frames);  // 200 screen pixels wide
    QVERIFY(o["error"].toString().contains("nothing to pan"));
    QCOMPARE(o["frames"].toInt(), 0);
  }
};

STACKLENS_GL_QTEST_MAIN(PanBenchmarkTest)
#include "pan_benchmark_qtest.moc"
