// Live processing in a window: slider requests reach the worker only when a stage is enabled,
// results reach the view, the timing and sources panels, and configure() refuses bad options.
#include <QApplication>
#include <QMainWindow>
#include <QSignalSpy>
#include <QSurfaceFormat>
#include <QWheelEvent>
#include <QtTest>

#include "tests/compute/fake_backend.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/memory_stack.h"
#include "ui/live/live_processing.h"

using namespace stacklens;
using stacklens::testing::FakeBackend;
using stacklens::testing::MemoryStack;
using ui::LiveProcessing;
using ui::ProcessingDock;

// A main window with the processing view as its central widget, and live processing on it.
struct LiveWindow {
  QMainWindow window;
  render::SliceView* view;
  LiveProcessing live;
  explicit LiveWindow(QSize size) : view(centralView(window)), live(&window, view) {
    window.resize(size);
    window.show();
  }
  static render::SliceView* centralView(QMainWindow& w) {
    QWidget* holder = nullptr;
    auto* v = LiveProcessing::createView(&w, &holder);
    w.setCentralWidget(holder);
    return v;
  }
};

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

  // Side by side: zoom and pan in either view move both (the same image point at their centres);
  // Blink's rate follows the dock.
  void sideBySideViewsMoveTogetherAndBlinkFollowsTheDock() {
    QMainWindow window;
    QWidget* holder = nullptr;
    auto* view = LiveProcessing::createView(&window, &holder);
    window.setCentralWidget(holder);
    window.resize(640, 400);
    LiveProcessing live(&window, view);
    live.setStack(std::make_shared<MemoryStack>(5, 64, 64));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    live.dock()->setViewMode(ProcessingDock::ViewMode::Split);
    render::SliceView* other = live.processedView();
    view->setZoom(3.0);
    QCOMPARE(other->zoom(), 3.0);
    QCOMPARE(other->centre(), view->centre());
    // A wheel turn over the processed view (showing a slice) zooms the main view about the same
    // image point.
    const std::vector<float> slice(64 * 64, 1.f);
    other->setSlice(slice.data(), 64, 64);
    const QPointF at(other->width() / 3.0, other->height() / 3.0);
    QWheelEvent wheel(at, other->mapToGlobal(at), {}, {0, 240}, Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(other, &wheel);
    QVERIFY(other->zoom() > 3.0);
    QCOMPARE(view->zoom(), other->zoom());
    QCOMPARE(view->centre(), other->centre());
    // Back to one view: the main view keeps its place; the link stays for the next time.
    live.dock()->setViewMode(ProcessingDock::ViewMode::Processed);
    view->fitToWindow();
    live.dock()->setViewMode(ProcessingDock::ViewMode::Split);
    QCOMPARE(other->zoom(), view->zoom());
    QCOMPARE(live.blinkIntervalMs(), 500);
    live.dock()->blinkBox()->setValue(150);
    QCOMPARE(live.blinkIntervalMs(), 150);
  }

  // Swipe: the main view holds the raw slice with the processed one right of a divider in its
  // middle; Difference: beside it, processed − raw with limits symmetric about 0.
  void swipeAndDifferenceShowRawAgainstProcessed() {
    LiveWindow w(QSize(640, 400));
    render::SliceView* view = w.view;
    LiveProcessing& live = w.live;
    auto stack = std::make_shared<MemoryStack>(5, 16, 20);
    live.setStack(stack);
    QVERIFY(QTest::qWaitForWindowExposed(&w.window));
    std::vector<float> raw(16 * 20);
    stack->readSlice(2, raw.data());
    view->setSlice(raw.data(), 20, 16);  // as the window shows the slice it read
    live.dock()->setViewMode(ProcessingDock::ViewMode::Swipe);
    QSignalSpy ready(&live, &LiveProcessing::processedSliceReady);
    live.sliceRequested(2);
    compute::Pipeline p;
    p.blur.enabled = true;
    p.blur.params.sigmaY = p.blur.params.sigmaX = 1.5;
    live.dock()->setPipeline(p);
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 10000);
    const auto processed = ready.first().at(1).value<std::shared_ptr<const std::vector<float>>>();
    QTRY_VERIFY(view->divider().has_value());
    QCOMPARE(*view->divider(), 9.5);
    QCOMPARE(*view->slice(), raw);  // the raw slice, the processed one as the swipe's second

    QSignalSpy difference(&live, &LiveProcessing::differenceShown);
    live.dock()->setViewMode(ProcessingDock::ViewMode::Difference);
    QVERIFY(!view->divider());
    QVERIFY(difference.count() > 0 || difference.wait(10000));
    render::SliceView* other = live.processedView();
    QVERIFY(other->isVisible());
    const std::vector<float>& d = *other->slice();
    QCOMPARE(d.size(), raw.size());
    float most = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      QCOMPARE(d[i], (*processed)[i] - raw[i]);
      most = std::max(most, std::fabs(d[i]));
    }
    QVERIFY(most > 0);
    QCOMPARE(other->display().limits.low, -most);
    QCOMPARE(other->display().limits.high, most);
  }

  // Compare mode: the swipe puts one backend's result left of the divider and the other's right.
  void swipeComparesTheTwoBackends() {
    LiveWindow w(QSize(400, 400));
    render::SliceView* view = w.view;
    LiveProcessing& live = w.live;
    auto stack = std::make_shared<MemoryStack>(4, 16, 16);
    live.setStack(stack);
    auto first = std::make_shared<FakeBackend>(), second = std::make_shared<FakeBackend>();
    first->blurOffset = 5000.f;  // the primary's result: raw + 5010; the other's: raw + 10
    live.worker()->setBackends(first, second);
    live.worker()->setMode(ui::ProcessingWorker::Mode::Compare);
    live.dock()->setViewMode(ProcessingDock::ViewMode::Swipe);
    QSignalSpy presented(&live, &LiveProcessing::processedPresented);
    live.sliceRequested(1);
    compute::Pipeline p;
    p.blur.enabled = true;
    live.dock()->setPipeline(p);
    QTRY_VERIFY_WITH_TIMEOUT(!presented.isEmpty() && presented.last().at(0).toInt() == 1, 10000);
    QVERIFY(view->divider().has_value());
    std::vector<float> raw(16 * 16);
    stack->readSlice(1, raw.data());
    QVERIFY(view->slice());
    for (size_t i = 0; i < raw.size(); ++i) QCOMPARE((*view->slice())[i], raw[i] + 5010.f);
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

// Grey level of the view's centre pixel, as drawn (read back from the framebuffer).
static int centreGrey(render::SliceView* view) {
  const QImage image = view->grabFramebuffer();
  return qGray(image.pixel(image.width() / 2, image.height() / 2));
}

class RawHoldTest : public QObject {
  Q_OBJECT
 private slots:
  // In the Processed view, while results come quickly, the window's raw slice is not drawn
  // between two processed ones (no 16 MB upload and no flash of raw data per step); when a
  // result is late the raw slice is drawn after kRawHoldMs, then the result covers it.
  void rawSliceIsHeldWhileResultsAreQuick() {
    QMainWindow window;
    QWidget* holder = nullptr;
    auto* view = LiveProcessing::createView(&window, &holder);
    window.setCentralWidget(holder);
    window.resize(400, 400);
    window.show();
    LiveProcessing live(&window, view);
    // A hold of 3 s: the fake's results, however loaded the machine, come well within it (with
    // the viewer's 100 ms, a first result delayed by load already counted as late).
    live.setRawHoldMs(3000);
    auto stack = std::make_shared<MemoryStack>(6, 16, 16);
    live.setStack(stack);
    auto fake = std::make_shared<FakeBackend>();
    fake->blurOffset = 5000.f;  // processed values ≥ 5010, raw ones ≤ 565
    live.worker()->setBackends(fake);
    live.worker()->setPrefetchRadius(0);
    QSignalSpy presented(&live, &LiveProcessing::processedPresented);
    live.sliceRequested(1);
    compute::Pipeline p;
    p.blur.enabled = true;
    live.dock()->setPipeline(p);
    live.dock()->setViewMode(ProcessingDock::ViewMode::Processed);
    QTRY_VERIFY_WITH_TIMEOUT(!presented.isEmpty() && presented.last().at(0).toInt() == 1, 10000);
    view->setLimits(0.f, 1000.f);  // raw: dark grey; processed: white
    QCOMPARE(centreGrey(view), 255);

    auto raw = [&](int z) {
      auto pixels = std::make_shared<std::vector<float>>(16 * 16);
      stack->readSlice(z, pixels->data());
      return render::SliceData(pixels);
    };
    // A quick step: the raw slice waits, the processed slice 1 stays until 2 replaces it.
    live.sliceRequested(2);
    QVERIFY(live.holdRawSlice(2, raw(2), 16, 16));
    QCOMPARE(centreGrey(view), 255);
    QTRY_VERIFY_WITH_TIMEOUT(presented.last().at(0).toInt() == 2, 10000);
    QCOMPARE(centreGrey(view), 255);
    QCOMPARE((*view->slice())[8 * 16 + 8], 200.f + 88.f + 5010.f);

    // A late result: the raw slice appears after the hold, then the result covers it.
    // The upload sleeps long enough that the hold surely ends first, however loaded the machine.
    fake->uploadSleepMs = 9000;  // slice 3 is not on the backend yet: its upload sleeps
    live.sliceRequested(3);
    QVERIFY(live.holdRawSlice(3, raw(3), 16, 16));
    QTRY_VERIFY_WITH_TIMEOUT(view->slice() && (*view->slice())[8 * 16 + 8] == 388.f, 7000);
    QVERIFY(centreGrey(view) < 200);
    QTRY_VERIFY_WITH_TIMEOUT(presented.last().at(0).toInt() == 3, 30000);
    QCOMPARE(centreGrey(view), 255);

    // Slow results (the last one took longer than the hold): raw slices are drawn at once.
    fake->uploadSleepMs = 0;
    live.sliceRequested(4);
    QVERIFY(!live.holdRawSlice(4, raw(4), 16, 16));
    // Other view modes never hold.
    QTRY_VERIFY_WITH_TIMEOUT(presented.last().at(0).toInt() == 4, 10000);
    live.dock()->setViewMode(ProcessingDock::ViewMode::Split);
    live.sliceRequested(5);
    QVERIFY(!live.holdRawSlice(5, raw(5), 16, 16));
  }
};

int main(int argc, char** argv) {
  QSurfaceFormat format;
  format.setVersion(3, 3);
  format.setProfile(QSurfaceFormat::CoreProfile);
  QSurfaceFormat::setDefaultFormat(format);
  QApplication app(argc, argv);
  LiveProcessingTest live;
  RawHoldTest hold;
  return QTest::qExec(&live, argc, argv) | QTest::qExec(&hold, argc, argv);
}

#include "live_processing_qtest.moc"
