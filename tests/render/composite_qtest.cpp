// SliceView's composite: every pixel read back from the framebuffer is the sum of the visible
// channels' colormap colours (compositeColour, the CPU twin, which is checked against colours
// worked out by hand), with NaN adding nothing and white as the ceiling; hiding a channel takes
// its colour away; an empty list shows the slice again.
#include <QtTest>
#include <cmath>
#include <memory>
#include <vector>

#include "render/composite_layer.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"

using namespace stacklens::render;

namespace {

constexpr int kW = 16, kH = 8, kZoom = 8;

ChannelData ramp(float scale, float offset) {
  auto v = std::make_shared<std::vector<float>>(kW * kH);
  for (int i = 0; i < kW * kH; ++i) (*v)[size_t(i)] = offset + scale * float(i % kW);
  return v;
}

int mismatches(SliceView& view, const std::vector<CompositeChannel>& channels) {
  const QImage frame = view.grabFramebuffer().convertToFormat(QImage::Format_RGB32);
  int bad = 0;
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      const QColor got = frame.pixelColor(x * kZoom + kZoom / 2, y * kZoom + kZoom / 2);
      const QColor want = compositeColour(channels, size_t(y * kW + x));
      bad += std::abs(got.red() - want.red()) > 1 || std::abs(got.green() - want.green()) > 1 ||
             std::abs(got.blue() - want.blue()) > 1;
    }
  return bad;
}

}  // namespace

class CompositeTest : public QObject {
  Q_OBJECT
 private slots:
  void theTwinAddsChannelColours() {
    std::vector<CompositeChannel> c(2);
    c[0].data = std::make_shared<std::vector<float>>(std::vector<float>{0.5f, NAN, 2.f});
    c[0].colormap = "red";
    c[1].data = std::make_shared<std::vector<float>>(std::vector<float>{1.f, 1.f, 1.f});
    c[1].colormap = "cyan", c[1].low = 0, c[1].high = 2;
    QCOMPARE(compositeColour(c, 0), QColor(128, 128, 128));  // half red + half cyan
    QCOMPARE(compositeColour(c, 1), QColor(0, 128, 128));    // NaN adds nothing
    c[1].high = 1;
    QCOMPARE(compositeColour(c, 2), QColor(255, 255, 255));  // red + cyan: white, clamped
    c[0].visible = false;
    QCOMPARE(compositeColour(c, 2), QColor(0, 255, 255));
  }

  void theViewDrawsWhatTheTwinComputes() {
    std::vector<float> slice(kW * kH, 0.f);
    SliceView view;
    view.resize(kW * kZoom, kH * kZoom);
    view.setSlice(slice.data(), kW, kH);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    std::vector<CompositeChannel> c(3);
    c[0] = {ramp(1.f, 0.f), "plane 0", "red", 0.f, 15.f, true};
    c[1] = {ramp(-1.f, 15.f), "plane 1", "green", 0.f, 15.f, true};
    c[2] = {ramp(0.5f, 2.f), "other file", "magenta", 0.f, 12.f, true};
    auto withNaN = std::make_shared<std::vector<float>>(*c[2].data);
    (*withNaN)[5] = NAN;
    c[2].data = withNaN;
    view.setComposite(c);
    QCOMPARE(mismatches(view, c), 0);
    c[1].visible = false;
    view.setComposite(c);
    QCOMPARE(mismatches(view, c), 0);
    view.setComposite({});
    const QImage frame = view.grabFramebuffer();
    QCOMPARE(QColor(frame.pixel(kZoom * 10, kZoom * 3)), QColor(0, 0, 0));  // the slice: zeros
  }
};

STACKLENS_GL_QTEST_MAIN(CompositeTest)
#include "composite_qtest.moc"
