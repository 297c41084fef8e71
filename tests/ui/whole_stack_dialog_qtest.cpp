// File ▸ Process whole stack…: the job writes the deconvolved stack with its provenance, off the
// GUI thread; Cancel stops it and writes nothing; a failure is reported.
#include <QApplication>
#include <QElapsedTimer>
#include <QListWidget>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "compute/blocked/blocked_deconvolution.h"
#include "compute/pipeline.h"
#include "io/stack.h"
#include "tests/ui/memory_stack.h"
#include "ui/jobs/whole_stack_dialog.h"

using namespace stacklens;
using stacklens::testing::MemoryStack;
using ui::WholeStackDialog;
using ui::WholeStackRequest;

namespace {

WholeStackRequest request(std::shared_ptr<MemoryStack> stack, int iterations, const QString& out) {
  WholeStackRequest r;
  r.reader = std::move(stack);
  r.psf = compute::gaussianPsf(1.0, 1.0, 1.0);
  r.params.iterations = iterations;
  r.outPath = out.toStdString();
  return r;
}

std::unique_ptr<compute::Backend> oneThread() { return compute::makeCpuBackend(1); }

}  // namespace

class WholeStackDialogTest : public QObject {
  Q_OBJECT
 private slots:
  void writesTheDeconvolvedStackWithoutStallingTheGui() {
    QTemporaryDir dir;
    const QString out = dir.filePath("rl.fits");
    auto stack = std::make_shared<MemoryStack>(10, 24, 20);
    // Iterations enough for a job of a second or more: a GUI thread that waited for it would
    // stall that long, far beyond a loaded machine's scheduling delays.
    const int iterations = 400;
    WholeStackDialog dialog(request(stack, iterations, out), oneThread, "CPU");
    QSignalSpy finished(&dialog, &WholeStackDialog::finished);
    // The GUI thread keeps servicing its event loop while the job runs.
    QElapsedTimer clock;
    clock.start();
    qint64 last = 0, stall = 0;
    QTimer beat;
    beat.setInterval(1);
    connect(&beat, &QTimer::timeout, [&] {
      stall = std::max(stall, clock.elapsed() - last);
      last = clock.elapsed();
    });
    beat.start();
    const qint64 started = clock.elapsed();
    dialog.start();
    QVERIFY(dialog.running());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    const qint64 took = clock.elapsed() - started;
    beat.stop();
    QVERIFY2(stall < std::max<qint64>(took / 4, 250),
             qPrintable(QString("stalled %1 ms of a %2 ms job").arg(stall).arg(took)));
    QCOMPARE(finished.first().at(0).toString(), out);
    QCOMPARE(dialog.progressBar()->value(), 1000);
    QVERIFY(dialog.planLabel()->text().contains("blocks 1"));
    // The same values as the deconvolution run directly.
    compute::Image volume = compute::Image::host({10, 24, 20});
    for (int64_t z = 0; z < 10; ++z) stack->readSlice(z, volume.slice(z));
    compute::DeconvolveParams p;
    p.iterations = iterations;
    p.threeD = true;
    auto cpu = oneThread();
    const compute::Image want =
        cpu->download(cpu->richardsonLucy(volume, compute::gaussianPsf(1.0, 1.0, 1.0), p));
    auto written = io::openStack(out.toStdString());
    QCOMPARE(written->info().z, int64_t(10));
    std::vector<float> slice(24 * 20);
    for (int64_t z = 0; z < 10; ++z) {
      written->readSlice(z, slice.data());
      for (int64_t i = 0; i < 24 * 20; ++i) QCOMPARE(slice[size_t(i)], want.slice(z)[i]);
    }
    bool history = false;
    for (const auto& card : written->info().header)
      history = history || card.value.find("whole-stack richardson-lucy") != std::string::npos ||
                card.comment.find("whole-stack richardson-lucy") != std::string::npos;
    QVERIFY(history);
  }

  // The current pipeline at every slice: each written slice is what the viewer shows there (the
  // pipeline run on that slice here), and the sources go to a CSV table beside the stack.
  void writesThePipelineAtEverySliceWithItsSourceTable() {
    QTemporaryDir dir;
    const QString out = dir.filePath("processed.tif");
    auto stack = std::make_shared<MemoryStack>(5, 30, 26);
    compute::Pipeline pipeline;
    pipeline.blur.enabled = true;
    pipeline.blur.params.sigmaY = pipeline.blur.params.sigmaX = 1.5;
    pipeline.segmentation.enabled = true;
    pipeline.segmentation.params.nSigma = 1.0;
    WholeStackRequest r = request(stack, 3, out);
    r.pipeline = pipeline;
    WholeStackDialog dialog(r, oneThread, "CPU");
    QCOMPARE(dialog.operationBox()->currentIndex(), 0);
    QSignalSpy finished(&dialog, &WholeStackDialog::finished);
    dialog.start();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QVERIFY(dialog.planLabel()->text().contains("slice by slice"));
    auto written = io::openStack(out.toStdString());
    QCOMPARE(written->info().z, int64_t(5));
    auto cpu = oneThread();
    std::vector<float> slice(30 * 26);
    size_t sources = 0;
    for (int64_t z = 0; z < 5; ++z) {
      compute::Image raw = compute::Image::host({1, 30, 26});
      stack->readSlice(z, raw.data());
      const compute::PipelineResult want = compute::runPipeline(*cpu, raw, 0, pipeline);
      sources += want.segmentation->sources.size();
      written->readSlice(z, slice.data());
      for (int64_t i = 0; i < 30 * 26; ++i) QCOMPARE(slice[size_t(i)], want.image.data()[i]);
    }
    QVERIFY(sources > 0);
    QFile csv(QString::fromStdString(ui::sideTablePath(out.toStdString(), "sources")));
    QVERIFY(csv.fileName().endsWith("processed_sources.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
    QCOMPARE(size_t(lines.size()), sources + 1);
    QVERIFY(lines.first().endsWith(",z"));
  }

  // 3D RL can be chosen instead; without an enabled stage only it can run.
  void theOperationCanBeChosen() {
    auto stack = std::make_shared<MemoryStack>(4, 8, 8);
    WholeStackRequest r = request(stack, 2, "/tmp/x.fits");
    r.pipeline = compute::Pipeline{};
    WholeStackDialog dialog(r, oneThread, "CPU");
    QCOMPARE(dialog.operationBox()->currentIndex(), 1);
  }

  // On CUDA the dialog lists the GPUs, every one checked; 3D RL shares its blocks among those
  // checked, and a job with none is not started.
  void theGpusAreListedAndChosen() {
    auto stack = std::make_shared<MemoryStack>(4, 8, 8);
    WholeStackDialog cpu(request(stack, 2, "/tmp/x.fits"), oneThread, "CPU");
    QVERIFY(cpu.devicesList() == nullptr);
    QVERIFY(cpu.chosenDevices().empty());
    WholeStackDialog dialog(request(stack, 2, "/tmp/x.fits"), oneThread, "GPU (CUDA)", nullptr,
                            {"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA H200"});
    QListWidget* list = dialog.devicesList();
    QVERIFY(list != nullptr);
    QCOMPARE(list->count(), 3);
    QCOMPARE(list->item(2)->text(), QString("GPU 2: NVIDIA H200"));
    QCOMPARE(dialog.chosenDevices(), (std::vector<int>{0, 1, 2}));
    list->item(1)->setCheckState(Qt::Unchecked);
    QCOMPARE(dialog.chosenDevices(), (std::vector<int>{0, 2}));
    for (int i = 0; i < 3; ++i) list->item(i)->setCheckState(Qt::Unchecked);
    dialog.start();
    QVERIFY(!dialog.running());
    QCOMPARE(dialog.statusLabel()->text(), QString("Check at least one GPU."));
  }

  void cancelStopsAndWritesNothing() {
    QTemporaryDir dir;
    const QString out = dir.filePath("never.fits");
    WholeStackDialog dialog(request(std::make_shared<MemoryStack>(16, 64, 64), 100000, out),
                            oneThread, "CPU");
    QSignalSpy cancelled(&dialog, &WholeStackDialog::cancelled);
    dialog.start();
    QTest::qWait(200);
    dialog.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 10000);
    QVERIFY(!dialog.running());
    QVERIFY(!QFile::exists(out));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 0);  // no temporary file either
  }

  void aFailureIsReported() {
    WholeStackDialog dialog(
        request(std::make_shared<MemoryStack>(4, 8, 8), 2, "/no/such/folder/out.fits"), oneThread,
        "CPU");
    QSignalSpy failed(&dialog, &WholeStackDialog::failed);
    dialog.start();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QVERIFY(dialog.statusLabel()->text().contains("Failed"));
    QVERIFY(!dialog.running());
  }
};

QTEST_MAIN(WholeStackDialogTest)

#include "whole_stack_dialog_qtest.moc"
