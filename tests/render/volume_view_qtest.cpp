// The OpenGL volume ray-marcher (GlVolumeSink) draws what the CPU renderer computes: for every
// mode, a turned view of an anisotropic volume of blobs read back from the framebuffer through a
// gray colormap agrees with the CPU's image drawn as a slice to well within 1 % of the range.
// And the orbit tool reports drags and the wheel instead of moving the picture.
#include <QImage>
#include <QSignalSpy>
#include <QWheelEvent>
#include <QtTest>
#include <cmath>

#include "compute/backend.h"
#include "compute/volume_render.h"
#include "render/gl_volume_sink.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"

using namespace stacklens;
using render::SliceView;

namespace {

constexpr int kW = 120, kH = 100;

// Gaussian blobs of different heights on a faint background, 1.5 apart in z.
compute::Image blobs() {
  compute::Image v = compute::Image::host({40, 48, 56});
  const double centres[4][4] = {
      {10, 20, 20, 1.0}, {28, 30, 36, 0.8}, {20, 12, 40, 0.6}, {30, 36, 14, 0.9}};
  for (int64_t z = 0; z < 40; ++z)
    for (int64_t y = 0; y < 48; ++y)
      for (int64_t x = 0; x < 56; ++x) {
        double sum = 0.05;
        for (const auto& c : centres) {
          const double d2 =
              (z - c[0]) * (z - c[0]) + (y - c[1]) * (y - c[1]) + (x - c[2]) * (x - c[2]);
          sum += c[3] * std::exp(-d2 / 40.0);
        }
        v.data()[(z * 48 + y) * 56 + x] = float(sum);
      }
  v.spacing = {1.5, 1.0, 1.0, true, "um"};
  return v;
}

render::DisplaySettings grayFromZeroToOne() {
  render::DisplaySettings d;
  d.colormap = "gray";
  d.limits.low = 0, d.limits.high = 1;
  d.nanColour = QColor(0, 0, 255);
  return d;
}

QImage shown(SliceView& view) {
  view.resize(kW, kH);
  view.show();
  if (!QTest::qWaitForWindowExposed(&view)) return {};
  view.fitToWindow();
  return view.grabFramebuffer().convertToFormat(QImage::Format_RGB32);
}

}  // namespace

class VolumeViewTest : public QObject {
  Q_OBJECT

 private slots:
  void theOpenGlRayMarcherDrawsWhatTheCpuComputes() {
    const compute::Image volume = blobs();
    auto cpu = compute::makeCpuBackend(2);
    for (compute::VolumeMode mode :
         {compute::VolumeMode::Mip, compute::VolumeMode::AttenuatedMip,
          compute::VolumeMode::Average, compute::VolumeMode::IsoSurface}) {
      compute::VolumeRenderParams p;
      p.mode = mode;
      p.width = kW, p.height = kH;
      p.low = 0, p.high = 1, p.isoLevel = 0.2, p.attenuation = 0.5;
      compute::orbitRotation(33, -24, p.rotation);

      render::GlVolumeSink sink;
      sink.setVolume(volume);
      sink.setParams(p);
      SliceView gl;
      gl.setDisplay(grayFromZeroToOne());
      gl.setExternalSlice(&sink, kW, kH);
      const QImage fromGl = shown(gl);
      QVERIFY2(sink.lastError().empty(), sink.lastError().c_str());
      gl.clearSlice();

      const compute::Image expected = cpu->renderVolume(volume, p);
      SliceView twin;
      twin.setDisplay(grayFromZeroToOne());
      twin.setSlice(expected.data(), kW, kH);
      const QImage fromCpu = shown(twin);
      QCOMPARE(fromGl.size(), QSize(kW, kH));
      QCOMPARE(fromCpu.size(), QSize(kW, kH));

      double diff = 0;
      int both = 0, missed = 0, drawn = 0;
      for (int y = 0; y < kH; ++y)
        for (int x = 0; x < kW; ++x) {
          const QRgb a = fromGl.pixel(x, y), b = fromCpu.pixel(x, y);
          const bool nanA = a == qRgb(0, 0, 255), nanB = b == qRgb(0, 0, 255);
          if (nanA != nanB) {
            ++missed;
          } else if (!nanA) {
            diff += std::abs(qGray(a) - qGray(b)), ++both;
            drawn += qGray(b) > 20;
          }
        }
      const char* name = compute::volumeModeName(mode);
      // The volume fills a good part of the view; the blobs' iso-surfaces a smaller one.
      QVERIFY2(both > kW * kH / (mode == compute::VolumeMode::IsoSurface ? 40 : 4), name);
      QVERIFY2(drawn > both / 20, name);       // and it is not all black
      QVERIFY2(missed < kW * kH / 100, name);  // rays that hit in one and not the other: rims
      const double meanDiff = diff / both / 255.0;
      qInfo("%s: mean difference %.4f of the range, %d rims", name, meanDiff, missed);
      QVERIFY2(meanDiff < 0.01, name);
    }
  }

  void theOrbitToolReportsTheMouseAndMovesNothing() {
    SliceView view;
    std::vector<float> pixels(64 * 64, 0.5f);
    view.setSlice(pixels.data(), 64, 64);
    view.resize(128, 128);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setTool(SliceView::Tool::Orbit);
    const double zoom = view.zoom();
    const QPointF centre = view.centre();
    QSignalSpy orbited(&view, &SliceView::orbited), zoomed(&view, &SliceView::orbitZoomed),
        moved(&view, &SliceView::viewMoved);
    QTest::mousePress(&view, Qt::LeftButton, {}, QPoint(40, 40));
    QTest::mouseMove(&view, QPoint(60, 45));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, QPoint(60, 45));
    QVERIFY(orbited.count() >= 1);
    QPointF total;
    for (const auto& args : orbited) total += args.at(0).toPointF();
    QCOMPARE(total, QPointF(20, 5));
    QWheelEvent wheel(QPointF(64, 64), QPointF(64, 64), {}, QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(&view, &wheel);
    QCOMPARE(zoomed.count(), 1);
    QVERIFY(zoomed.at(0).at(0).toDouble() > 1.0);
    QCOMPARE(view.zoom(), zoom);
    QCOMPARE(view.centre(), centre);
    QCOMPARE(moved.count(), 0);
  }
};

STACKLENS_GL_QTEST_MAIN(VolumeViewTest)
#include "volume_view_qtest.moc"
