// Live processing in a window: slider requests reach the worker only when a stage is enabled,
// results reach the view, the timing and sources panels, and configure() refuses bad options.
#include <QApplication>
#include <QMainWindow>
#include <QSignalSpy>
#include <QSurfaceFormat>
#include <QtTest>

#include "tests/render/gl_qtest_main.h"
#include "tests/ui/memory_stack.h"
#include "ui/live_processing.h"

using namespace stacklens;
using stacklens::testing::MemoryStack;
using ui::LiveProcessing;
using ui::ProcessingDock;

class LiveProcessingTest : public QObject {
  Q_OBJECT
 private slots:
  void idleUntilAStageIsEnabled() {
    QMainWindow window;
    QWidget* holder = nullptr;
    auto* view = LiveProcessing::createView(&window, &holder);
    window.setCentralWidget(holder);
    LiveProcessing live(&window, view);
    live.setStack(std::make_shared<MemoryStack>(5, 16, 16));
    QVERIFY(!live.active());
    live.sliceRequested(2);
    QTest::qWait(20);
    QCOMPARE(live.worker()->jobsStarted(), 0);
  }

  void resultsReachThePanelsAndTheReadout() {
    QMainWindow window;
    QWidget* holder = nullptr;
    auto* view = LiveProcessing::createView(&window, &holder);
    window.setCentralWidget(holder);
    LiveProcessing live(&window, view);
    live.setStack(std::make_shared<MemoryStack>(5, 16, 16));
    QSignalSpy ready(&live, &LiveProcessing::processedSliceReady);
    live.sliceRequested(3);
    compute::Pipeline p;
    p.statistics.enabled = true;
    live.dock()->setPipeline(p);  // enabling a stage processes the current slice
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 10000);
    QVERIFY(live.dock()->statusLabel()->text().isEmpty());
    QCOMPARE(ready.first().at(0).toInt(), 3);
    const auto pixels = ready.first().at(1).value<std::shared_ptr<const std::vector<float>>>();
    QCOMPARE(pixels->size(), size_t(16 * 16));
    QCOMPARE((*pixels)[17], 311.f);  // statistics do not change the image
    // The panels follow when the slider rests.
    QTRY_VERIFY(!live.timingPanel()->rows().empty());
    QCOMPARE(live.timingPanel()->rows().front().stage, QString("statistics"));
    QVERIFY(live.sourcesPanel()->background().contains("slice 3"));
  }

  void configureRefusesBadOptions() {
    QMainWindow window;
    QWidget* holder = nullptr;
    auto* view = LiveProcessing::createView(&window, &holder);
    LiveProcessing live(&window, view);
    QVERIFY(live.configure("nonsense", "cpu", 0, "", "").contains("unknown preset"));
    QVERIFY(live.configure("microscopy deconvolution", "tpu", 0, "", "").contains("backend"));
    QVERIFY(live.configure("microscopy deconvolution", "cpu", 0, "4d", "").contains("2d or 3d"));
    QVERIFY(live.configure("microscopy deconvolution", "cpu", 0, "", "/no/such/psf.tif")
                .contains("/no/such/psf.tif"));
    if (!compute::cudaUsable())
      QVERIFY(live.configure("microscopy deconvolution", "cuda", 0, "", "").contains("GPU"));
    QCOMPARE(live.configure("microscopy deconvolution", "cpu", 7, "2d", ""), QString());
    const compute::Pipeline p = live.dock()->pipeline();
    QVERIFY(p.deconvolution.enabled);
    QCOMPARE(p.deconvolution.params.iterations, 7);
    QVERIFY(!p.deconvolution.params.threeD);
    QVERIFY(live.active());
    QCOMPARE(live.dock()->viewMode(), ProcessingDock::ViewMode::Processed);
    QCOMPARE(live.configure("astronomy sources", "compare", 0, "", ""), QString());
    // The second backend is made off the GUI thread; Compare starts when it is ready.
    QTRY_COMPARE_WITH_TIMEOUT(live.worker()->mode(), ui::ProcessingWorker::Mode::Compare, 10000);
    QVERIFY(live.worker()->secondaryBackend() != nullptr);
  }

  // Compare mode must not stall the GUI thread: the second backend is made on another thread
  // (a CUDA context takes 100 ms or more), both pipelines run on the worker, and the result's
  // pixels reach the view without a copy on the GUI thread.
  void compareModeLeavesTheGuiThreadFree() {
    QMainWindow window;
    QWidget* holder = nullptr;
    auto* view = LiveProcessing::createView(&window, &holder);
    window.setCentralWidget(holder);
    window.show();
    LiveProcessing live(&window, view);
    live.setStack(std::make_shared<MemoryStack>(5, 32, 32));
    live.sliceRequested(2);
    QSignalSpy ready(&live, &LiveProcessing::backendsReady);
    QSignalSpy presented(&live, &LiveProcessing::processedPresented);
    QCOMPARE(live.configure("astronomy sources", "compare", 0, "", ""), QString());
    if (!ready.isEmpty()) QSKIP("the Compare backend existed already");
    // configure() returned before the backend was made: the GUI thread was not blocked on it.
    QVERIFY(live.backendsPending());
    QCOMPARE(live.worker()->mode(), ui::ProcessingWorker::Mode::Single);
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 10000);
    QVERIFY(!live.backendsPending());
    QCOMPARE(live.worker()->mode(), ui::ProcessingWorker::Mode::Compare);
    // The pending request is answered in Compare mode once the backends are in place.
    QTRY_VERIFY_WITH_TIMEOUT(live.lastResult() && live.lastResult()->comparison, 10000);
    const auto result = live.lastResult();
    QCOMPARE(result->z, 2);
    QVERIFY(result->pixels != nullptr);
    QVERIFY(view->slice().get() == result->pixels.get());  // shared, not copied
    QTRY_VERIFY_WITH_TIMEOUT(!presented.isEmpty(), 10000);
  }
};

STACKLENS_GL_QTEST_MAIN(LiveProcessingTest)

#include "live_processing_qtest.moc"
