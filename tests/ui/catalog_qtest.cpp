// Analysis ▸ Catalog: the bundled radio cube's catalog (RA/Dec) placed on the pixels of its
// injected sources, cross-matched with the sources the segmentation finds (the counts agree with
// a brute-force nearest-neighbour search, bright sources match unless blended into larger
// segments, the extended emission is left unmatched), drawn in the match's colours (read back),
// exported with every catalog column and the source's, and matched again when another slice's
// sources are shown; a pixel catalog without a WCS (1-based x/y columns, a row without a position)
// matched in pixels.
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <functional>
#include <set>

#include "io/catalog.h"
#include "io/stack_writer.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/analysis/catalog_columns_dialog.h"
#include "ui/analysis/catalog_panel.h"
#include "ui/display/view_decorations.h"
#include "ui/frame/main_window.h"
#include "ui/frame/navigation_bar.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"
#include "ui/live/sources_panel.h"

using namespace stacklens;

namespace {

bool near(const QImage& frame, QPointF at, int radius, const std::function<bool(QColor)>& is) {
  const double ratio = frame.devicePixelRatio();
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      const int x = int(std::lround((at.x() + dx) * ratio));
      const int y = int(std::lround((at.y() + dy) * ratio));
      if (x >= 0 && y >= 0 && x < frame.width() && y < frame.height() && is(frame.pixelColor(x, y)))
        return true;
    }
  return false;
}
bool green(QColor c) { return c.green() > 200 && c.red() < 90 && c.blue() < 90; }
bool red(QColor c) { return c.red() > 200 && c.green() < 90 && c.blue() < 90; }
bool yellow(QColor c) { return c.red() > 200 && c.green() > 200 && c.blue() < 90; }
bool cyan(QColor c) { return c.green() > 200 && c.blue() > 200 && c.red() < 90; }

int column(const io::CatalogTable& t, const std::string& name) {
  for (size_t k = 0; k < t.columns.size(); ++k)
    if (t.columns[k] == name) return int(k);
  return -1;
}

// The columns dialog an import opened (closed ones may linger until their deferred delete).
ui::CatalogColumnsDialog* openDialog(ui::CatalogPanel* panel) {
  ui::CatalogColumnsDialog* open = nullptr;
  const bool shown = QTest::qWaitFor(
      [&] {
        for (auto* d : panel->findChildren<ui::CatalogColumnsDialog*>())
          if (d->isVisible()) open = d;
        return open != nullptr;
      },
      10000);
  return shown ? open : nullptr;
}

// The dialog the import opens, accepted as it was preset; its choice.
ui::CatalogColumns acceptColumnsDialog(ui::CatalogPanel* panel) {
  ui::CatalogColumnsDialog* dialog = openDialog(panel);
  if (!dialog) return {};
  const ui::CatalogColumns choice = dialog->choice();
  dialog->accept();
  return choice;
}

}  // namespace

class CatalogTest : public QObject {
  Q_OBJECT
 private slots:
  void crossMatchesTheRadioCubesCatalogWithItsSources() {
    const QString cube = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube.fits");
    const QString csv = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube_sources.csv");
    if (!QFileInfo::exists(cube) || !QFileInfo::exists(csv))
      QSKIP("the bundled samples (with radio_cube_sources.csv) are not built");
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, cube, QSize(900, 700)));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    ui::CatalogPanel* panel = ui::installCatalogTool(&w);
    QCOMPARE(ui::installCatalogTool(&w), panel);
    ui::SourcesPanel* sources = w.tool<ui::LiveProcessing>()->sourcesPanel();
    QSignalSpy shown(sources, &ui::SourcesPanel::sourcesShown);
    w.tool<ui::LiveProcessing>()->dock()->applyPreset("astronomy sources");
    QTRY_VERIFY_WITH_TIMEOUT(sources->slice() == w.slicePath()->currentZ(), 30000);

    // The dialog preselects the RA/Dec columns in degrees; every row lands on its pixel.
    QSignalSpy imported(panel, &ui::CatalogPanel::imported);
    panel->importFile(csv);
    QVERIFY(imported.wait(10000));
    const io::CatalogTable& table = *panel->table();
    const ui::CatalogColumns choice = acceptColumnsDialog(panel);
    QCOMPARE(choice.lon, column(table, "ra"));
    QCOMPARE(choice.lat, column(table, "dec"));
    QVERIFY(choice.sky() && !choice.lonInHours);
    QCOMPARE(panel->columns().lon, choice.lon);
    const int rows = int(table.cells.size());
    QCOMPARE(rows, 40);
    QCOMPARE(panel->skippedRows(), 0);
    const std::vector<double> xs = io::numericColumn(table, column(table, "x"));
    const std::vector<double> ys = io::numericColumn(table, column(table, "y"));
    const std::vector<double> peaks = io::numericColumn(table, column(table, "peak_flux"));
    for (int k = 0; k < rows; ++k)
      QVERIFY(std::abs(panel->positions()[size_t(k)][0] - xs[size_t(k)]) < 1e-3 &&
              std::abs(panel->positions()[size_t(k)][1] - ys[size_t(k)]) < 1e-3);

    // Matched within 6" (1.5 pixels of 4").
    const double radius = 6;
    panel->setMatchRadius(radius, true);
    QVERIFY(panel->arcsecUnit());
    QSignalSpy matched(panel, &ui::CatalogPanel::matched);
    panel->match();
    QVERIFY2(matched.count() > 0 || matched.wait(10000), qPrintable(panel->counts()));
    const compute::CrossMatch result = panel->result();
    const std::vector<compute::Source> found = sources->sources();
    QVERIFY2(found.size() >= 20,
             qPrintable(QString("%1 sources; %2").arg(found.size()).arg(panel->counts())));

    // The same by brute force: each catalog row's nearest source on the sky.
    const io::Wcs* wcs = w.stack()->wcs();
    const std::vector<double> ra = io::numericColumn(table, column(table, "ra"));
    const std::vector<double> dec = io::numericColumn(table, column(table, "dec"));
    int expectMatched = 0;
    std::set<size_t> used;
    for (int k = 0; k < rows; ++k) {
      double best = 1e9;
      size_t which = 0;
      for (size_t s = 0; s < found.size(); ++s) {
        double lng = 0, lat = 0;
        QVERIFY(wcs->celestial(found[s].centroidX, found[s].centroidY, w.slicePath()->currentZ(),
                               lng, lat));
        const double d = io::skySeparation(ra[size_t(k)], dec[size_t(k)], lng, lat) * 3600;
        if (d < best) best = d, which = s;
      }
      if (best <= radius) {
        ++expectMatched;
        used.insert(which);
      } else if (peaks[size_t(k)] >= 0.010) {
        // A bright source (10 σ of the 1 mJy noise) goes unmatched only when the segmentation
        // blended it with its neighbours or the extended emission into one larger source.
        const double x = xs[size_t(k)], y = ys[size_t(k)];
        const bool blended = std::any_of(found.begin(), found.end(), [&](const auto& s) {
          return s.npix > 60 && x >= s.xMin && x <= s.xMax && y >= s.yMin && y <= s.yMax;
        });
        QVERIFY2(blended, qPrintable(QString("row %1 (peak %2) unmatched: nearest %3\"")
                                         .arg(k)
                                         .arg(peaks[size_t(k)])
                                         .arg(best)));
      }
    }
    QCOMPARE(int(result.matched.size()), expectMatched);
    QVERIFY(expectMatched >= 20);
    QCOMPARE(int(result.unmatchedA.size()), rows - expectMatched);
    QCOMPARE(int(result.unmatchedB.size()), int(found.size() - used.size()));
    QVERIFY(!result.unmatchedB.empty());  // the extended source and the disk
    for (const compute::Match& m : result.matched) QVERIFY(m.separation <= radius);
    QCOMPARE(panel->counts(), QString("%1 matched, %2 catalog unmatched, %3 sources unmatched")
                                  .arg(expectMatched)
                                  .arg(rows - expectMatched)
                                  .arg(found.size() - used.size()));

    // Drawn in the match's colours: a matched row's circle green on its radius (5 pixels), an
    // unmatched source's cross yellow at its centroid, an unmatched row's circle red.
    const QImage frame = view->grabFramebuffer();
    auto onCircle = [&](int64_t row) {
      const auto& p = panel->positions()[size_t(row)];
      return view->imageToWidget({p[0] + panel->columns().markerRadius, p[1]});
    };
    QVERIFY(near(frame, onCircle(result.matched.front().a), 1, green));
    const compute::Source& lonely = found[size_t(result.unmatchedB.front())];
    QVERIFY(near(frame, view->imageToWidget({lonely.centroidX, lonely.centroidY}), 1, yellow));
    if (!result.unmatchedA.empty())
      QVERIFY(near(frame, onCircle(result.unmatchedA.front()), 1, red));

    // The matched table: every catalog column, then the source's and the separation.
    QTemporaryDir dir;
    const QString out = dir.filePath("matched.csv");
    QCOMPARE(panel->exportMatched(out), QString());
    const io::CatalogTable back = io::readCatalog(out.toStdString());
    QCOMPARE(int(back.cells.size()), expectMatched);
    QCOMPARE(back.columns.size(), table.columns.size() + 8);
    for (size_t k = 0; k < table.columns.size(); ++k) QCOMPARE(back.columns[k], table.columns[k]);
    for (const char* name : {"source_label", "source_x", "source_y", "source_flux", "source_peak",
                             "source_ra", "source_dec", "separation_arcsec"})
      QVERIFY2(column(back, name) >= 0, name);
    const auto first = result.matched.front();
    QCOMPARE(back.cells[0][0], table.cells[size_t(first.a)][0]);
    QCOMPARE(QString::fromStdString(back.cells[0][size_t(column(back, "source_label"))]).toInt(),
             found[size_t(first.b)].label);
    const std::vector<double> sx = io::numericColumn(back, column(back, "source_x"));
    const std::vector<double> bx = io::numericColumn(back, column(back, "x"));
    const std::vector<double> sep = io::numericColumn(back, column(back, "separation_arcsec"));
    for (size_t k = 0; k < back.cells.size(); ++k)
      QVERIFY(std::abs(sx[k] - bx[k]) <= 1.5 && sep[k] <= radius);

    // One-to-one uses each source once.
    panel->setOneToOne(true);
    matched.clear();
    panel->match();
    QVERIFY(matched.count() > 0 || matched.wait(10000));
    std::set<int64_t> once;
    for (const compute::Match& m : panel->result().matched) QVERIFY(once.insert(m.b).second);
    QVERIFY(int(panel->result().matched.size()) <= expectMatched);

    // Following the slice: another slice's sources are matched without asking.
    matched.clear();
    const int other = w.slicePath()->currentZ() == 0 ? 1 : 0;
    w.navigation()->setValue(other);
    QTRY_VERIFY_WITH_TIMEOUT(!matched.isEmpty() && matched.last().at(0).toInt() == other, 30000);
    QVERIFY(panel->result().matched.size() >= 20);  // flat spectra: the same sources
  }

  void pixelCatalogWithoutAWcsMatchesInPixels() {
    QTemporaryDir dir;
    std::vector<float> v(80 * 60, 0.f);
    v[0] = 1;
    const QString stack = dir.filePath("plain.tif");
    io::writeStack(stack.toStdString(), v.data(), 1, 60, 80, {});
    const QString csv = dir.filePath("stars.csv");
    {
      QFile f(csv);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("NUMBER,X_IMAGE,Y_IMAGE\n1,11,21\n2,41,31\n3,,5\n");
    }
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, stack, QSize(800, 600)));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    ui::CatalogPanel* panel = ui::installCatalogTool(&w);
    QSignalSpy imported(panel, &ui::CatalogPanel::imported);
    panel->importFile(csv);
    QVERIFY(imported.wait(10000));
    const ui::CatalogColumns choice = acceptColumnsDialog(panel);
    QCOMPARE(int(choice.frame), int(io::SkyFrame::Image));
    QVERIFY(choice.oneBased);  // SExtractor's X_IMAGE
    QCOMPARE(choice.x, 1);
    QCOMPARE(panel->positions()[0], (std::array<double, 2>{10, 20}));
    QCOMPARE(panel->skippedRows(), 1);
    QVERIFY(panel->status().contains("1 without a position"));
    QVERIFY(!panel->arcsecUnit());  // no WCS: pixels
    QVERIFY(near(view->grabFramebuffer(), view->imageToWidget({10 + choice.markerRadius, 20}), 1,
                 cyan));

    compute::Source a, b;
    a.label = 1, a.centroidX = 10.4, a.centroidY = 20.3;
    b.label = 2, b.centroidX = 60, b.centroidY = 50;
    QSignalSpy matched(panel, &ui::CatalogPanel::matched);
    panel->setSources({a, b}, 0);
    panel->setMatchRadius(1, false);
    panel->match();
    QVERIFY(matched.count() > 0 || matched.wait(10000));
    QCOMPARE(panel->counts(), QString("1 matched, 1 catalog unmatched, 1 sources unmatched "
                                      "(1 catalog rows not on the image)"));
    QCOMPARE(panel->result().matched.front().a, int64_t(0));
    QVERIFY(std::abs(panel->result().matched.front().separation - 0.5) < 1e-9);
    const QString out = dir.filePath("m.csv");
    QCOMPARE(panel->exportMatched(out), QString());
    const io::CatalogTable back = io::readCatalog(out.toStdString());
    QCOMPARE(int(back.cells.size()), 1);
    QCOMPARE(back.columns.back(), std::string("separation_px"));
    QCOMPARE(column(back, "source_ra"), -1);

    // Cancelling the columns of an import loads nothing.
    imported.clear();
    panel->importFile(csv);
    QVERIFY(imported.wait(10000));
    ui::CatalogColumnsDialog* dialog = openDialog(panel);
    QVERIFY(dialog);
    dialog->reject();
    QVERIFY(!panel->table());
    QVERIFY(!w.tool<ui::ViewDecorations>()->hasOverlay(ui::CatalogPanel::kOverlayKey));
  }
};

STACKLENS_GL_QTEST_MAIN(CatalogTest)
#include "catalog_qtest.moc"
