// --scrub-cold: the scrub benchmark reads no slice beforehand, steps once to each slice not shown
// yet and counts the file reads made while scrubbing (never timing).
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <vector>

#include "io/stack_writer.h"
#include "tests/render/gl_qtest_main.h"
#include "ui/bench/scrub_benchmark.h"
#include "ui/frame/main_window.h"

using namespace stacklens;

namespace {

constexpr int kSlices = 6, kSide = 64;

QJsonObject runScrub(const QString& path, int frames, bool cold) {
  ui::MainWindow w;
  w.setQuiet(true);
  auto* bench = new ui::ScrubBenchmark(&w, frames, &w);
  bench->setCold(cold);
  QObject::connect(&w, &ui::MainWindow::stackOpened, bench, &ui::ScrubBenchmark::start,
                   Qt::SingleShotConnection);
  QSignalSpy finished(bench, &ui::ScrubBenchmark::finished);
  w.show();
  w.openFile(path);
  if (!finished.wait(60000)) return {};
  return QJsonDocument::fromJson(finished.front().at(0).toString().toUtf8()).object();
}

}  // namespace

class ScrubColdTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("StackLensTest");
    QCoreApplication::setApplicationName("StackLensScrubColdTest");
    QSettings().clear();
  }

  void coldStepsReadEachSliceOnceWhileScrubbing() {
    QTemporaryDir dir;
    const QString path = dir.filePath("stack.fits");
    std::vector<float> data(size_t(kSlices) * kSide * kSide);
    for (size_t i = 0; i < data.size(); ++i) data[i] = float(i % 997);
    io::writeStack(path.toStdString(), data.data(), kSlices, kSide, kSide, {});

    // Asked for more steps than new slices: one step to each of slices 1–5, no wrap.
    const QJsonObject cold = runScrub(path, 20, true);
    QVERIFY2(!cold.isEmpty(), "the benchmark did not finish");
    QCOMPARE(cold["frames"].toInt(), kSlices - 1);
    QVERIFY(cold["cold"].toBool());
    QCOMPARE(cold["dropped"].toInt(), 0);
    // The opener read slice 0; slices 1–5 were read from the file once each, while scrubbing or
    // just before by the read-ahead of slice 1.
    QCOMPARE(cold["file_reads"].toInt(), kSlices - 1);

    // Cached (the default): everything read before the steps, so no count of reads.
    const QJsonObject cached = runScrub(path, 20, false);
    QVERIFY2(!cached.isEmpty(), "the benchmark did not finish");
    QCOMPARE(cached["frames"].toInt(), 20);
    QVERIFY(!cached.contains("cold"));
    QVERIFY(!cached.contains("file_reads"));
  }
};

STACKLENS_GL_QTEST_MAIN(ScrubColdTest)
#include "scrub_cold_qtest.moc"
