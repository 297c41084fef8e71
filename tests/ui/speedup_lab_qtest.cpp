// The speedup lab's window: curves drawn where the data say (read back as pixels), presentation
// mode's fonts and lines, a sweep opened from CSV, a run with progress and Cancel, and exports.
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QtTest>
#include <cmath>

#include "compute/lab/sweep_csv.h"
#include "io/whole_file.h"
#include "tests/compute/lab/timed_point.h"
#include "ui/frame/main_window.h"
#include "ui/lab/event_loop_probe.h"
#include "ui/lab/lab_standalone.h"
#include "ui/lab/speedup_lab_chart.h"
#include "ui/lab/speedup_lab_controls.h"
#include "ui/lab/speedup_lab_window.h"
#include "ui/live/live_processing.h"
#include "ui/live/timing_panel.h"

using namespace stacklens;
namespace lab = compute::lab;

namespace {

lab::Point point(int64_t edge, lab::Variant v, int threads, double seconds) {
  lab::Point p = testing::timedPoint("blur", edge, v, threads, 4, seconds, 0.95, 1.05);
  p.size = edge;
  p.repeats = 3;
  p.bytes = 8.0 * double(edge) * double(edge);
  p.bandwidth = 1e10;
  p.floorS = p.bytes / p.bandwidth;
  p.maxRelDiff = v == lab::Variant::Cpu ? NAN : 1e-6;
  return p;
}

// Four variants far apart on the time axis, so that each curve's pixels are its own.
lab::Sweep sample() {
  lab::Sweep s;
  s.machine.cpu = "Test CPU";
  s.machine.cpuThreads = 4;
  s.machine.gpu = "Test GPU";
  for (int64_t e : {256, 512, 1024, 2048, 4096}) {
    const double n = double(e) * double(e);
    s.points.push_back(point(e, lab::Variant::Cpu, 1, 4e-8 * n));
    s.points.push_back(point(e, lab::Variant::Cpu, 4, 1e-8 * n));
    s.points.push_back(point(e, lab::Variant::GpuKernel, 0, 1e-5 + 1e-12 * n));
    s.points.push_back(point(e, lab::Variant::GpuWithTransfers, 0, 1e-3 + 1e-9 * n));
  }
  return s;
}

// Whether a pixel within radius of p has colour c (antialiasing blends the edges, so the test
// accepts a channel distance of 60 of 255: the four variant colours are further apart).
bool colourNear(const QImage& im, QPointF p, QColor c, int radius = 3) {
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      const QPoint q(qRound(p.x()) + dx, qRound(p.y()) + dy);
      if (!im.rect().contains(q)) continue;
      const QColor got = im.pixelColor(q);
      if (std::abs(got.red() - c.red()) + std::abs(got.green() - c.green()) +
              std::abs(got.blue() - c.blue()) <
          60)
        return true;
    }
  return false;
}

}  // namespace

class SpeedupLabTest : public QObject {
  Q_OBJECT
 private slots:
  void curvesAreDrawnWhereTheDataSay() {
    ui::SpeedupLabChart chart;
    chart.resize(900, 800);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const lab::Sweep s = sample();
    chart.showOp(s, "blur");
    QCoreApplication::processEvents();
    const QImage im = chart.grab().toImage();
    const QColor red("#d62728"), green("#2ca02c");
    for (const auto& p : s.points) {
      const QPointF at = chart.timePosition(double(p.elements()), p.medianS);
      const QPointF off = chart.timePosition(double(p.elements()), p.medianS * 30);
      if (p.variant == lab::Variant::GpuWithTransfers) {
        QVERIFY2(colourNear(im, at, red),
                 qPrintable(QString("no red at %1,%2").arg(at.x()).arg(at.y())));
        QVERIFY(!colourNear(im, off, red));
      }
      if (p.variant == lab::Variant::GpuKernel) {
        QVERIFY(colourNear(im, at, green));
        QVERIFY(!colourNear(im, off, green));
      }
    }
    // Log–log: each doubling of the edge (×4 elements) moves as far along x.
    const double x0 = chart.timePosition(256.0 * 256, 1e-3).x();
    const double x1 = chart.timePosition(512.0 * 512, 1e-3).x();
    const double x2 = chart.timePosition(1024.0 * 1024, 1e-3).x();
    QVERIFY(x1 > x0);
    QVERIFY(std::abs((x2 - x1) - (x1 - x0)) < 1.0);  // rounding to whole pixels
    QVERIFY(chart.timeCurve("gpu-with-transfers"));
    QVERIFY(chart.explanation()->text().contains("Break-even"));
  }

  void presentationModeEnlargesFontsAndLines() {
    ui::SpeedupLabChart normal, big;
    big.setPresentation(true);
    const lab::Sweep s = sample();
    normal.showOp(s, "blur");
    big.showOp(s, "blur");
    // Titles 1.3 × the body size: 9 pt on a monitor, 16 pt on a projector.
    QCOMPARE(normal.titlePointSize(), 9 * 1.3);
    QCOMPARE(big.titlePointSize(), 16 * 1.3);
    QCOMPARE(normal.explanation()->font().pointSizeF(), 9.0);
    QCOMPARE(big.explanation()->font().pointSizeF(), 16.0);
    QCOMPARE(normal.curveWidth(), 2.0);
    QCOMPARE(big.curveWidth(), 4.0);

    ui::SpeedupLabWindow window;
    window.setPresentation(true);  // the figure takes the whole width
    QVERIFY(!window.controls()->isVisibleTo(&window));
    QVERIFY(window.chart()->presentation());
    window.setPresentation(false);
    QVERIFY(window.controls()->isVisibleTo(&window));
  }

  void openSweepShowsTheSavedCurves() {
    QTemporaryDir dir;
    const QString path = dir.filePath("gpu.csv");
    io::writeWholeFile(path.toStdString(), lab::csvText(sample()));
    ui::SpeedupLabWindow window;
    QVERIFY(window.openSweep(path));
    QCOMPARE(window.sweep().points.size(), sample().points.size());
    QCOMPARE(window.sweep().machine.gpu, std::string("Test GPU"));
    QLineSeries* curve = window.chart()->timeCurve("gpu-kernel");
    QVERIFY(curve);
    QCOMPARE(curve->count(), 5);
    // log10(1e-5 + 1e-12 · 2048²): %.9g in the file keeps 9 digits, far inside 1e-6 in log10.
    QVERIFY(std::abs(curve->at(3).y() - std::log10(1e-5 + 1e-12 * 2048.0 * 2048.0)) < 1e-6);
  }

  void exportsWriteTheirFiles() {
    QTemporaryDir dir;
    ui::SpeedupLabWindow window;
    const QString csv = dir.filePath("in.csv");
    io::writeWholeFile(csv.toStdString(), lab::csvText(sample()));
    QVERIFY(window.openSweep(csv));
    window.resize(1000, 700);
    QVERIFY(window.exportCsv(dir.filePath("out.csv")));
    QCOMPARE(lab::readCsvFile(dir.filePath("out.csv").toStdString()).points.size(),
             sample().points.size());
    QVERIFY(window.exportSvg(dir.filePath("out.svg")));
    QFile svg(dir.filePath("out.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    QVERIFY(svg.readAll().contains("id=\"curve-blur-gpu-with-transfers\""));
    QVERIFY(window.exportPng(dir.filePath("out.png")));
    QImage png(dir.filePath("out.png"));
    QVERIFY(!png.isNull());
    QVERIFY(png.width() > 100);
  }

  void toolsMenuOpensOneLabPerViewer() {
    ui::MainWindow w;
    auto* action = w.findChild<QAction*>("speedupLabAction");
    QVERIFY(action);
    QVERIFY(action->text().contains("Speedup lab"));
    action->trigger();
    auto* lab = w.findChild<ui::SpeedupLabWindow*>();
    QVERIFY(lab);
    QVERIFY(lab->isVisible());
    action->trigger();  // raised again, not a second window
    QCOMPARE(w.findChildren<ui::SpeedupLabWindow*>().size(), 1);
    // One switch for the lecture: Tools ▸ Presentation mode reaches the lab and the timings,
    // and the lab's own switch comes back to it.
    auto* present = w.findChild<QAction*>("presentationModeAction");
    QVERIFY(present);
    present->setChecked(true);
    QVERIFY(lab->presentation());
    QVERIFY(w.tool<ui::LiveProcessing>()->timingPanel()->presentation());
    lab->findChild<QAction*>("presentationMode")->setChecked(false);
    QVERIFY(!present->isChecked());
    QVERIFY(!w.tool<ui::LiveProcessing>()->timingPanel()->presentation());
    lab->close();
  }

  // `stacklens --lab SWEEP --grab PNG`: the saved sweep in the lab's own window, saved as pixels
  // in which the curves are drawn; a sweep that cannot be read ends with code 3 and no file.
  void aSavedSweepOpensAloneAndIsGrabbedAsPng() {
    QTemporaryDir dir;
    const QString csv = dir.filePath("sweep.csv"), png = dir.filePath("lab.png");
    io::writeWholeFile(csv.toStdString(), lab::csvText(sample()));
    QCOMPARE(ui::runLabWindow(*qApp, csv, png), 0);
    const QImage im(png);
    QVERIFY(!im.isNull());
    QVERIFY2(im.width() >= 800 && im.height() >= 600,
             qPrintable(QString("%1x%2").arg(im.width()).arg(im.height())));
    // The curves of the first op, in their variants' colours (a few hundred pixels each).
    for (const QColor c : {QColor("#d62728"), QColor("#2ca02c")}) {
      int near = 0;
      for (int y = 0; y < im.height(); ++y)
        for (int x = 0; x < im.width(); ++x) near += colourNear(im, QPointF(x, y), c, 0);
      QVERIFY2(near > 100, qPrintable(QString("%1 pixels of %2").arg(near).arg(c.name())));
    }

    const QString bad = dir.filePath("bad.csv"), none = dir.filePath("none.png");
    io::writeWholeFile(bad.toStdString(), "not a sweep\n");
    QCOMPARE(ui::runLabWindow(*qApp, bad, none), 3);
    QVERIFY(!QFile::exists(none));
  }

  // The probe behind the lab's "longest pause": a GUI thread held for a while is seen as a pause
  // of at least that hold less one tick; the bound holds however busy the machine is, since a
  // late tick only lengthens what is measured.
  void theEventLoopProbeSeesAPauseOfTheGuiThread() {
    ui::EventLoopProbe probe;
    probe.start();
    QTest::qWait(30);
    QTimer::singleShot(0, [] { QThread::msleep(120); });
    QTest::qWait(60);
    probe.stop();
    QVERIFY2(probe.longestPauseMs() >= 115, qPrintable(QString::number(probe.longestPauseMs())));
    QVERIFY(probe.ticks() >= 2);
    probe.start();  // a new run forgets the old pause
    QCOMPARE(probe.longestPauseMs(), 0.0);
    probe.stop();
  }

  void runsASweepInTheBackgroundAndCancels() {
    ui::SpeedupLabWindow window;
    auto* c = window.controls();
    for (const char* op :
         {"median", "outliers", "sigmaclip", "segment", "rl2d", "resample", "projection"})
      c->opBox(op)->setChecked(false);
    c->opBox("blur")->setChecked(true);
    c->sizes()->setText("16,32");
    c->repeats()->setValue(1);
    c->gpu()->setChecked(false);
    QSignalSpy finished(&window, &ui::SpeedupLabWindow::runFinished);
    QVERIFY(window.startRun());
    QVERIFY(window.running());
    QVERIFY(finished.wait(60000));
    QVERIFY(!window.running());
    QVERIFY(!window.sweep().cancelled);
    QVERIFY(window.sweep().points.size() >= 2);  // 2 sizes × 1 or 2 thread counts
    QVERIFY(window.chart()->timeCurve("cpu-all-threads"));
    QCOMPARE(window.machineText()->text().left(5), QString("CPU: "));
    QVERIFY2(window.status()->text().contains("longest pause"),
             qPrintable(window.status()->text()));

    c->sizes()->setText("16:4096");
    QVERIFY(window.startRun());
    window.cancelRun();
    QVERIFY(finished.wait(60000));
    QVERIFY(window.sweep().cancelled);

    c->sizes()->setText("4096:16");  // refused before any work, with the reason shown
    QVERIFY(!window.startRun());
    QVERIFY(!window.running());
    QVERIFY(window.status()->text().contains("sizes"));
  }
};

QTEST_MAIN(SpeedupLabTest)
#include "speedup_lab_qtest.moc"
