// The processing dock maps widgets to a pipeline (presets, PSF files, GPU availability) and the
// sources panel sorts, activates, and exports what segmentation found.
#include <QApplication>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "io/stack.h"
#include "io/wcs.h"
#include "ui/live/processing_dock.h"
#include "ui/live/sources_panel.h"

using namespace stacklens;
using ui::ProcessingDock;
using ui::SourcesPanel;

namespace {

compute::Source source(int label, double x, double y, double flux, int64_t npix) {
  compute::Source s;
  s.label = label;
  s.centroidX = x;
  s.centroidY = y;
  s.flux = flux;
  s.npix = npix;
  s.peak = float(flux / 2);
  return s;
}

}  // namespace

class ProcessingDockTest : public QObject {
  Q_OBJECT
 private slots:
  void gpuChoiceFollowsCudaAvailability() {
    ProcessingDock dock;
    std::string why;
    const bool usable = compute::cudaUsable(&why);
    QCOMPARE(dock.gpuAvailable(), usable);
    auto* model = qobject_cast<QStandardItemModel*>(dock.backendBox()->model());
    QVERIFY(model);
    const QStandardItem* gpu = model->item(1);
    QCOMPARE(bool(gpu->flags() & Qt::ItemIsEnabled), usable);
    if (!usable) {
      QVERIFY(gpu->toolTip().contains(QString::fromStdString(why)));
      dock.setBackendChoice(ProcessingDock::BackendChoice::Gpu);
      QCOMPARE(dock.backendChoice(), ProcessingDock::BackendChoice::Cpu);
      QVERIFY(dock.statusLabel()->text().contains("GPU unavailable"));
    }
  }

  void presetsAndEditsBecomeThePipeline() {
    ProcessingDock dock;
    QVERIFY(!dock.pipeline().anyEnabled());
    QSignalSpy changed(&dock, &ProcessingDock::pipelineChanged);
    dock.applyPreset("microscopy deconvolution");
    QCOMPARE(changed.count(), 1);
    compute::Pipeline p = dock.pipeline();
    QVERIFY(p.deconvolution.enabled);
    QCOMPARE(p.deconvolution.params.iterations, 20);
    QCOMPARE(p.fingerprint(), compute::preset("microscopy deconvolution").fingerprint());
    QCOMPARE(dock.presetBox()->currentText(), QString("microscopy deconvolution"));

    dock.applyPreset("astronomy sources");
    QCOMPARE(dock.pipeline().fingerprint(), compute::preset("astronomy sources").fingerprint());
    // An edit makes it a custom pipeline.
    const auto groups = dock.findChildren<QGroupBox*>();
    QGroupBox* median = nullptr;
    for (auto* g : groups)
      if (g->title() == "Median filter") median = g;
    QVERIFY(median);
    median->setChecked(true);
    QCOMPARE(dock.presetBox()->currentIndex(), 0);
    QVERIFY(dock.pipeline().median.enabled);
    QCOMPARE(changed.count(), 3);

    // Round trip of a non-default pipeline through the widgets.
    compute::Pipeline q;
    q.outliers.enabled = true;
    q.outliers.params.size = 5;
    q.outliers.params.threshold = 12.5;
    q.outliers.params.mode = compute::OutlierMode::Dark;
    q.blur.enabled = true;
    q.blur.params.sigmaZ = 1.5;
    q.deconvolution.enabled = true;
    q.deconvolution.params.threeD = true;
    q.deconvolution.params.iterations = 7;
    q.deconvolution.slabHalfWidth = 3;
    q.deconvolution.autoBoundary = false;
    q.deconvolution.params.boundary = compute::Boundary::Periodic;
    q.segmentation.enabled = true;
    q.segmentation.params.connectivity = 4;
    q.segmentation.params.minPixels = 9;
    dock.setPipeline(q);
    QCOMPARE(dock.pipeline().fingerprint(), q.fingerprint());
    QVERIFY(!dock.pipeline().deconvolution.autoBoundary);
    QCOMPARE(dock.pipeline().deconvolution.params.boundary, compute::Boundary::Periodic);
    // Auto, the default as in stacklens-cli deconvolve, comes back as auto.
    q.deconvolution.autoBoundary = true;
    dock.setPipeline(q);
    QVERIFY(dock.pipeline().deconvolution.autoBoundary);
    QCOMPARE(compute::deconvolutionParams(dock.pipeline()).boundary,
             compute::Boundary::ReflectExact);
    QVERIFY(ProcessingDock().pipeline().deconvolution.autoBoundary);
  }

  void loadsThePsfFileThroughIo() {
    ProcessingDock dock;
    QString error;
    QVERIFY2(dock.loadPsf(STACKLENS_SHARED_DATA "/psf_rfi_8bit_imagej.tif", &error),
             qPrintable(error));
    dock.applyPreset("microscopy deconvolution");
    const compute::Pipeline p = dock.pipeline();
    QCOMPARE(p.deconvolution.psf.shape(), (compute::Shape{61, 32, 32}));
    QVERIFY(p.deconvolution.params.threeD);  // a 3D PSF gives 3D deconvolution
    double sum = 0;
    for (int64_t i = 0; i < p.deconvolution.psf.shape().count(); ++i)
      sum += p.deconvolution.psf.data()[i];
    QVERIFY(std::abs(sum - 1.0) < 1e-4);

    QTemporaryDir dir;
    const QString bad = dir.filePath("not_a_psf.tif");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("garbage");
    f.close();
    QVERIFY(!dock.loadPsf(bad, &error));
    QVERIFY(error.contains("not_a_psf.tif"));
    QCOMPARE(dock.pipeline().deconvolution.psf.shape(), (compute::Shape{61, 32, 32}));  // kept
  }

  void sourcesTableSortsActivatesAndExports() {
    SourcesPanel panel;
    const std::vector<compute::Source> sources = {
        source(1, 10.5, 20.25, 300, 12), source(2, 3, 4, 900, 3), source(3, 50, 60, 100, 40)};
    panel.showSources(sources, 4, nullptr);
    QTableWidget* t = panel.table();
    QCOMPARE(t->rowCount(), 3);
    QVERIFY(t->isColumnHidden(SourcesPanel::World));  // no WCS
    t->sortItems(SourcesPanel::Flux, Qt::DescendingOrder);
    QCOMPARE(t->item(0, SourcesPanel::Label)->text(), QString("2"));
    QCOMPARE(t->item(2, SourcesPanel::Label)->text(), QString("3"));
    t->sortItems(SourcesPanel::Npix, Qt::AscendingOrder);  // numeric: 3 < 12 < 40
    QCOMPARE(t->item(0, SourcesPanel::Npix)->text(), QString("3"));
    QCOMPARE(t->item(2, SourcesPanel::Npix)->text(), QString("40"));

    QSignalSpy activated(&panel, &SourcesPanel::sourceActivated);
    t->sortItems(SourcesPanel::Label, Qt::AscendingOrder);
    emit t->cellClicked(0, SourcesPanel::Flux);
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.first().at(0).toPointF(), QPointF(10.5, 20.25));

    const QStringList reg = panel.ds9Regions().trimmed().split('\n');
    QVERIFY(reg[0].startsWith("# Region file format: DS9"));
    QVERIFY(reg.contains("image"));
    // 1-based centre; area-equivalent radius √(12/π) = 1.95 → at least 2; √(40/π) = 3.57.
    QVERIFY(reg.contains("circle(11.500,21.250,2.00) # text={1}"));
    QVERIFY(reg.contains("circle(51.000,61.000,3.57) # text={3}"));
    QTemporaryDir dir;
    QString error;
    QVERIFY(panel.exportCsv(dir.filePath("s.csv"), &error));
    QFile csv(dir.filePath("s.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split('\n');
    QCOMPARE(lines.size(), 4);
    QVERIFY(lines[1].startsWith("1,4,10.5,20.25,\"\",300,12,"));
    QVERIFY(!panel.exportRegions(dir.filePath("no/such/dir.reg"), &error));
    QVERIFY(error.contains("no/such/dir.reg"));
  }

  void manySourcesShowTheBrightestAndExportAll() {
    SourcesPanel panel;
    std::vector<compute::Source> sources;
    for (int i = 0; i < 2500; ++i)
      sources.push_back(source(i + 1, i, i, double((i * 37) % 2500), 4));
    panel.showSources(sources, 0, nullptr);
    QCOMPARE(panel.table()->rowCount(), int(SourcesPanel::kMaxRows));
    panel.table()->sortItems(SourcesPanel::Flux, Qt::AscendingOrder);
    // Fluxes are a permutation of 0..2499: the 2000 brightest start at 500.
    QCOMPARE(panel.table()->item(0, SourcesPanel::Flux)->data(Qt::UserRole).toDouble(), 500.0);
    QCOMPARE(panel.asCsv().trimmed().split('\n').size(), 2501);
  }

  void worldCoordinatesComeFromTheFilesWcs() {
    auto reader = io::openStack(STACKLENS_SHARED_DATA "/HorseHead.fits");
    QVERIFY(reader->wcs());
    SourcesPanel panel;
    panel.showSources({source(1, 446, 445, 10, 5)}, 0, reader->wcs());
    QVERIFY(!panel.table()->isColumnHidden(SourcesPanel::World));
    const QString world = panel.table()->item(0, SourcesPanel::World)->text();
    QCOMPARE(world, QString::fromStdString(reader->wcs()->formatCelestial(446, 445, 0)));
    QVERIFY(world.contains("RA"));
    compute::ClipStats stats;
    stats.clipped.median = 1234.5;
    stats.clipped.std = 6.25;
    stats.iterations = 4;
    panel.showBackground(stats, 0);
    QVERIFY(panel.background().contains("1234.5"));
    QVERIFY(panel.background().contains("4 iterations"));
  }
};

QTEST_MAIN(ProcessingDockTest)
#include "processing_dock_qtest.moc"
