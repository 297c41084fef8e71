// The timing panel shows measured times (a backend that sleeps a known time shows at least that),
// Compare-mode differences and speedups, benchmark medians, and exports what it shows.
#include <QApplication>
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "tests/compute/fake_backend.h"
#include "tests/ui/memory_stack.h"
#include "ui/live/processing_worker.h"
#include "ui/live/timing_panel.h"

using namespace stacklens;
using stacklens::testing::FakeBackend;
using stacklens::testing::MemoryStack;
using ui::ProcessingResultPtr;
using ui::ProcessingWorker;
using ui::TimingPanel;

namespace {

ProcessingResultPtr runOnce(ProcessingWorker& worker, int z) {
  QSignalSpy results(&worker, &ProcessingWorker::resultReady);
  QSignalSpy failures(&worker, &ProcessingWorker::failed);
  worker.request(z);
  if (!QTest::qWaitFor([&] { return !results.isEmpty() || !failures.isEmpty(); }, 10000)) return {};
  if (!failures.isEmpty()) qWarning() << failures.first().at(2).toString();
  return results.isEmpty() ? nullptr : results.first().at(0).value<ProcessingResultPtr>();
}

double cellNumber(const TimingPanel& panel, int row, int column) {
  QString text = panel.table()->item(row, column)->text();
  text = text.section(' ', 0, 0).remove('*').remove(QChar(0xD7));  // "61.2 (1)", "×1.5"
  bool ok = false;
  const double v = text.toDouble(&ok);
  return ok ? v : NAN;
}

}  // namespace

class TimingPanelTest : public QObject {
  Q_OBJECT
 private slots:
  // Presentation mode: 16 pt text in the table and labels, the chart twice the size; off gives
  // the application's font back.
  void presentationModeEnlargesTextAndChart() {
    TimingPanel panel;
    const double normal = QApplication::font().pointSizeF();
    panel.setPresentation(true);
    QVERIFY(panel.presentation());
    QCOMPARE(panel.table()->font().pointSizeF(), 16.0);
    QCOMPARE(panel.chart()->font().pointSizeF(), 16.0);
    QCOMPARE(panel.chart()->scale(), 2.0);
    panel.setPresentation(false);
    QCOMPARE(panel.table()->font().pointSizeF(), normal);
    QCOMPARE(panel.chart()->scale(), 1.0);
  }

  // The display path (interop or download) and the OpenGL stay under the devices, whatever
  // result comes later.
  void showsTheDisplayPathUnderTheDevices() {
    TimingPanel panel;
    panel.setDevices("Fake CPU", "Fake GPU");
    panel.setDisplayPath("Display: CUDA–OpenGL interop; OpenGL: NVIDIA Corporation, H100");
    QVERIFY(panel.devicesText().contains("GPU: Fake GPU"));
    QVERIFY(panel.devicesText().contains("Display: CUDA–OpenGL interop"));
    panel.setDevices("Other CPU", {});
    QVERIFY(panel.devicesText().contains("Other CPU"));
    QVERIFY(panel.devicesText().contains("OpenGL: NVIDIA Corporation"));
    panel.setDisplayPath({});
    QVERIFY(!panel.devicesText().contains("Display:"));
  }

  void showsAtLeastTheTimeTheBackendSpent() {
    auto backend = std::make_shared<FakeBackend>(false, 3);
    backend->iterationSleepMs = 20;  // 3 iterations: ≥ 60 ms of deconvolution
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(2, 8, 8));
    worker.setBackends(backend);
    compute::Pipeline p;
    p.blur.enabled = true;
    p.deconvolution.enabled = true;
    p.deconvolution.params.iterations = 3;
    worker.setPipeline(p);
    const ProcessingResultPtr r = runOnce(worker, 1);
    QVERIFY(r);
    TimingPanel panel;
    panel.showResult(r);
    QCOMPARE(panel.table()->rowCount(), 3);  // blur, deconvolution, total
    QCOMPARE(panel.table()->item(1, TimingPanel::Stage)->text(), QString("deconvolution"));
    QVERIFY(cellNumber(panel, 1, TimingPanel::CpuMs) >= 60.0);
    QVERIFY(panel.table()->item(1, TimingPanel::CpuMs)->text().endsWith("(3)"));
    QVERIFY(cellNumber(panel, 2, TimingPanel::CpuMs) >= 60.0);  // total
    QVERIFY(panel.rows()[1].cpuMs >= 60.0);
    QVERIFY(std::isnan(panel.rows()[1].gpuKernelMs));  // no GPU in this run
    QCOMPARE(panel.table()->item(1, TimingPanel::GpuKernelMs)->text(), QString("—"));
    QVERIFY(panel.asText().contains("Fake CPU"));
  }

  // The live GPU path leaves the result on the device: the summary says what the total holds.
  void liveGpuSummarySaysWhatTheTotalIncludes() {
    auto r = std::make_shared<ui::ProcessingResult>();
    r->z = 4;
    r->result.backend = "cuda";
    r->result.readMs = 2.5;
    r->result.uploadMs = 0.75;
    compute::StageTiming t;
    t.stage = compute::Stage::Deconvolution;
    t.computeMs = 7.25;
    r->result.timings.push_back(t);
    r->result.totalMs = 10.5;
    TimingPanel panel;
    panel.showResult(r);
    QVERIFY(panel.summary().contains("waiting for the file 2.50 ms"));
    QVERIFY(panel.summary().contains("upload 0.75 ms"));
    QVERIFY(panel.summary().contains("no download"));
    QCOMPARE(cellNumber(panel, 1, TimingPanel::GpuTotalMs), 10.5);
    r->result.downloadMs = 1.25;  // the host path (no interop)
    panel.showResult(r);
    QVERIFY(panel.summary().contains("download 1.25 ms"));
  }

  void compareShowsKernelTransfersSpeedupsAndDifferences() {
    auto cpu = std::make_shared<FakeBackend>(false, 2);
    auto gpu = std::make_shared<FakeBackend>(true);
    cpu->iterationSleepMs = 15;  // 2 iterations: ≥ 30 ms on the "CPU"
    gpu->uploadSleepMs = 10;
    gpu->downloadSleepMs = 10;
    gpu->reportedDeviceMs = 0.5;
    gpu->blurOffset = 0.25f;
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(3, 8, 8));
    worker.setBackends(cpu, gpu);
    worker.setMode(ProcessingWorker::Mode::Compare);
    compute::Pipeline p;
    p.blur.enabled = true;
    p.deconvolution.enabled = true;
    p.deconvolution.params.iterations = 2;
    worker.setPipeline(p);
    const ProcessingResultPtr r = runOnce(worker, 1);
    QVERIFY(r);
    TimingPanel panel;
    panel.showResult(r);
    const auto& rows = panel.rows();
    QCOMPARE(rows.size(), size_t(3));
    const ui::TimingRow& rl = rows[1];
    QVERIFY(rl.cpuMs >= 30.0);
    QCOMPARE(rl.gpuKernelMs, 0.5);  // the device time the backend reported
    QVERIFY(rl.gpuKernelFromDevice);
    // Upload of image and PSF, download of the result: ≥ 30 ms on top of the kernel.
    QVERIFY(rl.gpuTotalMs >= 30.0);
    QCOMPARE(rl.speedupKernel, rl.cpuMs / 0.5);
    QCOMPARE(rl.speedupTotal, rl.cpuMs / rl.gpuTotalMs);
    QCOMPARE(rows[0].maxAbs, 0.25);  // blur differs by exactly the offset
    QVERIFY(rows[0].relL2 > 0);
    QCOMPARE(rows[1].maxAbs, 0.25);  // and it carries through deconvolution
    QCOMPARE(cellNumber(panel, 1, TimingPanel::GpuKernelMs), 0.5);
    // A second CPU-like backend is named as a stand-in, not as a GPU.
    QVERIFY(panel.asText().contains("standing in"));
  }

  void benchmarkButtonRunsRepeatsAndShowsMedians() {
    auto backend = std::make_shared<FakeBackend>();
    backend->iterationSleepMs = 5;
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(2, 8, 8));
    worker.setBackends(backend);
    compute::Pipeline p;
    p.deconvolution.enabled = true;
    p.deconvolution.params.iterations = 2;
    worker.setPipeline(p);
    TimingPanel panel;
    QSignalSpy done(&worker, &ProcessingWorker::benchmarkReady);
    connect(&panel, &TimingPanel::benchmarkRequested, &worker,
            [&worker](int repeats) { worker.benchmark(0, repeats); });
    connect(&worker, &ProcessingWorker::benchmarkReady, &panel, &TimingPanel::showResult);
    panel.repeatsBox()->setValue(3);
    panel.benchmarkButton()->click();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 10000);
    QCOMPARE(backend->iterationsRun.load(), (1 + 3) * 2);  // warm-up + 3 runs
    QVERIFY(panel.summary().contains("medians of 3 runs"));
    QVERIFY(panel.rows()[0].cpuMs >= 10.0);
  }

  void exportsCsvAtomicallyAndReportsFailure() {
    auto backend = std::make_shared<FakeBackend>();
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(2, 4, 4));
    worker.setBackends(backend);
    compute::Pipeline p;
    p.blur.enabled = true;
    p.median.enabled = true;
    worker.setPipeline(p);
    TimingPanel panel;
    panel.showResult(runOnce(worker, 0));
    QTemporaryDir dir;
    const QString path = dir.filePath("timings.csv");
    QString error;
    QVERIFY2(panel.exportCsv(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(file.readAll()).trimmed().split('\n');
    QCOMPARE(lines.size(), 4);  // header, median, blur, total
    QVERIFY(lines[0].startsWith("stage,cpu_ms,cpu_threads,gpu_kernel_ms"));
    QVERIFY(lines[1].startsWith("median,"));
    QCOMPARE(lines[1].split(',').size(), lines[0].split(',').size());
    QCOMPARE(lines[1].split(',')[1].toDouble(), panel.rows()[0].cpuMs);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);  // no temporary left behind
    QVERIFY(!panel.exportCsv(dir.filePath("missing/dir/t.csv"), &error));
    QVERIFY(error.contains("missing/dir/t.csv"));
  }
};

QTEST_MAIN(TimingPanelTest)
#include "timing_panel_qtest.moc"
