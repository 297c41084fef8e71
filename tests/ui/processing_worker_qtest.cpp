// The processing worker: newest request wins under a slider storm, stale jobs are cancelled,
// the cache stays within its byte budget, neighbours are prefetched, slow jobs report progress.
#include <QApplication>
#include <QSignalSpy>
#include <QSlider>
#include <QtTest>

#include "tests/compute/fake_backend.h"
#include "tests/ui/memory_stack.h"
#include "ui/live/processing_worker.h"

using namespace stacklens;
using stacklens::testing::FakeBackend;
using stacklens::testing::MemoryStack;
using ui::ProcessingResultPtr;
using ui::ProcessingWorker;

namespace {

compute::Pipeline deconvolution(int iterations) {
  compute::Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = iterations;
  return p;
}

ProcessingResultPtr lastResult(const QSignalSpy& spy) {
  return spy.last().at(0).value<ProcessingResultPtr>();
}

}  // namespace

class ProcessingWorkerTest : public QObject {
  Q_OBJECT
 private slots:
  void sliderStormLeavesOneResult() {
    auto backend = std::make_shared<FakeBackend>();
    // Jobs of half a second: the storm ends within the first job even on a loaded machine.
    backend->iterationSleepMs = 20;
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(40, 8, 8));
    worker.setBackends(backend);
    worker.setPipeline(deconvolution(25));
    worker.setPrefetchRadius(0);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    QSignalSpy failures(&worker, &ProcessingWorker::failed);

    QSlider slider(Qt::Horizontal);
    slider.setRange(0, 39);
    connect(&slider, &QSlider::valueChanged, &worker, [&worker](int z) { worker.request(z); });
    for (int i = 1; i <= 1000; ++i) slider.setValue((i * 7) % 40);
    const int finalZ = (1000 * 7) % 40;

    QTRY_COMPARE_WITH_TIMEOUT(results.count(), 1, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(!worker.busy(), 30000);
    QTest::qWait(50);  // nothing else may arrive
    QCOMPARE(results.count(), 1);
    QCOMPARE(failures.count(), 0);
    const ProcessingResultPtr r = lastResult(results);
    QCOMPARE(r->z, finalZ);
    QCOMPARE(r->result.image.at(0, 1, 2), float(100 * finalZ + 12));
    // The storm never queued a thousand jobs: at most the one running when it began, the newest.
    QVERIFY2(worker.jobsStarted() <= 2, qPrintable(QString::number(worker.jobsStarted())));
    QVERIFY(backend->iterationsRun.load() < worker.jobsStarted() * 25 + 1);
  }

  void stormWithEventsStillEndsOnTheNewestSlice() {
    auto backend = std::make_shared<FakeBackend>();
    backend->iterationSleepMs = 1;
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(30, 4, 4));
    worker.setBackends(backend);
    worker.setPipeline(deconvolution(10));
    worker.setPrefetchRadius(0);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    quint64 last = 0;
    for (int i = 0; i < 300; ++i) {
      last = worker.request(i % 30);
      if (i % 10 == 0) QCoreApplication::processEvents();
    }
    QTRY_VERIFY_WITH_TIMEOUT(!results.isEmpty() && lastResult(results)->generation == last, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!worker.busy(), 10000);
    QCOMPARE(lastResult(results)->z, 299 % 30);
    // Every delivered result answered the newest request at the time it arrived: generations rise.
    for (int i = 1; i < results.count(); ++i)
      QVERIFY(results.at(i).at(0).value<ProcessingResultPtr>()->generation >
              results.at(i - 1).at(0).value<ProcessingResultPtr>()->generation);
  }

  void cacheServesRepeatsWithoutRecomputing() {
    auto backend = std::make_shared<FakeBackend>();
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(10, 8, 8));
    worker.setBackends(backend);
    worker.setPipeline(deconvolution(2));
    worker.setPrefetchRadius(0);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    worker.request(3);
    QTRY_COMPARE(results.count(), 1);
    worker.request(5);
    QTRY_COMPARE(results.count(), 2);
    const int calls = backend->opCalls.load();
    worker.request(3);
    QTRY_COMPARE(results.count(), 3);
    QVERIFY(lastResult(results)->fromCache);
    QCOMPARE(lastResult(results)->z, 3);
    QCOMPARE(backend->opCalls.load(), calls);
    // A different pipeline is a different result.
    worker.setPipeline(deconvolution(3));
    QVERIFY(!worker.cached(3));
    worker.request(3);
    QTRY_COMPARE(results.count(), 4);
    QVERIFY(!lastResult(results)->fromCache);
    QCOMPARE(backend->opCalls.load(), calls + 1);
  }

  // A cached result is delivered through the event loop; a new stack set before it arrives
  // makes it stale: it must not reach the viewer as a slice of the new stack.
  void aNewSourceDropsQueuedResults() {
    auto backend = std::make_shared<FakeBackend>();
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(10, 8, 8));
    worker.setBackends(backend);
    worker.setPipeline(deconvolution(2));
    worker.setPrefetchRadius(0);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    worker.request(3);
    QTRY_COMPARE(results.count(), 1);
    worker.request(3);  // served from the cache, queued
    worker.setSource(std::make_shared<MemoryStack>(10, 8, 8));
    QTest::qWait(50);
    QCOMPARE(results.count(), 1);
  }

  void cacheStaysWithinItsByteBudget() {
    auto backend = std::make_shared<FakeBackend>();
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(12, 16, 16));
    worker.setBackends(backend);
    worker.setPipeline(deconvolution(1));
    worker.setPrefetchRadius(0);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    worker.request(0);
    QTRY_COMPARE(results.count(), 1);
    const size_t one = lastResult(results)->bytes();
    QVERIFY(one >= 16 * 16 * sizeof(float));
    worker.setCacheBudget(3 * one + one / 2);  // room for three results
    for (int z = 1; z < 12; ++z) {
      worker.request(z);
      QTRY_COMPARE(results.count(), z + 1);
      QVERIFY(worker.cacheBytes() <= 3 * one + one / 2);
    }
    QCOMPARE(worker.cacheEntries(), 3);
    QVERIFY(worker.cached(11) && worker.cached(10) && worker.cached(9));
    QVERIFY(!worker.cached(8) && !worker.cached(0));
    worker.setCacheBudget(0);
    QCOMPARE(worker.cacheEntries(), 0);
    QCOMPARE(worker.cacheBytes(), size_t(0));
  }

  void prefetchesNeighboursWhenIdle() {
    auto backend = std::make_shared<FakeBackend>();
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(10, 4, 4));
    worker.setBackends(backend);
    worker.setPipeline(deconvolution(1));
    worker.setPrefetchRadius(2);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    worker.request(9);  // the last slice: neighbours only below
    QTRY_VERIFY(worker.cached(8) && worker.cached(7));
    QTRY_VERIFY(!worker.busy());
    QCOMPARE(worker.cacheEntries(), 3);
    QCOMPARE(results.count(), 1);  // prefetches are not delivered
    worker.request(8);
    QTRY_COMPARE(results.count(), 2);
    QVERIFY(lastResult(results)->fromCache);
  }

  // Stepping through adjacent slices prefetches only ahead; a jump prefetches both sides.
  void steppingPrefetchesOnlyAhead() {
    auto backend = std::make_shared<FakeBackend>();
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(10, 4, 4));
    worker.setBackends(backend);
    worker.setPipeline(deconvolution(1));
    worker.setPrefetchRadius(1);
    worker.setCacheBudget(0);  // nothing is kept: every prefetch is a job
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    worker.request(5);  // a jump: 6 and 4 are prefetched
    QTRY_COMPARE(results.count(), 1);
    QTRY_VERIFY(!worker.busy());
    QCOMPARE(worker.jobsStarted(), 3);
    worker.request(6);  // one step up: only 7 is prefetched, not 5 again
    QTRY_COMPARE(results.count(), 2);
    QTRY_VERIFY(!worker.busy());
    QCOMPARE(worker.jobsStarted(), 5);
    worker.request(2);  // a jump again: 3 and 1
    QTRY_COMPARE(results.count(), 3);
    QTRY_VERIFY(!worker.busy());
    QCOMPARE(worker.jobsStarted(), 8);
  }

  void slowJobsReportProgressAndCanBeCancelled() {
    auto backend = std::make_shared<FakeBackend>();
    backend->iterationSleepMs = 5;
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(4, 4, 4));
    worker.setBackends(backend);
    worker.setPipeline(deconvolution(400));  // ≥ 2 s
    worker.setPrefetchRadius(0);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    QSignalSpy progress(&worker, &ProcessingWorker::progress);
    const quint64 generation = worker.request(1);
    QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), 30000);
    QCOMPARE(progress.first().at(0).toULongLong(), generation);
    const double fraction = progress.last().at(1).toDouble();
    QVERIFY(fraction > 0 && fraction < 1);
    worker.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!worker.busy(), 30000);
    QCOMPARE(worker.jobsCancelled(), 1);
    QVERIFY(backend->iterationsRun.load() < 400);
    QCOMPARE(results.count(), 0);

    // A fast job says nothing about progress.
    progress.clear();
    worker.setPipeline(deconvolution(1));
    worker.request(2);
    QTRY_COMPARE(results.count(), 1);
    QCOMPARE(progress.count(), 0);
  }

  void compareModeReportsBothBackendsAndTheirDifference() {
    auto a = std::make_shared<FakeBackend>(false, 2);
    auto b = std::make_shared<FakeBackend>(true);
    b->blurOffset = 0.25f;
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(3, 4, 4));
    worker.setBackends(a, b);
    worker.setMode(ProcessingWorker::Mode::Compare);
    compute::Pipeline p;
    p.blur.enabled = true;
    worker.setPipeline(p);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    worker.request(1);
    QTRY_COMPARE(results.count(), 1);
    const ProcessingResultPtr r = lastResult(results);
    QVERIFY(r->comparison.has_value());
    QCOMPARE(r->comparison->differences.size(), size_t(1));
    QCOMPARE(r->comparison->differences[0].maxAbs, 0.25);
    QCOMPARE(r->comparison->b.backend, std::string("fake-gpu"));
    QVERIFY(r->comparison->b.timings[0].withTransfersMs >= r->comparison->b.timings[0].computeMs);
  }

  void compareModeWithTwoCpuBackendsStandingIn() {
    // No GPU here: two CPU backends with different thread counts must agree closely.
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(3, 32, 32));
    worker.setBackends(compute::makeCpuBackend(1), compute::makeCpuBackend(2));
    worker.setMode(ProcessingWorker::Mode::Compare);
    compute::Pipeline p;
    p.blur.enabled = true;
    p.statistics.enabled = true;
    worker.setPipeline(p);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    QSignalSpy failures(&worker, &ProcessingWorker::failed);
    worker.request(1);
    QTRY_VERIFY_WITH_TIMEOUT(results.count() + failures.count() == 1, 10000);
    if (!failures.isEmpty()) QFAIL(qPrintable(failures.first().at(2).toString()));
    const ProcessingResultPtr r = lastResult(results);
    QVERIFY(r->comparison.has_value());
    QCOMPARE(r->comparison->differences.size(), size_t(2));
    for (const auto& d : r->comparison->differences) QVERIFY(d.relL2 < 1e-5);
    QCOMPARE(r->comparison->a.threads, 1);
    QCOMPARE(r->comparison->b.threads, 2);
  }

  void errorsAreReportedNotCrashed() {
    ProcessingWorker worker;
    worker.setPrefetchRadius(0);
    QSignalSpy failures(&worker, &ProcessingWorker::failed);
    worker.request(0);  // nothing open
    QTRY_COMPARE(failures.count(), 1);
    QVERIFY(failures.last().at(2).toString().contains("no stack"));
    worker.setSource(std::make_shared<MemoryStack>(2, 4, 4));
    worker.request(0);  // no backend
    QTRY_COMPARE(failures.count(), 2);
    QVERIFY(failures.last().at(2).toString().contains("backend"));
    worker.setBackends(std::make_shared<FakeBackend>());
    worker.request(5);  // outside the stack
    QTRY_COMPARE(failures.count(), 3);
    QVERIFY(failures.last().at(2).toString().contains("outside"));
    compute::Pipeline bad;
    bad.median.enabled = true;
    bad.median.size = 2;
    worker.setPipeline(bad);
    worker.request(1);
    QTRY_COMPARE(failures.count(), 4);
    QVERIFY(failures.last().at(2).toString().contains("median"));
  }

  // The GPU path with interop: the result stays on the device (cache included) and the frame
  // needs no download; the host pixels for the readout follow after the result.
  void deviceResultsStayOnTheDeviceWithInterop() {
    auto gpu = std::make_shared<FakeBackend>(true);
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(6, 8, 8));
    worker.setBackends(gpu);
    worker.setPipeline(deconvolution(1));  // the fake 2D RL leaves the slice as it is
    worker.setPrefetchRadius(0);
    worker.setTextureInterop(true);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    QSignalSpy pixels(&worker, &ProcessingWorker::processedPixelsReady);
    worker.request(3);
    QTRY_COMPARE(results.count(), 1);
    ProcessingResultPtr r = lastResult(results);
    QCOMPARE(r->result.image.location(), compute::Location::Cuda);
    QVERIFY(r->pixels == nullptr);
    QCOMPARE(r->result.downloadMs, 0.0);
    QCOMPARE(r->displayLow, 300.f);  // from rows sampled on the device: values 300 ... 377
    QVERIFY(r->displayHigh > 370.f && r->displayHigh <= 377.f);
    QCOMPARE(r->raw.at(0, 1, 2), 312.f);
    QCOMPARE(worker.cacheDeviceBytes(), size_t(8 * 8 * sizeof(float)));
    QTRY_COMPARE(pixels.count(), 1);
    QCOMPARE(pixels.first().at(0).toInt(), 3);
    const auto host = pixels.first().at(1).value<std::shared_ptr<const std::vector<float>>>();
    QCOMPARE((*host)[1 * 8 + 2], 312.f);
    // The cached result has them now: a repeat is served with pixels and without a job.
    const int jobs = worker.jobsStarted();
    worker.request(3);
    QTRY_COMPARE(results.count(), 2);
    r = lastResult(results);
    QVERIFY(r->fromCache);
    QVERIFY(r->pixels != nullptr);
    QCOMPARE(r->result.image.location(), compute::Location::Cuda);
    QCOMPARE(worker.jobsStarted(), jobs);
  }

  // Without interop (Mesa): one download by the job, into the pixels the view will upload; the
  // cache still keeps the device buffer.
  void withoutInteropTheJobDownloadsOnce() {
    auto gpu = std::make_shared<FakeBackend>(true);
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(4, 8, 8));
    worker.setBackends(gpu);
    worker.setPipeline(deconvolution(1));
    worker.setPrefetchRadius(0);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    QSignalSpy pixels(&worker, &ProcessingWorker::processedPixelsReady);
    worker.request(2);
    QTRY_COMPARE(results.count(), 1);
    const ProcessingResultPtr r = lastResult(results);
    QCOMPARE(r->result.image.location(), compute::Location::Cuda);
    QVERIFY(r->pixels != nullptr);
    QCOMPARE((*r->pixels)[7 * 8 + 7], 277.f);
    QVERIFY(r->result.downloadMs > 0);
    QCOMPARE(r->bytes(), r->raw.bytes() + 256 + 2 * 8 * 8 * sizeof(float));  // device + pixels
    QTest::qWait(20);
    QCOMPARE(pixels.count(), 0);
  }

  void deviceCacheIsEvictedByBytes() {
    auto gpu = std::make_shared<FakeBackend>(true);
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(8, 16, 16));
    worker.setBackends(gpu);
    worker.setPipeline(deconvolution(1));
    worker.setPrefetchRadius(0);
    worker.setTextureInterop(true);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    QSignalSpy pixels(&worker, &ProcessingWorker::processedPixelsReady);
    worker.request(0);
    QTRY_COMPARE(results.count(), 1);
    QTRY_COMPARE(pixels.count(), 1);  // the host pixels attach to the cached result at rest
    const size_t one = worker.cacheBytes();
    worker.setCacheBudget(2 * one + one / 2);
    for (int z = 1; z < 8; ++z) {
      worker.request(z);
      QTRY_COMPARE(results.count(), z + 1);
      QVERIFY(worker.cacheBytes() <= 2 * one + one / 2);
      QTRY_COMPARE(pixels.count(), z + 1);  // every entry full size: at most two fit
      QVERIFY(worker.cacheBytes() <= 2 * one + one / 2);
    }
    QTRY_VERIFY(!worker.busy());
    QVERIFY(worker.cacheEntries() <= 2);
    QVERIFY(worker.cached(7));
    QVERIFY(!worker.cached(0) && !worker.cached(4));
    QVERIFY(worker.cacheDeviceBytes() <= 2 * 16 * 16 * sizeof(float));
    QVERIFY(worker.cacheDeviceBytes() >= 16 * 16 * sizeof(float));
  }

  // Raw slices are read once and kept on the backend across pipeline changes.
  void rawSlicesAreReadOnceAcrossPipelineChanges() {
    auto gpu = std::make_shared<FakeBackend>(true);
    ProcessingWorker worker;
    worker.setSource(std::make_shared<MemoryStack>(4, 8, 8));
    worker.setBackends(gpu);
    worker.setPipeline(deconvolution(1));
    worker.setPrefetchRadius(0);
    QSignalSpy results(&worker, &ProcessingWorker::resultReady);
    worker.request(1);
    QTRY_COMPARE(results.count(), 1);
    worker.setPipeline(deconvolution(2));
    worker.request(1);
    QTRY_COMPARE(results.count(), 2);
    QVERIFY(!lastResult(results)->fromCache);
    QVERIFY(worker.liveProcessor() != nullptr);
    QCOMPARE(worker.liveProcessor()->fileReads(), 1);
    QVERIFY(worker.liveProcessor()->onBackend(1));
  }

  void destroyingWhileBusyIsSafe() {
    auto backend = std::make_shared<FakeBackend>();
    backend->iterationSleepMs = 1;
    {
      ProcessingWorker worker;
      worker.setSource(std::make_shared<MemoryStack>(4, 4, 4));
      worker.setBackends(backend);
      worker.setPipeline(deconvolution(100000));
      worker.request(0);
      QTRY_VERIFY(backend->iterationsRun.load() > 0);
    }
    QVERIFY(backend->iterationsRun.load() < 100000);
  }
};

QTEST_MAIN(ProcessingWorkerTest)
#include "processing_worker_qtest.moc"
