// Analysis ▸ Measure PSF from stars/beads… on a synthetic field of Gaussian stars of known FWHM:
// stars added by clicks on the view and from the sources table (the dock's "astronomy sources"
// preset) give a PSF whose FWHM is the stars' within 2 %; a position without a star is rejected
// with its reason (the list's tooltip, a red cross on the view); the markers are read back from
// the view's frame; "Use for deconvolution" puts the PSF (sum 1) in the dock; Save writes a file
// that reads back with the same pixels, the spacing and a HISTORY line. Beads in a 3D stack give
// the axial FWHM too. Segmentation off: the dialog detects sources itself and says how to turn
// the dock's on. Cancel stops a measurement and leaves no PSF.
#include <QAction>
#include <QMenu>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <random>

#include "io/stack.h"
#include "io/stack_writer.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/framebuffer_checks.h"
#include "tests/ui/open_in_window.h"
#include "ui/display/view_decorations.h"
#include "ui/frame/main_window.h"
#include "ui/frame/navigation_bar.h"
#include "ui/jobs/psf_measure_dialog.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"

using namespace stacklens;
using stacklens::testing::greenNear;

namespace {

constexpr double kFwhmPerSigma = 2.3548200450309493;

struct Star {
  double x, y, z, peak;
};

// Gaussian stars (sampled at the pixel centres) of the given FWHM on a background of 100 with
// Gaussian noise of σ 2, written as a stack of depth planes (1: an image).
std::vector<float> field(int depth, int height, int width, const std::vector<Star>& stars,
                         double fwhm, double fwhmZ) {
  std::mt19937 random(20);
  std::normal_distribution<float> noise(0, 2);
  std::vector<float> v(size_t(depth) * height * width);
  const double s = fwhm / kFwhmPerSigma, sz = fwhmZ / kFwhmPerSigma;
  for (int z = 0; z < depth; ++z)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        double value = 100 + noise(random);
        for (const Star& star : stars) {
          const double r2 = (x - star.x) * (x - star.x) + (y - star.y) * (y - star.y);
          const double dz = depth > 1 ? (z - star.z) / sz : 0;
          value += star.peak * std::exp(-r2 / (2 * s * s) - dz * dz / 2);
        }
        v[(size_t(z) * height + y) * width + x] = float(value);
      }
  return v;
}

// 16 stars on a 4 × 4 grid 37 pixels apart, off the pixel centres, of different brightness.
std::vector<Star> gridStars() {
  std::vector<Star> stars;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i)
      stars.push_back({24 + 37 * i + 0.1 * (i + 2 * j % 5), 24 + 37 * j + 0.13 * ((3 * i + j) % 7),
                       0, 400 + 110.0 * ((5 * i + 3 * j) % 16)});
  return stars;
}

bool redNear(const QImage& image, QPointF at, int radius) {
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      const QColor c = image.pixelColor(int(at.x()) + dx, int(at.y()) + dy);
      if (c.red() > 200 && c.green() < 100 && c.blue() < 100) return true;
    }
  return false;
}

void clickPixel(render::SliceView* view, QPointF pixel) {
  QTest::mouseClick(view, Qt::LeftButton, {}, view->imageToWidget(pixel).toPoint());
}

ui::PsfMeasureDialog* openFromMenu(ui::MainWindow& w) {
  ui::installPsfMeasureTool(&w);
  auto* action = w.analysisMenu()->findChild<QAction*>("analysisMeasurePsf");
  if (!action) action = w.findChild<QAction*>("analysisMeasurePsf");
  if (!action) return nullptr;
  action->trigger();
  return w.findChild<ui::PsfMeasureDialog*>();
}

// A stack of one bead (field()) written as dir/bead.tif; its path.
QString writeBeadStack(const QTemporaryDir& dir, int nz, int n, const Star& bead, double fwhm,
                       double fwhmZ) {
  const std::vector<float> pixels = field(nz, n, n, {bead}, fwhm, fwhmZ);
  const QString path = dir.filePath("bead.tif");
  io::writeStack(path.toStdString(), pixels.data(), nz, n, n, {});
  return path;
}

}  // namespace

class PsfMeasureTest : public QObject {
  Q_OBJECT
 private slots:
  void starsFromClicksAndSourcesGiveTheirFwhm() {
    QTemporaryDir dir;
    const int n = 160;
    const double fwhm = 4.0;
    const std::vector<Star> stars = gridStars();
    const std::vector<float> pixels = field(1, n, n, stars, fwhm, 0);
    io::WriteOptions options;
    options.spacing = {1, 0.5, 0.5};
    options.units = {"arcsec", "arcsec", "arcsec"};
    options.spacingKnown = true;
    const QString path = dir.filePath("stars.fits");
    io::writeStack(path.toStdString(), pixels.data(), 1, n, n, options);
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, path, QSize(1000, 800)));
    ui::PsfMeasureDialog* dialog = openFromMenu(w);
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    QCOMPARE(ui::openPsfMeasure(&w), dialog);  // one dialog per window

    // Three stars by clicking on the view.
    render::SliceView* view = w.sliceView();
    dialog->setAddByClicking(true);
    // Clicks at the stars' pixels (the library centres them to a fraction of a pixel later).
    for (int k : {0, 5, 10}) clickPixel(view, {std::round(stars[k].x), std::round(stars[k].y)});
    QTRY_COMPARE_WITH_TIMEOUT(int(dialog->stars().size()), 3, 30000);
    for (int i = 0; i < 3; ++i) {
      const Star& want = stars[size_t(i * 5)];
      QCOMPARE(dialog->stars()[size_t(i)].x, std::round(want.x));
      QCOMPARE(dialog->stars()[size_t(i)].y, std::round(want.y));
    }
    dialog->setAddByClicking(false);
    clickPixel(view, {80, 80});  // moves the crosshair only
    QTest::qWait(50);
    QCOMPARE(int(dialog->stars().size()), 3);

    // The rest from the sources table: the clicked ones are not added twice.
    QSignalSpy picked(dialog, &ui::PsfMeasureDialog::picked);
    w.tool<ui::LiveProcessing>()->dock()->applyPreset("astronomy sources");
    dialog->pickFromSources();
    QVERIFY2(picked.count() > 0 || picked.wait(20000), qPrintable(dialog->status()));
    QCOMPARE(int(dialog->stars().size()), int(stars.size()));
    for (const Star& star : stars) {
      bool found = false;
      for (const auto& s : dialog->stars())
        found = found || std::hypot(s.x - star.x, s.y - star.y) < 1.0;
      QVERIFY2(found, qPrintable(QString("no star near %1, %2").arg(star.x).arg(star.y)));
    }
    // A position without a star: rejected, with its reason.
    dialog->addStar({42, 42, 0});
    QCOMPARE(int(dialog->stars().size()), int(stars.size()) + 1);

    QSignalSpy measured(dialog, &ui::PsfMeasureDialog::measured);
    dialog->measure();
    QVERIFY2(measured.count() > 0 || measured.wait(30000), qPrintable(dialog->status()));
    const compute::psf::MeasuredPsf& result = dialog->result();
    QCOMPARE(result.used, int(stars.size()));
    qInfo("FWHM x %.4f, y %.4f px (truth %.1f); %s", result.fwhmX, result.fwhmY, fwhm,
          qPrintable(dialog->fwhmText()));
    QVERIFY(std::abs(result.fwhmX / fwhm - 1) < 0.02);
    QVERIFY(std::abs(result.fwhmY / fwhm - 1) < 0.02);
    QVERIFY2(dialog->fwhmText().contains("arcsec"), qPrintable(dialog->fwhmText()));
    const int rejectedRow = int(stars.size());
    const QTableWidgetItem* status =
        dialog->starTable()->item(rejectedRow, ui::PsfMeasureDialog::Status);
    QVERIFY(status->text().startsWith("rejected"));
    QVERIFY(!status->toolTip().isEmpty());
    QCOMPARE(status->toolTip().toStdString(), result.stars.back().reason);
    QCOMPARE(dialog->starTable()->item(0, ui::PsfMeasureDialog::Status)->text(), QString("used"));

    // The markers over the view: a green circle of the cut-out's radius about each star, a red
    // one about the rejected position, nothing between the stars.
    const compute::Shape s = result.psf.shape();
    QCOMPARE(s.z, int64_t(1));
    QVERIFY(s.x % 2 == 1 && s.x == s.y);
    const double r = double(s.x / 2);
    const QImage frame = view->grabFramebuffer();
    for (int k : {0, 7, 15})
      QVERIFY2(greenNear(frame, view->imageToWidget({stars[k].x + r, stars[k].y}), 2),
               qPrintable(QString("star %1").arg(k)));
    QVERIFY(redNear(frame, view->imageToWidget({42 - r, 42}), 2));
    QVERIFY(!greenNear(frame, view->imageToWidget({79.5, 42.5}), 3));
    QVERIFY(!redNear(frame, view->imageToWidget({79.5, 42.5}), 3));

    // Use for deconvolution: the dock's PSF is this one, sum 1.
    dialog->useButton()->click();
    ui::ProcessingDock* dock = w.tool<ui::LiveProcessing>()->dock();
    const compute::Image& psf = dock->pipeline().deconvolution.psf;
    QCOMPARE(psf.shape(), s);
    double sum = 0;
    for (int64_t i = 0; i < psf.shape().count(); ++i) sum += psf.data()[i];
    QVERIFY(std::abs(sum - 1) < 1e-5);
    QVERIFY(dock->psfName().contains(QString("measured from %1 stars").arg(stars.size())));

    // Saved: the same pixels, the spacing, the stars in HISTORY.
    QSignalSpy saved(dialog, &ui::PsfMeasureDialog::saved);
    const QString out = dir.filePath("psf.fits");
    dialog->save(out);
    QVERIFY(saved.count() > 0 || saved.wait(10000));
    QCOMPARE(saved.last().at(1).toString(), QString());
    auto reader = io::openStack(out.toStdString());
    QCOMPARE(reader->info().y, s.y);
    QCOMPARE(reader->info().x, s.x);
    QVERIFY(reader->info().spacingKnown);
    QVERIFY(std::abs(reader->info().spacing[2] - 0.5) < 1e-9);
    std::vector<float> back(size_t(s.sliceCount()));
    reader->readSlice(0, back.data());
    for (int64_t i = 0; i < s.sliceCount(); ++i) QCOMPARE(back[size_t(i)], result.psf.data()[i]);
    bool history = false;
    for (const auto& card : reader->info().header)
      history = history || QString::fromStdString(card.key + " " + card.value + " " + card.comment)
                               .contains("measured PSF");
    QVERIFY(history);
  }

  void beadsInAStackGiveTheAxialFwhm() {
    QTemporaryDir dir;
    const int nz = 64, n = 96;
    const double fwhm = 3.5, fwhmZ = 7.0;
    std::vector<Star> beads;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i)
        beads.push_back({22 + 26 * i + 0.2 * i, 22 + 26 * j + 0.15 * j, 30 + (i + j) % 3 + 0.3 * j,
                         600 + 150.0 * ((2 * i + j) % 5)});
    const std::vector<float> pixels = field(nz, n, n, beads, fwhm, fwhmZ);
    io::WriteOptions options;
    options.spacing = {0.3, 0.1, 0.1};
    options.units = {"um", "um", "um"};
    options.spacingKnown = true;
    const QString path = dir.filePath("beads.tif");
    io::writeStack(path.toStdString(), pixels.data(), nz, n, n, options);
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, path, QSize(1000, 800)));
    ui::PsfMeasureDialog* dialog = ui::openPsfMeasure(&w);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    dialog->setMode(ui::PsfMeasureDialog::Mode::Beads3D);
    QVERIFY(!dialog->starTable()->isColumnHidden(ui::PsfMeasureDialog::Z));

    // The first bead clicked on its slice, the others given near their centres.
    QSignalSpy shown(w.slicePath(), &ui::SlicePath::sliceShown);
    const int z0 = int(std::lround(beads[0].z));
    if (w.slicePath()->currentZ() != z0) {
      w.navigation()->setValue(z0);
      QTRY_COMPARE_WITH_TIMEOUT(w.slicePath()->currentZ(), z0, 10000);
    }
    dialog->setAddByClicking(true);
    clickPixel(w.sliceView(), {beads[0].x, beads[0].y});
    QTRY_COMPARE_WITH_TIMEOUT(int(dialog->stars().size()), 1, 30000);
    QCOMPARE(dialog->stars()[0].z, double(z0));
    for (size_t k = 1; k < beads.size(); ++k)
      dialog->addStar({std::round(beads[k].x), std::round(beads[k].y), std::round(beads[k].z)});
    QCOMPARE(dialog->stars().size(), beads.size());

    QSignalSpy measured(dialog, &ui::PsfMeasureDialog::measured);
    dialog->measure();
    QVERIFY2(measured.count() > 0 || measured.wait(60000), qPrintable(dialog->status()));
    const compute::psf::MeasuredPsf& result = dialog->result();
    QCOMPARE(result.used, int(beads.size()));
    qInfo("FWHM x %.4f, y %.4f, z %.4f px (truth %.1f, %.1f); %s", result.fwhmX, result.fwhmY,
          result.fwhmZ, fwhm, fwhmZ, qPrintable(dialog->fwhmText()));
    QVERIFY(std::abs(result.fwhmX / fwhm - 1) < 0.02);
    QVERIFY(std::abs(result.fwhmY / fwhm - 1) < 0.02);
    QVERIFY(std::abs(result.fwhmZ / fwhmZ - 1) < 0.02);
    QVERIFY(result.psf.shape().z > 1);
    QVERIFY(dialog->sectionPreview()->sliceHeight() == int(result.psf.shape().z));
    // The XZ section's brightest pixel is its centre.
    const QImage section = dialog->sectionPreview()->grabFramebuffer();
    const QPointF c = dialog->sectionPreview()->imageToWidget(
        {double(result.psf.shape().x / 2), double(result.psf.shape().z / 2)});
    const QPointF edge = dialog->sectionPreview()->imageToWidget({1, 1});
    QVERIFY(qGray(section.pixel(c.toPoint())) > qGray(section.pixel(edge.toPoint())));

    dialog->useButton()->click();
    const compute::Image& psf = w.tool<ui::LiveProcessing>()->dock()->pipeline().deconvolution.psf;
    QCOMPARE(psf.shape(), result.psf.shape());
    QVERIFY(w.tool<ui::LiveProcessing>()->dock()->psfName().contains("beads"));
  }

  // Nothing to measure yet, or a 3D stack without a file: the dialog says why and starts nothing.
  void refusesWhatItCannotMeasureByReason() {
    ui::MainWindow empty;
    ui::PsfMeasureDialog* none = ui::openPsfMeasure(&empty);
    none->addStar({5, 5, 0});
    none->measure();
    QVERIFY(!none->running());
    QVERIFY2(none->status().contains("Open a stack first"), qPrintable(none->status()));

    QTemporaryDir dir;
    const QString path = writeBeadStack(dir, 4, 32, {16, 16, 2, 800}, 2.0, 2.0);
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, path, QSize(400, 300)));
    ui::PsfMeasureDialog* dialog = ui::openPsfMeasure(&w);
    dialog->measure();
    QVERIFY(!dialog->running());
    QVERIFY2(dialog->status().contains("Add stars first"), qPrintable(dialog->status()));
  }

  void cancelStopsAMeasurement() {
    QTemporaryDir dir;
    const QString path = writeBeadStack(dir, 120, 128, {64, 64, 60, 800}, 3.0, 6.0);
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, path, QSize(800, 600)));
    ui::PsfMeasureDialog* dialog = ui::openPsfMeasure(&w);
    dialog->setMode(ui::PsfMeasureDialog::Mode::Beads3D);
    dialog->addStar({64, 64, 60});
    QSignalSpy cancelled(dialog, &ui::PsfMeasureDialog::cancelled);
    dialog->measure();
    QVERIFY(dialog->running());
    QVERIFY(!dialog->measureButton()->isEnabled());
    dialog->cancel();  // before the worker has read the stack
    QVERIFY2(cancelled.count() > 0 || cancelled.wait(10000), qPrintable(dialog->status()));
    QVERIFY(!dialog->running());
    QVERIFY(dialog->result().psf.empty());
    QVERIFY(!dialog->useButton()->isEnabled());
    QVERIFY(dialog->measureButton()->isEnabled());
  }

  void segmentsItselfWhenTheDockDoesNot() {
    QTemporaryDir dir;
    const int n = 160;
    const std::vector<Star> stars = gridStars();
    const std::vector<float> pixels = field(1, n, n, stars, 4.0, 0);
    const QString path = dir.filePath("stars.fits");
    io::writeStack(path.toStdString(), pixels.data(), 1, n, n, {});
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, path, QSize(1000, 800)));
    QVERIFY(!w.tool<ui::LiveProcessing>()->dock()->pipeline().segmentation.enabled);
    ui::PsfMeasureDialog* dialog = ui::openPsfMeasure(&w);
    dialog->pickCountBox()->setValue(5);
    QSignalSpy picked(dialog, &ui::PsfMeasureDialog::picked);
    dialog->pickFromSources();
    QVERIFY(dialog->status().contains("Segmentation is off"));
    QVERIFY(picked.count() > 0 || picked.wait(20000));
    QCOMPARE(int(dialog->stars().size()), 5);
    // The brightest first.
    double brightest = 0;
    for (const Star& s : stars) brightest = std::max(brightest, s.peak);
    bool first = false;
    for (const Star& s : stars)
      if (s.peak == brightest)
        first = std::hypot(dialog->stars()[0].x - s.x, dialog->stars()[0].y - s.y) < 1;
    QVERIFY(first);
    // Closing removes the markers from the view.
    QVERIFY(w.tool<ui::ViewDecorations>()->hasOverlay(ui::PsfMeasureDialog::kOverlayKey));
    dialog->close();
    QVERIFY(!w.tool<ui::ViewDecorations>()->hasOverlay(ui::PsfMeasureDialog::kOverlayKey));
  }
};

STACKLENS_GL_QTEST_MAIN(PsfMeasureTest)
#include "psf_measure_qtest.moc"
