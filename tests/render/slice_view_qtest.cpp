// SliceView renders what its CPU twin (colourIndex + LUT) predicts, for every scale, several
// colormaps, inversion and NaN; through the plain, PBO and external-sink upload paths; and its
// zoom keeps the point under the cursor fixed.
#include <QApplication>
#include <QImage>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QSurfaceFormat>
#include <QWheelEvent>
#include <QtTest>
#include <cmath>
#include <string>
#include <vector>

#include "render/colormap.h"
#ifdef STACKLENS_HAVE_CUDA_TEXTURE_SINK
#include "render/cuda_texture_sink.h"
#endif
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"

using namespace stacklens::render;

namespace {

constexpr int kW = 64, kH = 32, kZoom = 4;

// A ramp with a bump and a few NaN pixels.
std::vector<float> testSlice() {
  std::vector<float> v(kW * kH);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) v[y * kW + x] = float(x) * 1.5f + 10.f * std::sin(0.4f * y) + 20.f;
  v[5 * kW + 7] = NAN;
  v[20 * kW + 40] = NAN;
  return v;
}

// Fills the texture itself, as a CUDA interop writer would.
class FakeSink : public TextureSink {
 public:
  explicit FakeSink(std::vector<float> data) : data_(std::move(data)) {}
  void fillTexture(unsigned texture, int width, int height) override {
    auto* gl = QOpenGLContext::currentContext()->functions();
    gl->glBindTexture(GL_TEXTURE_2D, texture);
    gl->glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RED, GL_FLOAT, data_.data());
    ++calls;
  }
  int calls = 0;

 private:
  std::vector<float> data_;
};

// Records what the view asks of it, and whether a GL context was current each time.
class RecordingSink : public TextureSink {
 public:
  void fillTexture(unsigned texture, int width, int height) override {
    std::vector<float> data(size_t(width) * height, 1.f);
    auto* gl = QOpenGLContext::currentContext()->functions();
    gl->glBindTexture(GL_TEXTURE_2D, texture);
    gl->glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RED, GL_FLOAT, data.data());
    events.push_back("fill " + std::to_string(width) + "x" + std::to_string(height));
  }
  void releaseTexture() override {
    events.push_back(QOpenGLContext::currentContext() ? "release" : "release without a context");
  }
  std::vector<std::string> events;
};

}  // namespace

class SliceViewTest : public QObject {
  Q_OBJECT

  // Number of image pixels whose centre colour is off the prediction (an index off by one is
  // allowed where the GPU's float rounding lands on the other side of a LUT boundary).
  int mismatches(SliceView& view, const std::vector<float>& data, bool originBottom = false) {
    const QImage frame = view.grabFramebuffer();
    const DisplaySettings& d = view.display();
    const Colormap map = loadColormap(d.colormap);
    const std::vector<float>* cdf = d.scale == Scale::HistEq ? &view.cdf() : nullptr;
    int bad = 0;
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) {
        const int row = originBottom ? kH - 1 - y : y;
        const QColor got = frame.pixelColor(x * kZoom + kZoom / 2, row * kZoom + kZoom / 2);
        const int index = colourIndex(d, data[y * kW + x], cdf);
        bool ok = false;
        if (index < 0) {
          ok = got == d.nanColour;
        } else {
          for (int k = std::max(0, index - 1); k <= std::min(255, index + 1) && !ok; ++k) {
            const QColor want = map.at(k);
            ok = std::abs(got.red() - want.red()) <= 2 &&
                 std::abs(got.green() - want.green()) <= 2 &&
                 std::abs(got.blue() - want.blue()) <= 2;
          }
        }
        if (!ok && bad < 3)
          qWarning("pixel (%d,%d) value %g index %d: got %s", x, y, double(data[y * kW + x]), index,
                   qPrintable(got.name()));
        bad += !ok;
      }
    return bad;
  }

 private slots:
  void drawsARampAsGrey() {
    SliceView view;
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
    QVERIFY(qGray(frame.pixel(1, 100)) < 10);
    QVERIFY(qGray(frame.pixel(198, 100)) > 245);
    QVERIFY(qAbs(qGray(frame.pixel(100, 100)) - 128) < 6);
    QCOMPARE(qGray(frame.pixel(100, 10)), qGray(frame.pixel(100, 190)));
  }

  void matchesTheCpuTwinForEveryScaleAndSeveralColormaps() {
    const auto data = testSlice();
    SliceView view;
    view.resize(kW * kZoom, kH * kZoom);
    view.setSlice(data.data(), kW, kH);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.zoom(), double(kZoom));
    for (const char* colormap : {"gray", "viridis", "sls", "cubehelix"})
      for (Scale scale : kAllScales)
        for (bool invert : {false, true}) {
          DisplaySettings d;
          d.colormap = colormap;
          d.scale = scale;
          d.invert = invert;
          d.limits = {30.f, 100.f};
          d.nanColour = QColor(0, 255, 0);
          view.setDisplay(d);
          QVERIFY2(
              mismatches(view, data) == 0,
              qPrintable(QString("%1 %2 invert=%3").arg(colormap, scaleName(scale)).arg(invert)));
        }
  }

  void pixelBufferAndExternalSinkPathsDrawTheSame() {
    const auto data = testSlice();
    SliceView view;
    view.resize(kW * kZoom, kH * kZoom);
    view.setUsePixelBuffer(true);
    view.setSlice(data.data(), kW, kH);
    DisplaySettings d;
    d.colormap = "magma";
    d.limits = {20.f, 120.f};
    view.setDisplay(d);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(mismatches(view, data), 0);
    const QImage viaPbo = view.grabFramebuffer();

    FakeSink sink(data);
    view.setExternalSlice(&sink, kW, kH);
    const QImage viaSink = view.grabFramebuffer();
    QVERIFY(sink.calls >= 1);
    QCOMPARE(viaSink, viaPbo);
  }

  // A texture a sink has filled (registered with CUDA, for the interop sink) is let go, with the
  // context current, before it is re-specified for a new size, when another sink takes over,
  // when the slice is cleared, and before the view deletes it.
  void theFillingSinkReleasesTheTextureBeforeItChanges() {
    RecordingSink a, b;
    {
      SliceView view;
      view.resize(kW * kZoom, kH * kZoom);
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      view.setExternalSlice(&a, kW, kH);
      view.grabFramebuffer();
      view.setExternalSlice(&a, 2 * kW, kH);  // a new size: the texture is re-specified
      view.grabFramebuffer();
      const std::string small = std::to_string(kW) + "x" + std::to_string(kH);
      const std::string wide = std::to_string(2 * kW) + "x" + std::to_string(kH);
      QCOMPARE(a.events, (std::vector<std::string>{"fill " + small, "release", "fill " + wide}));
      view.setExternalSlice(&b, 2 * kW, kH);  // another sink takes over
      QCOMPARE(a.events.back(), std::string("release"));
      view.grabFramebuffer();
      view.clearSlice();
      QCOMPARE(b.events, (std::vector<std::string>{"fill " + wide, "release"}));
      view.setExternalSlice(&b, 2 * kW, kH);
      view.grabFramebuffer();
    }  // the view goes with its texture
    QCOMPARE(b.events.back(), std::string("release"));
    QCOMPARE(b.events.size(), size_t(4));
  }

  // A plane larger than the texture limit is drawn as a grid of textures: forced here with a
  // limit of 24 (64 × 32 → 3 × 2 tiles, the last ones narrower), every pixel as the CPU twin
  // colours it and the same picture as one texture; a sink is not offered such a plane.
  void planesBeyondTheTextureLimitAreDrawnInTiles() {
    const auto data = testSlice();
    SliceView view;
    view.resize(kW * kZoom, kH * kZoom);
    view.setSlice(data.data(), kW, kH);
    DisplaySettings d;
    d.colormap = "viridis";
    d.limits = {20.f, 120.f};
    view.setDisplay(d);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QImage whole = view.grabFramebuffer();
    QVERIFY(view.maxTextureSide() >= 1024);  // the context's GL_MAX_TEXTURE_SIZE
    view.setMaxTextureSide(24);
    QVERIFY(!view.acceptsExternalSlice(kW, kH));
    QCOMPARE(mismatches(view, data), 0);
    QCOMPARE(view.grabFramebuffer(), whole);
    view.setMaxTextureSide(0);  // back to one texture
    QCOMPARE(view.grabFramebuffer(), whole);
  }

  void cudaSinkFailsQuietlyWithoutAUsableDevice() {
#ifdef STACKLENS_HAVE_CUDA_TEXTURE_SINK
    // A host image is refused by the interop writer (and so is every image in a CPU-only
    // build): the view survives and the sink says why.
    SliceView view;
    view.resize(kW * kZoom, kH * kZoom);
    stacklens::render::CudaTextureSink sink;
    sink.setSlice(stacklens::compute::Image::host({1, kH, kW}), 0);
    view.setExternalSlice(&sink, kW, kH);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.grabFramebuffer();
    QVERIFY(!sink.lastError().empty());
#else
    QSKIP("no interop library in this build");
#endif
  }

  void fitsOriginIsAtTheBottom() {
    const auto data = testSlice();
    SliceView view;
    view.resize(kW * kZoom, kH * kZoom);
    view.setSlice(data.data(), kW, kH);
    view.setOriginBottom(true);
    DisplaySettings d;
    d.limits = {20.f, 120.f};
    view.setDisplay(d);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(mismatches(view, data, /*originBottom=*/true), 0);
    // Image row 0 is drawn at the bottom of the widget.
    QVERIFY(view.imageToWidget({0, 0}).y() > view.imageToWidget({0, kH - 1}).y());
  }

  void wheelZoomKeepsThePointUnderTheCursor() {
    const auto data = testSlice();
    SliceView view;
    view.resize(300, 200);
    view.setSlice(data.data(), kW, kH);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QPointF cursor(71, 133);
    const QPointF before = view.widgetToImage(cursor);
    const double zoom = view.zoom();
    QWheelEvent wheel(cursor, QPointF(view.mapToGlobal(cursor.toPoint())), QPoint(), QPoint(0, 240),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &wheel);
    QVERIFY(view.zoom() > zoom * 1.3);
    const QPointF after = view.widgetToImage(cursor);
    QVERIFY(std::abs(after.x() - before.x()) < 1e-9 && std::abs(after.y() - before.y()) < 1e-9);
    view.setZoom(1.0);
    QCOMPARE(view.zoom(), 1.0);
    view.fitToWindow();
    QCOMPARE(view.zoom(), std::min(300.0 / kW, 200.0 / kH));
  }

  void pixelAspectStretchesRows() {
    const auto data = testSlice();
    SliceView view;
    view.resize(kW * 2, kH * 8);
    view.setSlice(data.data(), kW, kH);
    view.setPixelAspect(4.0);  // e.g. z spacing 4× the x spacing in an XZ view
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.zoom(), 2.0);
    const double rowHeight = view.imageToWidget({0, 1}).y() - view.imageToWidget({0, 0}).y();
    QCOMPARE(rowHeight, 8.0);
  }

  void dragsDrawLinesAndRegions() {
    const auto data = testSlice();
    SliceView view;
    view.resize(kW * kZoom, kH * kZoom);
    view.setSlice(data.data(), kW, kH);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy lines(&view, &SliceView::lineDrawn), regions(&view, &SliceView::regionDrawn),
        clicks(&view, &SliceView::clicked);
    view.setTool(SliceView::Tool::Line);
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(10, 10));
    QTest::mouseMove(&view, QPoint(60, 40));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(60, 40));
    QCOMPARE(lines.count(), 1);
    const QPointF to = lines.at(0).at(1).toPointF();
    QVERIFY(std::abs(to.x() - view.widgetToImage(QPointF(60, 40)).x()) < 1e-9);
    view.setTool(SliceView::Tool::Ellipse);
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(20, 20));
    QTest::mouseMove(&view, QPoint(100, 80));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(100, 80));
    QCOMPARE(regions.count(), 1);
    QCOMPARE(regions.at(0).at(1).toBool(), true);
    view.setTool(SliceView::Tool::Pan);
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(30, 30));
    QCOMPARE(clicks.count(), 1);
  }
};

STACKLENS_GL_QTEST_MAIN(SliceViewTest)

#include "slice_view_qtest.moc"
