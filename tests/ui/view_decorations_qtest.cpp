// View ▸ Colorbar, Compass and Coordinate grid: the colorbar read back from the view runs from the
// colormap's low entry at the bottom to its high one at the top (reversed when inverted); the
// compass of the bundled radio cube (RA increasing to the left, FITS rows bottom up) points up
// for north and left for east, and is drawn; a stack without a WCS gets none.
#include <QApplication>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "io/stack_writer.h"
#include "io/wcs.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/framebuffer_checks.h"
#include "tests/ui/open_in_window.h"
#include "ui/display/display_panel.h"
#include "ui/display/scale_bar.h"
#include "ui/display/view_decorations.h"
#include "ui/frame/main_window.h"

using namespace stacklens;

using stacklens::testing::greenNear;

class ViewDecorationsTest : public QObject {
  Q_OBJECT
 private slots:
  void colorbarAndCompassOfTheRadioCube() {
    const QString cube = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube.fits");
    if (!QFileInfo::exists(cube)) QSKIP("the bundled samples are not built");
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, cube, {900, 700}));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    const auto dirs =
        ui::compassDirections(*w.stack()->wcs(), *view, view->widgetToImage({100, 100}), 0);
    QVERIFY(dirs);
    QVERIFY2(std::abs(dirs->first.x()) < 0.01 && dirs->first.y() < -0.99, "north is up");
    QVERIFY2(dirs->second.x() < -0.99 && std::abs(dirs->second.y()) < 0.01, "east is left");

    w.tool<ui::ViewDecorations>()->setColorbar(true);
    w.tool<ui::ViewDecorations>()->setCompass(true);
    QImage image = view->grabFramebuffer();
    const double ratio = image.devicePixelRatio();
    auto at = [&](QPointF p) { return image.pixelColor(int(p.x() * ratio), int(p.y() * ratio)); };
    const QRectF bar = ui::ViewDecorations::colorbarRect(*view);
    const QColor top = at({bar.center().x(), bar.top() + 3}),
                 bottom = at({bar.center().x(), bar.bottom() - 3});
    QVERIFY2(top.red() > 240 && top.green() > 240, qPrintable(top.name()));         // gray: white
    QVERIFY2(bottom.red() < 15 && bottom.green() < 15, qPrintable(bottom.name()));  // black
    // The compass's north arrow, up from its origin at (46, height − 46).
    const QImage unscaled = image.scaled(view->size());
    QVERIFY(greenNear(unscaled, {46, view->height() - 46.0 - 14}, 2));
    QVERIFY(greenNear(unscaled, {46 - 14.0, view->height() - 46.0}, 2));  // east, to the left
    // Inverted: the bar turns over as the slice does.
    render::DisplaySettings d = view->display();
    d.invert = true;
    view->setDisplay(d);
    image = view->grabFramebuffer();
    QVERIFY(at({bar.center().x(), bar.top() + 3}).red() < 15);
  }

  // The grid's lines lie on their longitude or latitude (checked through the WCS at every
  // segment end), there are a few of each across the view, and they are drawn.
  void gridLinesFollowTheWorldCoordinates() {
    const QString cube = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube.fits");
    if (!QFileInfo::exists(cube)) QSKIP("the bundled samples are not built");
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, cube, {900, 700}));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    const io::Wcs& wcs = *w.stack()->wcs();
    const std::vector<ui::GridLine> grid = ui::coordinateGrid(wcs, *view, 0);
    int longitudes = 0, latitudes = 0;
    for (const ui::GridLine& line : grid) {
      (line.longitude ? longitudes : latitudes)++;
      for (const auto& [a, b] : line.segments)
        for (QPointF end : {a, b}) {
          const QPointF image = view->widgetToImage(end);
          double lng = 0, lat = 0;
          QVERIFY(wcs.celestial(image.x(), image.y(), 0, lng, lat));
          const double off =
              line.longitude ? std::remainder(lng - line.value, 360.0) * std::cos(lat * M_PI / 180)
                             : lat - line.value;
          // Within a small part of a lattice cell (12 widget pixels) of the true line.
          QVERIFY2(std::abs(off) < 0.2 * 12 / view->zoom() * 0.0011111111,
                   qPrintable(
                       QString("%1 %2: off by %3°").arg(line.longitude).arg(line.value).arg(off)));
        }
    }
    QVERIFY2(longitudes >= 2 && longitudes <= 12, qPrintable(QString::number(longitudes)));
    QVERIFY2(latitudes >= 2 && latitudes <= 12, qPrintable(QString::number(latitudes)));
    // Drawn: the grid's colour appears in the view along a latitude line.
    w.tool<ui::ViewDecorations>()->setGrid(true);
    const QImage image = view->grabFramebuffer().scaled(view->size());
    const auto& line =
        *std::find_if(grid.begin(), grid.end(), [](auto& l) { return !l.longitude; });
    const QPointF mid = (line.segments[line.segments.size() / 2].first +
                         line.segments[line.segments.size() / 2].second) /
                        2;
    bool drawn = false;
    for (int d = -2; d <= 2; ++d) {
      const QColor c = image.pixelColor(int(mid.x()), int(mid.y()) + d);
      drawn |= c.red() > 150 && c.green() > 110 && c.blue() < 120;
    }
    QVERIFY(drawn);
  }

  // The radio cube's scale bar is an angle; the beads' (ImageJ spacing in microns) a length,
  // drawn where the decorations say, with a grid in microns when asked.
  void scaleBarsAndAPhysicalGrid() {
    const QString cube = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube.fits");
    const QString beads = QStringLiteral(STACKLENS_SAMPLE_DIR "/beads.tif");
    if (!QFileInfo::exists(cube) || !QFileInfo::exists(beads))
      QSKIP("the bundled samples are not built");
    for (const QString& path : {cube, beads}) {
      ui::MainWindow w;
      QVERIFY(stacklens::testing::openInWindow(w, path, {900, 700}));
      render::SliceView* view = w.sliceView();
      QTRY_VERIFY(view->isExposed() && view->width() > 200);
      const auto scale = ui::pixelScale(*w.stack(), *view, 0);
      QVERIFY(scale);
      QCOMPARE(scale->angle, path == cube);
      const ui::ScaleBarSpec bar = ui::scaleBar(*scale, view->zoom());
      QVERIFY(bar.pixels > 40 && bar.pixels <= 100);
      if (path == beads)
        QVERIFY2(bar.label.endsWith(QString::fromUtf8("µm")), qPrintable(bar.label));
      w.tool<ui::ViewDecorations>()->setScaleBar(true);
      const QImage image = view->grabFramebuffer();
      const double ratio = image.devicePixelRatio();
      const QPointF a = ui::ViewDecorations::scaleBarOrigin(*view);
      int white = 0;
      for (int x = int(a.x()) + 2; x < int(a.x() + bar.pixels) - 2; ++x) {
        const QColor c = image.pixelColor(int(x * ratio), int(a.y() * ratio));
        white += c.red() > 240 && c.green() > 240 && c.blue() > 240;
      }
      QVERIFY(white > int(bar.pixels) - 8);  // the bar's length, drawn in white
      if (path == beads) {
        w.tool<ui::ViewDecorations>()->setGrid(true);
        const QImage grid = view->grabFramebuffer();
        int lines = 0;
        for (int x = 0; x < grid.width(); ++x) {
          const QColor c = grid.pixelColor(x, grid.height() / 3);
          lines += c.red() > 150 && c.green() > 120 && c.blue() < 120;  // the grid's amber
        }
        QVERIFY(lines >= 2);
      }
    }
  }

  void noCompassWithoutAWcs() {
    QTemporaryDir dir;
    std::vector<float> v(3 * 40 * 40, 1.f);
    const QString path = dir.filePath("plain.tif");
    io::writeStack(path.toStdString(), v.data(), 3, 40, 40, {});
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, path, {700, 500}));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    w.tool<ui::ViewDecorations>()->setCompass(true);
    const QImage image = view->grabFramebuffer().scaled(view->size());
    QVERIFY(!greenNear(image, {46, view->height() - 46.0 - 14}, 3));
  }
};

STACKLENS_GL_QTEST_MAIN(ViewDecorationsTest)

#include "view_decorations_qtest.moc"
