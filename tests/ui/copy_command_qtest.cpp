// Edit ▸ Copy as command: the line the viewer gives for its pipeline, run through the shell,
// writes a stack whose slice z is, pixel for pixel, what the viewer shows at z; a PSF made in the
// viewer is named as a file to save; the clipboard holds the text after the menu action.
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QMenu>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "io/stack.h"
#include "io/stack_writer.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/frame/main_window.h"
#include "ui/live/copy_command.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"

using namespace stacklens;

class CopyCommandTest : public QObject {
  Q_OBJECT
 private slots:
  void theLineReproducesWhatTheViewerShows() {
    QTemporaryDir dir;
    const int z = 3, n = 48;
    std::vector<float> v(size_t(z * n * n));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.f, 100.f);
    for (float& x : v) x = u(rng);
    const QString input = dir.filePath("noisy stack.tif");  // a space: the line quotes it
    io::writeStack(input.toStdString(), v.data(), z, n, n, {});

    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, input, QSize(700, 600)));
    ui::ProcessingDock* dock = w.tool<ui::LiveProcessing>()->dock();
    dock->setBackendChoice(ui::ProcessingDock::BackendChoice::Cpu);
    QSignalSpy ready(w.tool<ui::LiveProcessing>(), &ui::LiveProcessing::processedSliceReady);
    compute::Pipeline p;
    p.median.enabled = true;
    p.median.size = 3;
    p.blur.enabled = true;
    p.blur.params.sigmaY = 1.3;
    p.blur.params.sigmaX = 0.7;
    dock->setPipeline(p);
    const int shown = w.slicePath()->currentZ();
    QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() && ready.last().at(0).toInt() == shown, 10000);
    const auto viewer = ready.last().at(1).value<std::shared_ptr<const std::vector<float>>>();
    QVERIFY(viewer && viewer->size() == size_t(n * n));

    const QString text = ui::pipelineCommandText(&w);
    QVERIFY2(text.startsWith("stacklens-cli process "), qPrintable(text));
    QVERIFY2(text.contains("--median 3") && text.contains("--blur"), qPrintable(text));
    QProcess shell;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("PATH", QString(STACKLENS_CLI_DIR) + ":" + env.value("PATH"));
    shell.setProcessEnvironment(env);
    shell.start("/bin/sh", {"-c", text.section('\n', 0, 0)});
    QVERIFY(shell.waitForFinished(60000));
    QVERIFY2(shell.exitCode() == 0, shell.readAllStandardError().constData());

    const QString output = dir.filePath("noisy stack_processed.tif");
    auto reader = io::openStack(output.toStdString());
    QCOMPARE(reader->info().z, int64_t(z));
    std::vector<float> slice(size_t(n * n));
    reader->readSlice(shown, slice.data());
    for (size_t i = 0; i < slice.size(); ++i)
      QVERIFY2(std::abs(slice[i] - (*viewer)[i]) <= 1e-5f * std::max(1.f, std::abs(slice[i])),
               qPrintable(QString("pixel %1: %2 vs %3").arg(i).arg(slice[i]).arg((*viewer)[i])));
  }

  void aPsfMadeInTheViewerIsNamedAsAFileToSave() {
    QTemporaryDir dir;
    std::vector<float> v(2 * 32 * 32, 1.f);
    const QString input = dir.filePath("flat.tif");
    io::writeStack(input.toStdString(), v.data(), 2, 32, 32, {});
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, input, QSize(600, 500)));
    ui::ProcessingDock* dock = w.tool<ui::LiveProcessing>()->dock();
    compute::Image psf = compute::Image::host({1, 3, 3});
    for (int i = 0; i < 9; ++i) psf.data()[i] = 1.f;
    QVERIFY(dock->setPsf(psf, "measured"));
    compute::Pipeline p = dock->pipeline();
    p.deconvolution.enabled = true;
    p.deconvolution.params.iterations = 5;
    dock->setPipeline(p);
    const QString text = ui::pipelineCommandText(&w);
    QVERIFY2(text.contains("--deconvolve 5") && text.contains("--psf PSF_FILE"), qPrintable(text));
    QVERIFY2(text.contains("\n# "), qPrintable(text));  // the note says to save the PSF

    QAction* copy = nullptr;
    for (QAction* a : w.editMenu()->actions())
      if (a->text().contains("command")) copy = a;
    QVERIFY(copy);
    copy->trigger();
    QCOMPARE(QApplication::clipboard()->text(), text);
  }
};

STACKLENS_GL_QTEST_MAIN(CopyCommandTest)
#include "copy_command_qtest.moc"
