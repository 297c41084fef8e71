// SliceView's swipe comparison: left of the divider the slice, right of it the second plane
// (read back from the framebuffer), a line on the divider, and a drag that moves it.
#include <QSignalSpy>
#include <QtTest>
#include <memory>
#include <vector>

#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"

using stacklens::render::SliceView;

class SwipeTest : public QObject {
  Q_OBJECT
 private slots:
  void showsEachPlaneOnItsSideAndTheDividerMoves() {
    constexpr int kW = 64, kH = 32, kZoom = 4;
    std::vector<float> dark(kW * kH, 0.f);
    auto grey = std::make_shared<std::vector<float>>(kW * kH, 0.5f);
    SliceView view;
    view.resize(kW * kZoom, kH * kZoom);
    view.setSlice(dark.data(), kW, kH);
    view.setLimits(0.f, 1.f);
    view.setSwipe(grey, 20);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.zoom(), double(kZoom));
    auto columnGray = [&](const QImage& frame, int imageX) {
      return qGray(frame.pixel(imageX * kZoom + kZoom / 2, kH * kZoom / 2 + 7));
    };
    QImage frame = view.grabFramebuffer();
    QVERIFY(columnGray(frame, 10) < 10);  // the slice
    QVERIFY(columnGray(frame, 19) < 10);
    auto isGrey = [](int g) { return g > 100 && g < 160; };
    QVERIFY(isGrey(columnGray(frame, 21)));  // the second plane
    QVERIFY(isGrey(columnGray(frame, 60)));
    // A white line on the divider (image x 20, the middle of pixel 20).
    const int lineX = int(view.imageToWidget({20, 0}).x());
    QVERIFY(qGray(frame.pixel(lineX, 5)) > 200 || qGray(frame.pixel(lineX - 1, 5)) > 200);

    QSignalSpy moved(&view, &SliceView::dividerMoved);
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(lineX, 60));
    QTest::mouseMove(&view, QPoint(40 * kZoom, 60));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(40 * kZoom, 60));
    QVERIFY(moved.count() >= 1);
    QVERIFY(std::abs(*view.divider() - 39.5) < 0.6);
    frame = view.grabFramebuffer();
    QVERIFY(columnGray(frame, 30) < 10);  // now left of the divider
    QVERIFY(isGrey(columnGray(frame, 45)));

    view.clearSwipe();
    QVERIFY(!view.divider());
    frame = view.grabFramebuffer();
    QVERIFY(columnGray(frame, 45) < 10);
  }
};

STACKLENS_GL_QTEST_MAIN(SwipeTest)
#include "swipe_qtest.moc"
