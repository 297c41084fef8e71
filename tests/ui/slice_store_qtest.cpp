// The window's one store of raw slices: the viewer and the live processing take their slices from
// it, so each slice is read from the file once, and their host and device copies stay within the
// one budget.
#include <QSignalSpy>
#include <QtTest>

#include "tests/compute/fake_backend.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/memory_stack.h"
#include "ui/frame/main_window.h"
#include "ui/live/live_processing.h"

using namespace stacklens;
using stacklens::testing::FakeBackend;
using stacklens::testing::MemoryStack;

class SliceStoreTest : public QObject {
  Q_OBJECT
 private slots:
  void viewerAndProcessingReadEachSliceOnceWithinOneBudget() {
    constexpr int64_t kZ = 6, kY = 12, kX = 16;
    constexpr size_t kSlice = kY * kX * sizeof(float);
    for (const size_t budget : {2 * kZ * kSlice, 5 * kSlice}) {
      ui::MainWindow w;
      w.setQuiet(true);
      w.slicePath()->setRawSliceBudget(budget);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      auto stack = std::make_shared<MemoryStack>(kZ, kY, kX);
      w.openReader(stack);
      ui::LiveProcessing* live = w.tool<ui::LiveProcessing>();
      QCOMPARE(live->worker()->slices().get(), w.slicePath()->slices());
      auto gpu = std::make_shared<FakeBackend>(true);
      gpu->blurOffset = 5000.f;
      live->worker()->setBackends(gpu);
      compute::Pipeline p;
      p.blur.enabled = true;
      live->dock()->setPipeline(p);
      QSignalSpy ready(live, &ui::LiveProcessing::processedSliceReady);
      for (int z : {0, 1, 2, 3, 4, 5, 4, 3, 2}) {
        ready.clear();
        w.navigation()->slider()->setValue(z);
        QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() && ready.last().at(0).toInt() == z, 10000);
        // The processed slice is the stack's slice (100 z + 10 y + x) plus the fake blur's 5010.
        const auto pixels = ready.last().at(1).value<std::shared_ptr<const std::vector<float>>>();
        QCOMPARE((*pixels)[7 * kX + 5], float(100 * z + 70 + 5 + 5010));
        QVERIFY2(
            w.slicePath()->slices()->bytes() <= budget,
            qPrintable(QString("%1 > %2 bytes").arg(w.slicePath()->slices()->bytes()).arg(budget)));
      }
      QVERIFY(w.slicePath()->slices()->deviceBytes() < w.slicePath()->slices()->bytes());
      if (budget >= 2 * kZ * kSlice) {
        // The processing's uploads are in the same store, and with room for all they stay.
        QVERIFY(w.slicePath()->slices()->deviceBytes() > 0);
        QCOMPARE(stack->reads.load(), int(kZ));  // viewer and processing: each slice once
      } else {
        // Too small a budget: uploads go first (the slices read ahead push them out), and
        // slices come back.
        QVERIFY(stack->reads.load() > int(kZ));
      }
    }
  }
};

STACKLENS_GL_QTEST_MAIN(SliceStoreTest)

#include "slice_store_qtest.moc"
