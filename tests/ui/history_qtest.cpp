// Edit ▸ Undo / Redo and sessions: a colormap change is undone and redone (the view's pixels read
// back each time), quick changes of one setting are one step, hand-set limits come back with their
// mode, a pipeline change (with a PSF made in the viewer) is undone with its PSF; a saved session
// opened in a new window puts back the file, slice, view, display, pipeline and overlays, and bad
// session files are refused naming the file and the reason.
#include <QAction>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "io/stack_writer.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/analysis/regions_panel.h"
#include "ui/display/display_panel.h"
#include "ui/frame/main_window.h"
#include "ui/frame/navigation_bar.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"
#include "ui/state/history_tool.h"
#include "ui/state/session_tool.h"

using namespace stacklens;

namespace {

// A stack of 4 slices of 64 × 64 whose every pixel is the same mid value per slice, so the
// view's centre shows the colormap's middle colour.
QString writeFlatStack(const QTemporaryDir& dir) {
  std::vector<float> v(4 * 64 * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i % 64);  // a ramp along x
  const QString path = dir.filePath("ramp.tif");
  io::writeStack(path.toStdString(), v.data(), 4, 64, 64, {});
  return path;
}

QColor centreColour(render::SliceView* view) {
  QCoreApplication::processEvents();
  const QImage image = view->grabFramebuffer();
  return image.pixelColor(image.width() / 2, image.height() / 2);
}

bool isGray(const QColor& c) {
  return std::abs(c.red() - c.green()) < 4 && std::abs(c.green() - c.blue()) < 4;
}

compute::Image smallPsf() {
  compute::Image psf = compute::Image::host({1, 3, 3});
  for (int i = 0; i < 9; ++i) psf.data()[i] = i == 4 ? 0.5f : 0.0625f;
  return psf;
}

}  // namespace

class HistoryTest : public QObject {
  Q_OBJECT
 private slots:
  void undoAndRedoAColormapChange() {
    QTemporaryDir dir;
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, writeFlatStack(dir), QSize(700, 600)));
    render::SliceView* view = w.sliceView();
    QTRY_VERIFY(view->isExposed() && view->width() > 200);
    ui::DisplayPanel* display = w.displayPanel();
    display->setColormap("gray");
    QUndoStack* undo = ui::installHistory(&w)->undoStack();
    undo->clear();
    QTRY_VERIFY(isGray(centreColour(view)));

    QTest::qWait(ui::SettingsHistory::kMergeMs + 50);
    display->setColormap("heat");
    QCOMPARE(undo->count(), 1);
    QTRY_VERIFY(!isGray(centreColour(view)));
    undo->undo();
    QCOMPARE(display->settings().colormap, QString("gray"));
    QTRY_VERIFY(isGray(centreColour(view)));
    undo->redo();
    QCOMPARE(display->settings().colormap, QString("heat"));
    QTRY_VERIFY(!isGray(centreColour(view)));

    // The menu's actions carry the step's name and the usual shortcuts.
    QAction* undoAction = nullptr;
    for (QAction* a : w.editMenu()->actions())
      if (a->shortcut() == QKeySequence(QKeySequence::Undo)) undoAction = a;
    QVERIFY(undoAction);
    QVERIFY(undoAction->text().contains("display settings"));
  }

  void quickChangesAreOneStepAndManualLimitsComeBackWithTheirMode() {
    QTemporaryDir dir;
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, writeFlatStack(dir), QSize(700, 600)));
    ui::DisplayPanel* display = w.displayPanel();
    display->setScale(render::Scale::Log);
    QUndoStack* undo = ui::installHistory(&w)->undoStack();
    undo->clear();
    ui::installHistory(&w)->restart();
    QTest::qWait(ui::SettingsHistory::kMergeMs + 50);
    const float before = display->settings().exponent;
    for (double e : {500.0, 600.0, 700.0}) display->setExponent(e);
    QCOMPARE(undo->count(), 1);
    undo->undo();
    QCOMPARE(display->settings().exponent, before);

    QTest::qWait(ui::SettingsHistory::kMergeMs + 50);
    const render::LimitsMode mode = display->limitsMode();
    QVERIFY(mode != render::LimitsMode::Manual);
    display->setManualLimits({10, 20});
    QCOMPARE(display->limitsMode(), render::LimitsMode::Manual);
    undo->undo();
    QCOMPARE(display->limitsMode(), mode);
    undo->redo();
    QCOMPARE(display->limitsMode(), render::LimitsMode::Manual);
    QCOMPARE(display->settings().limits.low, 10.f);
    QCOMPARE(display->settings().limits.high, 20.f);
  }

  void aPipelineChangeIsUndoneWithItsPsf() {
    QTemporaryDir dir;
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, writeFlatStack(dir), QSize(700, 600)));
    ui::ProcessingDock* dock = w.tool<ui::LiveProcessing>()->dock();
    QUndoStack* undo = ui::installHistory(&w)->undoStack();
    undo->clear();
    ui::installHistory(&w)->restart();
    QTest::qWait(ui::SettingsHistory::kMergeMs + 50);
    compute::Pipeline p = dock->pipeline();
    p.median.enabled = true;
    p.median.size = 5;
    dock->setPipeline(p);
    QCOMPARE(undo->count(), 1);
    QTest::qWait(ui::SettingsHistory::kMergeMs + 50);
    QVERIFY(dock->setPsf(smallPsf(), "measured"));
    p = dock->pipeline();
    p.deconvolution.enabled = true;
    dock->setPipeline(p);
    QVERIFY(undo->count() >= 2);
    while (undo->canUndo()) undo->undo();
    QVERIFY(!dock->pipeline().median.enabled);
    QVERIFY(!dock->pipeline().deconvolution.enabled);
    while (undo->canRedo()) undo->redo();
    const compute::Pipeline back = dock->pipeline();
    QVERIFY(back.median.enabled);
    QCOMPARE(back.median.size, 5);
    QVERIFY(back.deconvolution.enabled);
    QCOMPARE(back.deconvolution.psf.shape().y, int64_t(3));
    QCOMPARE(dock->psfName(), QString("measured"));
  }

  void regionEditsAreUndoneAndRedone() {
    QTemporaryDir dir;
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, writeFlatStack(dir), QSize(700, 600)));
    auto* regions = w.findChild<ui::RegionsPanel*>();
    QVERIFY(regions);
    QUndoStack* undo = ui::installHistory(&w)->undoStack();
    QTRY_VERIFY(regions->regions().empty());
    undo->clear();
    ui::installHistory(&w)->restart();
    regions->setDrawnRegion(QRectF(10, 10, 20, 12), false);
    regions->addDrawnRegion();
    regions->setDrawnRegion(QRectF(30, 30, 8, 8), true);
    regions->addDrawnRegion();
    QCOMPARE(int(regions->regions().size()), 2);
    QCOMPARE(undo->count(), 2);  // region edits never merge
    QVERIFY(undo->undoText().contains("region"));
    undo->undo();
    QCOMPARE(int(regions->regions().size()), 1);
    QCOMPARE(regions->regions()[0].shape, io::RegionShape::Box);
    undo->undo();
    QVERIFY(regions->regions().empty());
    undo->redo();
    undo->redo();
    QCOMPARE(int(regions->regions().size()), 2);
    QCOMPARE(regions->regions()[1].shape, io::RegionShape::Ellipse);
  }

  void aSessionComesBackInANewWindow() {
    QTemporaryDir dir;
    const QString stack = writeFlatStack(dir);
    const QString sessionPath = dir.filePath("work.json");
    ui::Session saved;
    {
      ui::MainWindow w;
      QVERIFY(testing::openInWindow(w, stack, QSize(700, 600)));
      w.displayPanel()->setColormap("viridis");
      w.displayPanel()->setManualLimits({5, 40});
      ui::ProcessingDock* dock = w.tool<ui::LiveProcessing>()->dock();
      QVERIFY(dock->setPsf(smallPsf(), "measured from 3 stars"));
      compute::Pipeline p = dock->pipeline();
      p.blur.enabled = true;
      p.blur.params.sigmaX = 2.5;
      p.deconvolution.enabled = true;
      p.deconvolution.params.iterations = 7;
      dock->setPipeline(p);
      w.navigation()->setValue(2);
      QTRY_COMPARE(w.slicePath()->currentZ(), 2);
      // Added first: adding selects the region, which centres the view on it.
      auto* regions = w.findChild<ui::RegionsPanel*>();
      regions->setDrawnRegion(QRectF(5, 6, 10, 4), false);
      regions->addDrawnRegion();
      w.sliceView()->setView(2.0, QPointF(20, 30));
      w.findChild<QAction*>("viewColorbar")->setChecked(true);
      ui::SessionTool* tool = ui::SessionTool::install(&w);
      saved = tool->capture();
      QCOMPARE(tool->save(sessionPath), QString());
    }
    ui::MainWindow w;
    w.setQuiet(true);
    w.resize(700, 600);
    w.show();
    ui::SessionTool* tool = ui::SessionTool::install(&w);
    QSignalSpy restored(tool, &ui::SessionTool::restored);
    QVERIFY(tool->open(sessionPath));
    QVERIFY(restored.count() > 0 || restored.wait(10000));
    QTRY_COMPARE(w.slicePath()->currentZ(), 2);
    const ui::Session back = tool->capture();
    QCOMPARE(back.file, saved.file);
    QCOMPARE(back.slice, 2);
    QVERIFY(!back.fit);
    QCOMPARE(back.zoom, 2.0);
    QCOMPARE(back.centre, QPointF(20, 30));
    QCOMPARE(back.display.colormap, QString("viridis"));
    QCOMPARE(back.limitsMode, render::LimitsMode::Manual);
    QCOMPARE(back.display.limits.low, 5.f);
    QCOMPARE(back.display.limits.high, 40.f);
    QCOMPARE(back.psfName, QString("measured from 3 stars"));
    QCOMPARE(back.pipeline.fingerprint(), saved.pipeline.fingerprint());
    QVERIFY(back.colorbar);
    QCOMPARE(back.regions, saved.regions);
    QVERIFY(back.regions.contains("box("));
    const auto regions = w.findChild<ui::RegionsPanel*>()->regions();
    QCOMPARE(int(regions.size()), 1);
    QCOMPARE(regions[0].points[0][0], 5.0 + 10.0 / 2);  // the box's centre
    QVERIFY(!back.grid);
    // The restored colormap is what the view draws: viridis is not gray.
    QTRY_VERIFY(!isGray(centreColour(w.sliceView())));
  }

  void badSessionFilesAreRefusedWithTheReason() {
    QTemporaryDir dir;
    const QString notJson = dir.filePath("broken.json");
    QFile f(notJson);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{ this is not json");
    f.close();
    QString error;
    QVERIFY(!ui::readSession(notJson, &error));
    QVERIFY2(error.startsWith(notJson) && error.contains("not a session file"), qPrintable(error));

    const QString other = dir.filePath("other.json");
    QFile g(other);
    QVERIFY(g.open(QIODevice::WriteOnly));
    g.write(QJsonDocument(QJsonObject{{"format", "something-else"}}).toJson());
    g.close();
    QVERIFY(!ui::readSession(other, &error));
    QVERIFY2(error.contains("not a StackLens session"), qPrintable(error));

    ui::Session s;
    s.file = dir.filePath("ramp.tif");
    QCOMPARE(ui::writeSession(dir.filePath("ok.json"), s), QString());
    QFile h(dir.filePath("ok.json"));
    QVERIFY(h.open(QIODevice::ReadOnly));
    QJsonObject json = QJsonDocument::fromJson(h.readAll()).object();
    h.close();
    QJsonObject display = json["display"].toObject();
    display["scale"] = "cubic";
    json["display"] = display;
    QVERIFY(h.open(QIODevice::WriteOnly | QIODevice::Truncate));
    h.write(QJsonDocument(json).toJson());
    h.close();
    QVERIFY(!ui::readSession(dir.filePath("ok.json"), &error));
    QVERIFY2(error.contains("cubic"), qPrintable(error));

    // A session whose stack is gone: the window reports it and stays usable.
    ui::MainWindow w;
    w.setQuiet(true);
    ui::SessionTool* tool = ui::SessionTool::install(&w);
    QSignalSpy failed(tool, &ui::SessionTool::failed);
    s.file = dir.filePath("gone.fits");
    QCOMPARE(ui::writeSession(dir.filePath("gone.json"), s), QString());
    QVERIFY(tool->open(dir.filePath("gone.json")));
    QVERIFY(failed.count() > 0 || failed.wait(10000));
    QVERIFY2(failed.first().first().toString().contains("gone.fits"),
             qPrintable(failed.first().first().toString()));
  }
};

STACKLENS_GL_QTEST_MAIN(HistoryTest)
#include "history_qtest.moc"
