// The PSF generator: a Moffat star and a Born & Wolf PSF made by the dialog are the models'
// (compute/psf, tested against closed forms on their own), previewed at the central plane
// (read back: brightest at the centre), used for deconvolution by the processing dock of the
// viewer, and saved with their spacing; hidden fields follow the model; Cancel stops a large one.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "io/stack.h"
#include "tests/render/gl_qtest_main.h"
#include "ui/frame/main_window.h"
#include "ui/jobs/psf_dialog.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"

using namespace stacklens;

class PsfDialogTest : public QObject {
  Q_OBJECT
 private slots:
  void makesUsesAndSavesThePsf() {
    ui::MainWindow w;
    w.setQuiet(true);
    w.show();
    ui::PsfDialog* dialog = ui::openPsfGenerator(&w);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    dialog->modelBox()->setCurrentIndex(1);  // Moffat
    QVERIFY(dialog->field("beta")->isVisible());
    QVERIFY(!dialog->field("na")->isVisible());
    dialog->field("fwhm")->setValue(4);
    dialog->field("beta")->setValue(3);
    dialog->sizeBox()->setValue(21);
    QSignalSpy finished(dialog, &ui::PsfDialog::finished);
    dialog->start();
    QVERIFY(finished.wait(10000));
    const compute::Image want = compute::psf::starPsf(dialog->starParams());
    QCOMPARE(dialog->psf().shape(), (compute::Shape{1, 21, 21}));
    for (int64_t i = 0; i < want.shape().count(); ++i)
      QCOMPARE(dialog->psf().data()[i], want.data()[i]);
    // The preview: brightest at the centre.
    const QImage preview = dialog->preview()->grabFramebuffer();
    const QPointF c = dialog->preview()->imageToWidget({10, 10});
    const QPointF edge = dialog->preview()->imageToWidget({2, 10});
    QVERIFY(qGray(preview.pixel(c.toPoint())) > qGray(preview.pixel(edge.toPoint())));

    // Use it: the dock deconvolves with it.
    dialog->useButton()->click();
    const compute::Pipeline p = w.tool<ui::LiveProcessing>()->dock()->pipeline();
    QCOMPARE(p.deconvolution.psf.shape(), want.shape());
    QCOMPARE(p.deconvolution.psf.data()[10 * 21 + 10], want.data()[10 * 21 + 10]);

    // A microscope PSF, saved with its spacing.
    dialog->modelBox()->setCurrentIndex(2);  // Born & Wolf
    QVERIFY(dialog->field("na")->isVisible());
    dialog->sizeBox()->setValue(17);
    dialog->sizeZBox()->setValue(7);
    dialog->field("lateral")->setValue(0.08);
    dialog->start();
    QVERIFY(finished.wait(20000));
    QCOMPARE(dialog->psf().shape(), (compute::Shape{7, 17, 17}));
    QTemporaryDir dir;
    const QString path = dir.filePath("bw.tif");
    QCOMPARE(dialog->save(path), QString());
    auto saved = io::openStack(path.toStdString());
    QCOMPARE(saved->info().z, int64_t(7));
    QVERIFY(saved->info().spacingKnown);
    QVERIFY(std::abs(saved->info().spacing[2] - 0.08) < 1e-6);
    std::vector<float> centre(17 * 17);
    saved->readSlice(3, centre.data());
    QCOMPARE(int(std::max_element(centre.begin(), centre.end()) - centre.begin()), 8 * 17 + 8);
  }

  void cancelStopsALargeOne() {
    ui::PsfDialog dialog;
    dialog.show();
    dialog.modelBox()->setCurrentIndex(3);
    dialog.sizeBox()->setValue(257);
    dialog.sizeZBox()->setValue(129);
    QSignalSpy cancelled(&dialog, &ui::PsfDialog::cancelled);
    dialog.start();
    QTest::qWait(50);
    dialog.cancel();
    QVERIFY2(cancelled.count() > 0 || cancelled.wait(10000), qPrintable(dialog.status()));
    QVERIFY(dialog.psf().empty());
  }
};

STACKLENS_GL_QTEST_MAIN(PsfDialogTest)
#include "psf_dialog_qtest.moc"
