// Analysis ▸ Regions: shapes drawn in their DS9 colours where their pixels say (read back on the
// outline, not at the centre; rotation counter-clockwise from +x in pixel space), exclude regions
// dashed; a real DS9 file with every shape in fk5 imported over HorseHead.fits with the sky
// positions where wcslib puts them and sky sizes through the pixel scale; the export reading back
// to the same regions; the undo contract (regionsEdited after each edit, setRegions silent) and
// sky regions placed again when another stack with a WCS opens; annuli drawn ring by ring and
// pandas sector by sector, and measured part by part once chosen.
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <functional>

#include "io/catalog.h"
#include "io/ds9_regions.h"
#include "io/region_geometry.h"
#include "io/stack_writer.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/analysis/region_stats_tool.h"
#include "ui/analysis/regions_panel.h"
#include "ui/display/view_decorations.h"
#include "ui/frame/main_window.h"

using namespace stacklens;

namespace {

const QString kHorseHead = QStringLiteral(STACKLENS_SHARED_DATA "/HorseHead.fits");

QString regionFile(const QString& name) {
  // The fixtures live in the source tree; STACKLENS_IO_FIXTURES is its tests/io/data/fixtures.
  return QFileInfo(QStringLiteral(STACKLENS_IO_FIXTURES "/../regions/") + name).absoluteFilePath();
}

// Whether a pixel within radius (widget pixels) of at, in a frame read back from view, passes.
bool near(const QImage& frame, QPointF at, int radius, const std::function<bool(QColor)>& is) {
  const double ratio = frame.devicePixelRatio();
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      const int x = int(std::lround((at.x() + dx) * ratio)),
                y = int(std::lround((at.y() + dy) * ratio));
      if (x >= 0 && y >= 0 && x < frame.width() && y < frame.height() && is(frame.pixelColor(x, y)))
        return true;
    }
  return false;
}
bool red(QColor c) { return c.red() > 200 && c.green() < 80 && c.blue() < 80; }
bool blue(QColor c) { return c.blue() > 200 && c.red() < 80 && c.green() < 80; }
bool cyan(QColor c) { return c.green() > 200 && c.blue() > 200 && c.red() < 80; }
bool magenta(QColor c) { return c.red() > 200 && c.blue() > 200 && c.green() < 80; }

io::PixelRegion shape(io::RegionShape s, std::vector<std::array<double, 2>> points,
                      std::vector<double> sizes, const char* colour, double angle = 0) {
  io::PixelRegion r;
  r.shape = s;
  r.points = std::move(points);
  r.sizes = std::move(sizes);
  r.color = colour;
  r.angle = angle;
  return r;
}

// A dark stack with no WCS, its view shown in a window.
QString darkStack(QTemporaryDir& dir, int width, int height) {
  std::vector<float> v(size_t(width) * height, 0.f);
  v[0] = 1;  // limits above the zeros: the background is black
  const QString path = dir.filePath("dark.tif");
  io::writeStack(path.toStdString(), v.data(), 1, height, width, {});
  return path;
}

int count(const std::vector<io::PixelRegion>& regions, io::RegionShape s) {
  return int(std::count_if(regions.begin(), regions.end(),
                           [s](const io::PixelRegion& r) { return r.shape == s; }));
}

}  // namespace

class RegionsTest : public QObject {
  Q_OBJECT
 private slots:
  void shapesAreDrawnOnTheirOutlinesInDs9Colours() {
    QTemporaryDir dir;
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, darkStack(dir, 200, 160), QSize(900, 700)));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    ui::RegionsPanel* panel = ui::installRegionsTool(&w);
    QCOMPARE(ui::installRegionsTool(&w), panel);  // once per window

    using S = io::RegionShape;
    io::PixelRegion excluded = shape(S::Circle, {{170, 30}}, {6}, "green");
    excluded.exclude = true;
    io::PixelRegion label = shape(S::Text, {{30, 140}}, {}, "magenta");
    label.text = "MMMM";
    panel->setRegions({shape(S::Circle, {{50, 50}}, {20}, "red"),
                       shape(S::Box, {{140, 100}}, {40, 10}, "blue", 90),
                       shape(S::Polygon, {{20, 100}, {60, 100}, {40, 130}}, {}, "cyan"),
                       shape(S::Ellipse, {{120, 40}}, {30, 4}, "#ff0000", 45), excluded, label});
    QCOMPARE(int(panel->regions().size()), 6);
    QCOMPARE(panel->table()->rowCount(), 6);
    const QImage frame = view->grabFramebuffer();
    auto at = [view](double x, double y) { return view->imageToWidget({x, y}); };
    // The circle: red on its radius, not at its centre.
    QVERIFY(near(frame, at(70, 50), 2, red));
    QVERIFY(near(frame, at(50, 30), 2, red));
    QVERIFY(!near(frame, at(50, 50), 3, red));
    // The box, turned by 90°: its long sides run along y, its short edges at y = 100 ± 20.
    QVERIFY(near(frame, at(140, 120), 2, blue));
    QVERIFY(near(frame, at(145, 100), 2, blue));
    QVERIFY(!near(frame, at(160, 100), 2, blue));
    QVERIFY(!near(frame, at(140, 100), 2, blue));
    // A polygon vertex.
    QVERIFY(near(frame, at(40, 130), 2, cyan));
    // The ellipse's major axis turned 45° from +x towards +y (counter-clockwise in pixel space,
    // as DS9 states angles), whichever way up the view shows row 0.
    const double d = 30 / std::sqrt(2.0);
    QVERIFY(near(frame, at(120 + d, 40 + d), 2, red));
    QVERIFY(!near(frame, at(120 + d, 40 - d), 3, red));
    // Text in its colour at its position.
    QVERIFY(near(frame, at(30, 140), 8, magenta));
    // Exclude regions are outlined dashed (with DS9's red stroke), the rest solid.
    QCOMPARE(ui::regionPen(excluded).style(), Qt::DashLine);
    QCOMPARE(ui::regionPen(panel->regions()[0]).style(), Qt::SolidLine);
    QCOMPARE(ui::ds9Colour("green"), QColor(0, 255, 0));  // DS9's green, not SVG's

    // Selecting a region centres the view on it.
    panel->select(1);
    QCOMPARE(panel->selected(), 1);
    QCOMPARE(view->centre(), QPointF(140, 100));
  }

  void importsEveryShapeOfADs9FileOverHorseHead() {
    if (!QFileInfo::exists(kHorseHead)) QSKIP("HorseHead.fits is not in ../shared/data");
    const QString file = regionFile("ds9_fk5.reg");
    QVERIFY2(QFileInfo::exists(file), qPrintable(file));
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, kHorseHead, QSize(900, 700)));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    ui::RegionsPanel* panel = ui::installRegionsTool(&w);
    QSignalSpy imported(panel, &ui::RegionsPanel::imported);
    panel->importFile(file);
    QVERIFY(imported.wait(10000));
    const std::vector<io::PixelRegion> regions = panel->regions();
    QCOMPARE(imported.first().at(0).toInt(), int(regions.size()));
    using S = io::RegionShape;
    for (S s : {S::Circle, S::Ellipse, S::Box, S::Polygon, S::Point, S::Line, S::Text, S::Annulus,
                S::EllipseAnnulus, S::BoxAnnulus, S::Panda, S::Epanda})
      QVERIFY2(count(regions, s) > 0, qPrintable(QString("shape %1 missing").arg(int(s))));
    QVERIFY(std::any_of(regions.begin(), regions.end(), [](auto& r) { return r.exclude; }));
    QVERIFY(std::any_of(regions.begin(), regions.end(),
                        [](auto& r) { return r.shape == S::Point && r.pointType == "x"; }));
    QVERIFY(std::any_of(regions.begin(), regions.end(),
                        [](auto& r) { return r.shape == S::Text && r.text == "Horsehead"; }));

    // circle(5:40:59.2100,-2:27:30.600,20.000"): where wcslib's inverse puts it, and back
    // through the forward transform to the same position; 20" through the pixel scale.
    const io::Wcs* wcs = w.stack()->wcs();
    QVERIFY(wcs && wcs->hasCelestial());
    const double ra = (5 + 40 / 60.0 + 59.21 / 3600) * 15, dec = -(2 + 27 / 60.0 + 30.6 / 3600);
    double x = 0, y = 0;
    QVERIFY(wcs->worldToPixel(ra, dec, 0, x, y));
    const io::PixelRegion& circle = regions.front();
    QCOMPARE(int(circle.shape), int(S::Circle));
    QVERIFY(std::abs(circle.points[0][0] - x) < 1e-3 && std::abs(circle.points[0][1] - y) < 1e-3);
    double lng = 0, lat = 0;
    QVERIFY(wcs->celestial(circle.points[0][0], circle.points[0][1], 0, lng, lat));
    QVERIFY(io::skySeparation(lng, lat, ra, dec) * 3600 < 0.01);
    double l1 = 0, b1 = 0, l2 = 0, b2 = 0;
    QVERIFY(wcs->celestial(x - 0.5, y, 0, l1, b1) && wcs->celestial(x + 0.5, y, 0, l2, b2));
    const double arcsecPerPixel = io::skySeparation(l1, b1, l2, b2) * 3600;
    QVERIFY2(std::abs(circle.sizes[0] - 20 / arcsecPerPixel) < 0.02 * circle.sizes[0],
             qPrintable(QString::number(circle.sizes[0])));

    // The ellipse (color=red width=2) drawn in red on its outline.
    const io::PixelRegion& ellipse = regions[1];
    QCOMPARE(int(ellipse.shape), int(S::Ellipse));
    QCOMPARE(ellipse.color, std::string("red"));
    view->setView(4, {ellipse.points[0][0], ellipse.points[0][1]});
    const QImage frame = view->grabFramebuffer();
    const QPainterPath outline = ui::regionOutline(ellipse, *view);
    QVERIFY(near(frame, outline.pointAtPercent(0.1), 2, red));
    QVERIFY(
        !near(frame, view->imageToWidget({ellipse.points[0][0], ellipse.points[0][1]}), 2, red));

    // The table lists them in DS9's 1-based image coordinates; the warnings are shown.
    QCOMPARE(panel->table()->rowCount(), int(regions.size()));
    QVERIFY(panel->table()
                ->item(0, ui::RegionsPanel::Centre)
                ->text()
                .startsWith(QString::number(x + 1, 'f', 2)));
    QVERIFY(!panel->warnings().isEmpty());  // vector, projection and ruler read as lines
    QVERIFY(panel->status().contains("warning"));

    // The export reads back as the same regions (in the image frame).
    QTemporaryDir dir;
    const QString out = dir.filePath("out.reg");
    QCOMPARE(panel->exportFile(out), QString());
    const io::RegionFile back = io::readDs9Regions(out.toStdString());
    QCOMPARE(back.regions.size(), regions.size());
    const std::vector<io::PixelRegion> again =
        io::regionsInPixels(back.regions, nullptr, 0, nullptr);
    QVERIFY(std::abs(again[0].points[0][0] - x) < 1e-2 &&
            std::abs(again[0].sizes[0] - circle.sizes[0]) < 1e-2);

    // An unreadable file is reported, and adds nothing.
    QSignalSpy failed(panel, &ui::RegionsPanel::importFailed);
    panel->importFile(dir.filePath("missing.reg"));
    QVERIFY(failed.wait(10000));
    QCOMPARE(panel->regions().size(), regions.size());
  }

  void annuliAndPandasAreDrawnAndMeasuredAsDs9Does() {
    QTemporaryDir dir;
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, darkStack(dir, 200, 160), QSize(900, 700)));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    ui::RegionsPanel* panel = ui::installRegionsTool(&w);
    using S = io::RegionShape;
    const io::PixelRegion annulus =
        shape(S::EllipseAnnulus, {{60, 60}}, {10, 5, 20, 10, 30, 15}, "red");
    io::PixelRegion panda = shape(S::Panda, {{150, 100}}, {10, 20, 30}, "blue");
    panda.angles = {0, 90, 180};  // the upper half in two sectors
    panel->setRegions({annulus, panda});
    const QImage frame = view->grabFramebuffer();
    auto at = [view](double x, double y) { return view->imageToWidget({x, y}); };
    // Every ellipse of the annulus, not only the first: 10, 20 and 30 along the major axis.
    for (double a : {10.0, 20.0, 30.0})
      QVERIFY2(near(frame, at(60 + a, 60), 2, red), qPrintable(QString::number(a)));
    QVERIFY(!near(frame, at(60 + 15, 60), 2, red));
    // The panda's rings over its sectors only, and a spoke at each sector edge.
    const double c = std::sqrt(0.5);
    QVERIFY(near(frame, at(150 + 20 * c, 100 + 20 * c), 2, blue));   // middle ring at 45°
    QVERIFY(near(frame, at(150 - 30 * c, 100 + 30 * c), 2, blue));   // outer ring at 135°
    QVERIFY(!near(frame, at(150 + 20 * c, 100 - 20 * c), 3, blue));  // no ring at 315°
    QVERIFY(near(frame, at(150 + 25, 100), 2, blue));                // the spoke at 0°
    QVERIFY(near(frame, at(150, 100 + 25), 2, blue));                // the spoke at 90°
    QVERIFY(!near(frame, at(150 + 25 * c, 100 + 25 * c), 3, blue));  // between rings at 45°

    // Choosing the panda measures it in the Region statistics dock: 2 sectors × 2 rings, each
    // with the pixels whose centres it holds.
    auto* stats = w.findChild<ui::RegionStatsTool*>();
    QVERIFY(stats);
    panel->select(1);
    QTRY_COMPARE(int(stats->partStats().size()), 4);
    const io::PixelRegion shown = panel->regions()[1];
    std::vector<int64_t> npix(4, 0);
    for (int y = 0; y < 160; ++y)
      for (int x = 0; x < 200; ++x)
        if (const int part = io::regionPartAt(shown, x, y); part >= 0) ++npix[size_t(part)];
    for (size_t k = 0; k < 4; ++k) {
      QCOMPARE(stats->partStats()[k].npix, npix[k]);
      QVERIFY(npix[k] > 100);
    }
    QVERIFY(stats->label()->text().contains("DS9 region"));
    // Back to none: the dock drops the DS9 region.
    panel->select(-1);
    QVERIFY(stats->partStats().empty());
  }

  void editsAreReportedAndSetRegionsIsSilent() {
    QTemporaryDir dir;
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, darkStack(dir, 120, 100), QSize(800, 600)));
    render::SliceView* view = w.sliceView();
    ui::RegionsPanel* panel = ui::installRegionsTool(&w);
    QSignalSpy edited(panel, &ui::RegionsPanel::regionsEdited);

    // What the view's Rectangle and Ellipse tools draw becomes a box and an ellipse covering
    // the pixels the view outlined (corner pixel centres 10..29 and 40..49: 20 × 10 pixels).
    emit view->regionDrawn(QRectF(QPointF(10, 40), QPointF(29, 49)), false);
    QVERIFY(panel->addDrawnRegion());
    emit view->regionDrawn(QRectF(QPointF(60, 20), QPointF(79, 29)), true);
    QVERIFY(panel->addDrawnRegion());
    QCOMPARE(edited.count(), 2);
    QCOMPARE(edited.at(0).at(0).toString(), QString("add box region"));
    std::vector<io::PixelRegion> two = panel->regions();
    QCOMPARE(int(two.size()), 2);
    QCOMPARE(int(two[0].shape), int(io::RegionShape::Box));
    QCOMPARE(two[0].points[0][0], 19.5);
    QCOMPARE(two[0].points[0][1], 44.5);
    QCOMPARE(two[0].sizes, (std::vector<double>{20, 10}));
    QCOMPARE(int(two[1].shape), int(io::RegionShape::Ellipse));
    QCOMPARE(two[1].sizes, (std::vector<double>{10, 5}));

    panel->select(0);
    panel->deleteSelected();
    QCOMPARE(edited.count(), 3);
    QCOMPARE(int(panel->regions().size()), 1);
    panel->clear();
    QCOMPARE(edited.count(), 4);
    QVERIFY(panel->regions().empty());
    QVERIFY(!w.tool<ui::ViewDecorations>()->hasOverlay(ui::RegionsPanel::kOverlayKey));

    // Undo puts the list back without a signal.
    panel->setRegions(two);
    QCOMPARE(edited.count(), 4);
    QCOMPARE(int(panel->regions().size()), 2);
    QCOMPARE(panel->regions()[1].sizes, two[1].sizes);
    QVERIFY(w.tool<ui::ViewDecorations>()->hasOverlay(ui::RegionsPanel::kOverlayKey));

    // An import is an edit too.
    QSignalSpy imported(panel, &ui::RegionsPanel::imported);
    panel->importFile(regionFile("ds9_image.reg"));
    QVERIFY(imported.wait(10000));
    QCOMPARE(edited.count(), 5);
    QVERIFY(edited.last().at(0).toString().startsWith("import"));
    const auto all = panel->regions();
    QCOMPARE(all[2].points[0], (std::array<double, 2>{99, 119}));  // circle(100,120,15)
  }

  void skyRegionsArePlacedAgainForAnotherWcs() {
    const QString cube = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube.fits");
    if (!QFileInfo::exists(kHorseHead) || !QFileInfo::exists(cube))
      QSKIP("HorseHead.fits or the bundled samples are missing");
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, kHorseHead, QSize(800, 600)));
    ui::RegionsPanel* panel = ui::installRegionsTool(&w);
    QSignalSpy imported(panel, &ui::RegionsPanel::imported);
    panel->importFile(regionFile("ds9_fk5.reg"));
    QVERIFY(imported.wait(10000));
    const std::vector<io::PixelRegion> before = panel->regions();
    // Undo and redo keep the regions' sky positions.
    panel->setRegions({});
    panel->setRegions(before);
    QSignalSpy edited(panel, &ui::RegionsPanel::regionsEdited);
    QSignalSpy opened(&w, &ui::MainWindow::stackOpened);
    w.openFile(cube);
    QVERIFY(opened.wait(10000));
    const io::Wcs* wcs = w.stack()->wcs();
    QVERIFY(wcs);
    const double ra = (5 + 40 / 60.0 + 59.21 / 3600) * 15, dec = -(2 + 27 / 60.0 + 30.6 / 3600);
    double x = 0, y = 0;
    QVERIFY(wcs->skyToPixel(io::SkyFrame::Fk5, ra, dec, w.slicePath()->currentZ(), x, y));
    const std::vector<io::PixelRegion> after = panel->regions();
    QCOMPARE(after.size(), before.size());
    QVERIFY2(
        std::abs(after[0].points[0][0] - x) < 1e-3 && std::abs(after[0].points[0][1] - y) < 1e-3,
        qPrintable(QString("%1 %2 vs %3 %4")
                       .arg(after[0].points[0][0])
                       .arg(after[0].points[0][1])
                       .arg(x)
                       .arg(y)));
    // 4" pixels: the 20" circle is 5 pixels now.
    QVERIFY(std::abs(after[0].sizes[0] - 5) < 0.05);
    QCOMPARE(edited.count(), 0);  // not an edit by the user

    // The cube's own region file puts its circles on the injected sources' pixels.
    const QString reg = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube_sources.reg");
    const QString csv = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube_sources.csv");
    if (!QFileInfo::exists(reg) || !QFileInfo::exists(csv)) return;
    panel->clear();
    imported.clear();
    panel->importFile(reg);
    QVERIFY(imported.wait(10000));
    const io::CatalogTable catalog = io::readCatalog(csv.toStdString());
    const std::vector<io::PixelRegion> circles = panel->regions();
    QCOMPARE(circles.size(), catalog.cells.size());
    for (size_t k = 0; k < circles.size(); ++k) {
      const double cx = std::stod(catalog.cells[k][5]), cy = std::stod(catalog.cells[k][6]);
      QVERIFY(std::abs(circles[k].points[0][0] - cx) < 1e-3 &&
              std::abs(circles[k].points[0][1] - cy) < 1e-3);
      QCOMPARE(circles[k].text, catalog.cells[k][0]);
    }
  }
};

STACKLENS_GL_QTEST_MAIN(RegionsTest)
#include "regions_qtest.moc"
