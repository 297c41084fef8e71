// Image ▸ Z projection / moment map…: the dialog writes projections of raw and processed slices
// with the closed-form values of the test stack, Cancel writes nothing, and from the viewer the
// bundled radio cube's moment map reaches the timing panel and opens with the values a direct
// computation gives (read back from the shown image).
#include <QApplication>
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "compute/backend.h"
#include "io/stack.h"
#include "io/z_coordinate.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/memory_stack.h"
#include "ui/frame/main_window.h"
#include "ui/jobs/projection_dialog.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"
#include "ui/live/timing_panel.h"

using namespace stacklens;
using stacklens::testing::MemoryStack;
using ui::ProjectionDialog;
using ui::ProjectionRequest;

namespace {

std::unique_ptr<compute::Backend> oneThread() { return compute::makeCpuBackend(1); }

std::vector<float> readImage(const QString& path, int64_t y, int64_t x) {
  auto r = io::openStack(path.toStdString());
  if (r->info().z != 1 || r->info().y != y || r->info().x != x) return {};
  std::vector<float> v(size_t(y * x));
  r->readSlice(0, v.data());
  return v;
}

}  // namespace

class ProjectionDialogTest : public QObject {
  Q_OBJECT
 private slots:
  // The memory stack holds 100 z + 10 y + x: over slices 2..5 the max is 500 + 10 y + x, the
  // median 350 + ..., the std sqrt(12500) everywhere.
  void projectionsOfARangeHaveTheirClosedForms() {
    QTemporaryDir dir;
    ProjectionRequest request;
    request.reader = std::make_shared<MemoryStack>(8, 6, 7);
    ProjectionDialog dialog(request, oneThread, nullptr, "CPU");
    QVERIFY(!dialog.compareBox());
    dialog.firstBox()->setValue(2);
    dialog.lastBox()->setValue(5);
    QVERIFY(!dialog.clipBox()->isEnabled());  // projections have no clip
    struct Case {
      int kind;
      std::function<double(int, int)> want;
    };
    const Case cases[] = {{0, [](int y, int x) { return 500.0 + 10 * y + x; }},
                          {5, [](int y, int x) { return 350.0 + 10 * y + x; }},
                          {4, [](int, int) { return std::sqrt(12500.0); }}};
    for (const Case& c : cases) {
      dialog.kindBox()->setCurrentIndex(c.kind);
      const QString out = dir.filePath(QString("p%1.fits").arg(c.kind));
      dialog.outputEdit()->setText(out);
      QSignalSpy finished(&dialog, &ProjectionDialog::finished);
      dialog.start();
      QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
      const std::vector<float> got = readImage(out, 6, 7);
      QCOMPARE(got.size(), size_t(42));
      for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 7; ++x) QVERIFY(std::abs(got[size_t(y * 7 + x)] - c.want(y, x)) < 1e-3);
      const auto outcome = finished.first().at(1).value<ui::ProjectionOutcome>();
      QCOMPARE(QString::fromStdString(outcome.backend), QString("cpu"));
    }
  }

  // "Processed" projects what the pipeline shows at each slice (here a blur): the max of the
  // blurred ramp is its last slice, blurred.
  void processedSlicesComeFromThePipeline() {
    QTemporaryDir dir;
    auto stack = std::make_shared<MemoryStack>(5, 6, 7);
    ProjectionRequest request;
    request.reader = stack;
    compute::Pipeline pipeline;
    pipeline.blur.enabled = true;
    pipeline.blur.params.sigmaY = pipeline.blur.params.sigmaX = 2.0;
    request.pipeline = pipeline;
    ProjectionDialog dialog(request, oneThread, oneThread, "CPU");
    QVERIFY(dialog.compareBox() && dialog.compareBox()->isChecked());
    dialog.dataBox()->setCurrentIndex(1);
    QVERIFY(dialog.outputEdit()->text().endsWith("memory_processed_max.fits"));
    const QString out = dir.filePath("processed.fits");
    dialog.outputEdit()->setText(out);
    QSignalSpy finished(&dialog, &ProjectionDialog::finished);
    dialog.start();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    auto cpu = oneThread();
    compute::Image last = compute::Image::host({1, 6, 7});
    stack->readSlice(4, last.data());
    const compute::Image want = cpu->gaussianBlur(last, pipeline.blur.params);
    const std::vector<float> got = readImage(out, 6, 7);
    QCOMPARE(got.size(), size_t(42));
    for (size_t i = 0; i < got.size(); ++i) QVERIFY(std::abs(got[i] - want.data()[i]) < 1e-3);
    const auto outcome = finished.first().at(1).value<ui::ProjectionOutcome>();
    QVERIFY(std::isfinite(outcome.cpuMilliseconds));  // the twin ran
    QCOMPARE(outcome.relL2, 0.0);                     // on the same data, the same result
  }

  // Processed slices are held for the range: a range beyond the host budget is refused, named.
  void aProcessedRangeBeyondTheBudgetIsRefused() {
    QTemporaryDir dir;
    ProjectionRequest request;
    request.reader = std::make_shared<MemoryStack>(6, 32, 32);
    compute::Pipeline pipeline;
    pipeline.median.enabled = true;
    request.pipeline = pipeline;
    request.ramBudget = 4 * 32 * 32 * 4;  // four slices
    ProjectionDialog dialog(request, oneThread, nullptr, "CPU");
    dialog.dataBox()->setCurrentIndex(1);
    dialog.outputEdit()->setText(dir.filePath("too_big.fits"));
    QSignalSpy failed(&dialog, &ProjectionDialog::failed);
    dialog.start();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
    QVERIFY(failed.first().at(0).toString().contains("host memory budget"));
    QVERIFY(!QFile::exists(dir.filePath("too_big.fits")));
    // Three slices fit.
    dialog.firstBox()->setValue(1);
    dialog.lastBox()->setValue(3);
    QSignalSpy finished(&dialog, &ProjectionDialog::finished);
    dialog.start();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
  }

  void cancelWritesNothing() {
    QTemporaryDir dir;
    ProjectionRequest request;
    request.reader = std::make_shared<MemoryStack>(64, 256, 256);
    ProjectionDialog dialog(request, oneThread, nullptr, "CPU");
    dialog.kindBox()->setCurrentIndex(5);  // median: long enough to cancel
    dialog.outputEdit()->setText(dir.filePath("cancelled.fits"));
    QSignalSpy cancelled(&dialog, &ProjectionDialog::cancelled);
    dialog.start();
    dialog.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 20000);
    QVERIFY(!dialog.running());
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 0);
  }

  // From the viewer: moment 1 of the bundled radio cube in km/s, its row in the timing panel,
  // and the opened result showing the values a direct computation gives.
  void theRadioCubesMomentMapOpensInTheViewer() {
    const QString cubePath = QStringLiteral(STACKLENS_SAMPLE_DIR "/radio_cube.fits");
    if (!QFileInfo::exists(cubePath)) QSKIP("the bundled samples are not built");
    QTemporaryDir dir;
    ui::MainWindow w;
    w.setQuiet(true);
    w.show();
    QSignalSpy opened(&w, &ui::MainWindow::stackOpened);
    w.openFile(cubePath);
    QVERIFY(opened.wait(10000));
    ProjectionDialog* dialog = ui::openProjection(&w);
    QVERIFY(dialog);
    dialog->kindBox()->setCurrentIndex(7);  // moment 1
    dialog->clipBox()->setChecked(true);
    dialog->clipValueBox()->setValue(0.005);
    const QString out = dir.filePath("moment1.fits");
    dialog->outputEdit()->setText(out);
    dialog->start();
    QVERIFY(opened.wait(20000));
    QCOMPARE(opened.last().at(0).toString(), out);
    const auto& rows = w.tool<ui::LiveProcessing>()->timingPanel()->rows();
    QVERIFY(!rows.empty() && rows.back().stage.startsWith("Moment 1 (0–31)"));
    QVERIFY(std::isfinite(rows.back().cpuMs) || std::isfinite(rows.back().gpuTotalMs));
    // A direct computation on the cube, in km/s.
    auto cube = io::openStack(cubePath.toStdString());
    const int64_t nz = cube->info().z, ny = cube->info().y, nx = cube->info().x;
    compute::Image volume = compute::Image::host({nz, ny, nx});
    for (int64_t z = 0; z < nz; ++z) cube->readSlice(z, volume.slice(z));
    compute::MomentParams p;
    p.order = 1;
    p.clip = 0.005;
    p.coordinate = io::zCoordinate(*cube).values;
    const compute::Image want = oneThread()->moment(volume, p);
    QTRY_VERIFY(w.slicePath()->currentSlice() &&
                w.slicePath()->currentSlice()->size() == size_t(ny * nx));
    const std::vector<float>& shown = *w.slicePath()->currentSlice();
    int compared = 0;
    for (int64_t i = 0; i < ny * nx; ++i) {
      const float a = shown[size_t(i)], b = want.data()[i];
      QVERIFY((std::isnan(a) && std::isnan(b)) || std::abs(a - b) <= 1e-4 * (1 + std::abs(b)));
      compared += !std::isnan(b);
    }
    QVERIFY(compared > 100);
    QCOMPARE(w.info().z, int64_t(1));
    bool kmPerS = false;
    for (const auto& c : w.info().header) kmPerS |= c.key == "BUNIT" && c.value == "'km/s'";
    QVERIFY(kmPerS);
  }
};

STACKLENS_GL_QTEST_MAIN(ProjectionDialogTest)

#include "projection_dialog_qtest.moc"
