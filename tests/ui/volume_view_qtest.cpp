// View ▸ 3D view on the bundled beads stack: the panel loads the whole stack and draws it (here
// with OpenGL, CI having no GPU); the frame read back from its view matches the CPU renderer's
// image of the same volume and camera drawn as a slice, for every mode; a drag turns the volume
// (a different picture, the same as the CPU's for the new camera); "Compare with CPU" puts a row
// in the timing panel; a new file replaces the volume.
#include <QSignalSpy>
#include <QtTest>
#include <cmath>

#include "compute/backend.h"
#include "compute/volume_render.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/frame/main_window.h"
#include "ui/live/live_processing.h"
#include "ui/live/timing_panel.h"
#include "ui/volume/volume_panel.h"
#include "ui/volume/volume_tool.h"

using namespace stacklens;

namespace {

const QString kBeads = QStringLiteral(STACKLENS_SAMPLE_DIR "/beads.tif");
const QString kCube = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube.fits");

// The mean gray-level difference (0..1) between the panel's frame and the CPU's image of the same
// camera drawn in the same view as a plain slice (then the panel's next frame replaces it);
// *rims counts pixels drawn in one only.
double differenceFromCpu(ui::VolumePanel& panel, int* rims) {
  const compute::VolumeRenderParams p = panel.params();
  const compute::Image want = compute::makeCpuBackend(2)->renderVolume(panel.volume()->volume, p);
  render::SliceView* view = panel.view();
  const QImage a = view->grabFramebuffer().convertToFormat(QImage::Format_RGB32);
  view->setSlice(want.data(), p.width, p.height);
  const QImage b = view->grabFramebuffer().convertToFormat(QImage::Format_RGB32);
  if (a.size() != b.size() || a.isNull()) return 1.0;
  const QRgb background = view->display().nanColour.rgb();
  double sum = 0;
  int64_t n = 0;
  *rims = 0;
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width(); ++x) {
      const QRgb pa = a.pixel(x, y) | 0xff000000, pb = b.pixel(x, y) | 0xff000000;
      if ((pa == background) != (pb == background)) {
        ++*rims;
        continue;
      }
      sum += std::abs(qGray(pa) - qGray(pb)), ++n;
    }
  return n ? sum / double(n) / 255.0 : 1.0;
}

// Frames may reach the screen while QTest delivers the events that asked for them: clear the spy
// before the action, then this.
bool waitForFrame(QSignalSpy& shown) { return shown.count() > 0 || shown.wait(20000); }

}  // namespace

class VolumeViewTest : public QObject {
  Q_OBJECT
 private slots:
  void drawsTheBeadsAsTheCpuDoesInEveryModeAndTurns() {
    if (!QFileInfo::exists(kBeads)) QSKIP("the bundled samples are not built");
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, kBeads, QSize(1100, 800)));
    ui::VolumePanel* panel = ui::showVolumeView(&w);
    QVERIFY(panel);
    QSignalSpy loaded(panel, &ui::VolumePanel::volumeLoaded);
    QSignalSpy shown(panel, &ui::VolumePanel::frameShown);
    QVERIFY(loaded.count() > 0 || loaded.wait(20000));
    QVERIFY(shown.count() > 0 || waitForFrame(shown));
    QCOMPARE(panel->rendererName(), QStringLiteral("OpenGL"));
    const compute::Shape s = panel->volume()->volume.shape();
    QCOMPARE(s, (compute::Shape{w.info().z, w.info().y, w.info().x}));  // small: not binned
    QVERIFY(panel->status().contains("OpenGL"));

    int rims = 0;
    for (compute::VolumeMode mode :
         {compute::VolumeMode::Mip, compute::VolumeMode::AttenuatedMip,
          compute::VolumeMode::Average, compute::VolumeMode::IsoSurface}) {
      if (panel->params().mode != mode) {
        shown.clear();
        panel->setMode(mode);
        QVERIFY(waitForFrame(shown));
      }
      QCOMPARE(panel->params().mode, mode);
      const double diff = differenceFromCpu(*panel, &rims);
      qInfo("%s: mean difference %.4f of the range, %d rims", compute::volumeModeName(mode), diff,
            rims);
      QVERIFY(diff < 0.01);
      QVERIFY(rims < panel->params().width * panel->params().height / 100);
    }

    // A drag turns the volume: another camera, another picture, still the CPU's.
    shown.clear();
    panel->setMode(compute::VolumeMode::Mip);
    QVERIFY(waitForFrame(shown));
    const QImage before = panel->view()->grabFramebuffer();
    const double r0 = panel->params().rotation[0];
    shown.clear();
    QTest::mousePress(panel->view(), Qt::LeftButton, {}, QPoint(100, 100));
    QTest::mouseMove(panel->view(), QPoint(160, 120));
    QTest::mouseRelease(panel->view(), Qt::LeftButton, {}, QPoint(160, 120));
    QVERIFY(waitForFrame(shown));
    QVERIFY(panel->params().rotation[0] != r0);
    QVERIFY(panel->view()->grabFramebuffer() != before);
    QVERIFY(differenceFromCpu(*panel, &rims) < 0.01);

    // The CPU twin's time reaches the timing panel.
    QSignalSpy timed(panel, &ui::VolumePanel::operationTimed);
    panel->compareWithCpu();
    QVERIFY(timed.wait(20000));
    const auto& rows = w.tool<ui::LiveProcessing>()->timingPanel()->rows();
    QVERIFY(!rows.empty() && rows.back().stage.startsWith("3D view mip"));
    QVERIFY(rows.back().cpuMs > 0);

    // Another file: its volume replaces the beads'.
    QSignalSpy opened(&w, &ui::MainWindow::stackOpened);
    loaded.clear();
    w.openFile(kCube);
    QVERIFY(opened.wait(10000));
    QVERIFY(loaded.wait(20000));
    QCOMPARE(panel->volume()->volume.shape(), (compute::Shape{w.info().z, w.info().y, w.info().x}));
    QVERIFY(panel->view()->originBottom());  // FITS: row 0 at the bottom, as the main view
  }
};

STACKLENS_GL_QTEST_MAIN(VolumeViewTest)
#include "volume_view_qtest.moc"
