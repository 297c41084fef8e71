// SliceView draws a slice through the upload path: a known ramp reads back as a grey ramp.
#include <QApplication>
#include <QImage>
#include <QSignalSpy>
#include <QSurfaceFormat>
#include <QtTest>
#include <vector>

#include "render/slice_view.h"

class SliceViewTest : public QObject {
  Q_OBJECT
 private slots:
  void drawsARampAsGrey() {
    stacklens::render::SliceView view;
    view.resize(200, 200);
    std::vector<float> ramp(100 * 100);
    for (int y = 0; y < 100; ++y)
      for (int x = 0; x < 100; ++x) ramp[y * 100 + x] = float(x);
    view.setSlice(ramp.data(), 100, 100);
    view.setLimits(0.f, 99.f);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QImage frame = view.grabFramebuffer();
    QCOMPARE(frame.width(), 200);
    // Left edge dark, right edge bright, middle mid-grey; rows alike.
    QVERIFY(qGray(frame.pixel(1, 100)) < 10);
    QVERIFY(qGray(frame.pixel(198, 100)) > 245);
    QVERIFY(qAbs(qGray(frame.pixel(100, 100)) - 128) < 6);
    QCOMPARE(qGray(frame.pixel(100, 10)), qGray(frame.pixel(100, 190)));
  }
};

int main(int argc, char** argv) {
  QSurfaceFormat format;
  format.setVersion(3, 3);
  format.setProfile(QSurfaceFormat::CoreProfile);
  QSurfaceFormat::setDefaultFormat(format);
  QApplication app(argc, argv);
  SliceViewTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "slice_view_test.moc"
