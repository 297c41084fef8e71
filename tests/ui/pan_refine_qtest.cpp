// While the view is dragged across a plane drawn from display levels, the tiles of the zoom's
// level are read and drawn during the drag (not only once it rests), tiles that scroll away
// before their turn are never read, and the tiles held stay within the cache's budget.
#include <QMouseEvent>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>
#include <vector>

#include "render/display_settings.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "tests/ui/striped_plane.h"
#include "ui/display/level_view.h"
#include "ui/frame/main_window.h"

using namespace stacklens;

namespace {

constexpr int kWidth = 8192, kHeight = 1024;

// Vertical stripes 4 pixels wide: a level's 2 × 2 means keep them at level 0 and 1, and the
// coarse level (every 8th pixel of level 2, 32 full-resolution pixels apart) samples dark ones
// only, so a frame drawn from the coarse level is dark where level 0 has bright stripes.
float valueAt(int64_t x) { return (x / 4) % 2 ? 1000.f : 0.f; }

QString writeStripes(const QTemporaryDir& dir) {
  return test::writeStripedOmeZarr(dir, kWidth, kHeight, valueAt, 3, 256);  // 8192, 4096, 2048
}

void sendMouse(render::SliceView* view, QEvent::Type type, QPointF pos) {
  const bool press = type == QEvent::MouseButtonPress, release = type == QEvent::MouseButtonRelease;
  QMouseEvent event(type, pos, view->mapToGlobal(pos),
                    press || release ? Qt::LeftButton : Qt::NoButton,
                    release ? Qt::NoButton : Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(view, &event);
}

// Screen pixels of the middle row whose colour is not the level-0 value under them (pixels
// within a pixel of a stripe's edge are skipped: their sampling point may fall either side).
int columnsNotFromLevel0(render::SliceView* view) {
  const QImage frame = view->grabFramebuffer();
  const double ratio = frame.width() / std::max(1.0, double(frame.deviceIndependentSize().width()));
  const int y = view->height() / 2;
  int wrong = 0, checked = 0;
  for (int x = 0; x < view->width(); ++x) {
    const QPointF image = view->widgetToImage({x + 0.5, y + 0.5});
    const int64_t ix = std::llround(image.x());
    if (ix < 0 || ix >= kWidth || valueAt(ix - 1) != valueAt(ix + 1)) continue;
    const int want = render::colourIndex(view->display(), valueAt(ix));
    const int got = qGray(frame.pixel(int(x * ratio), int(y * ratio)));
    ++checked;
    if (std::abs(got - want) > 2) ++wrong;
  }
  return checked > view->width() / 4 ? wrong : -1;
}

void showAtZoomOne(ui::MainWindow& w) {
  render::SliceView* view = w.sliceView();
  render::DisplaySettings d = view->display();
  d.limits = {0.f, 1000.f};  // the coarse level is dark only: its own limits would be flat
  view->setDisplay(d);
  view->setView(1.0, QPointF(view->width() / 2.0, kHeight / 2.0));  // at the left edge
  view->setZoom(1.0);
}

}  // namespace

class PanRefineTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("StackLensTest");
    QCoreApplication::setApplicationName("StackLensPanRefineTest");
    QSettings().clear();
  }

  // Each move of a drag asks at once for the tiles it shows; once they are read (the event loop
  // run until no read is left, the button still down) the frame shows level 0's pixels, never
  // the coarse level's, all along the plane; the tiles kept stay within the cache's budget.
  void aDragDrawsTheZoomsLevelBeforeItEnds() {
    QTemporaryDir dir;
    const QString path = writeStripes(dir);
    ui::MainWindow w;
    w.slicePath()->setRawSliceBudget(size_t(1)
                                     << 20);  // planes above 256 KiB come from display levels
    QVERIFY(testing::openInWindow(w, path, QSize(800, 600)));
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    render::SliceView* view = w.sliceView();
    ui::LevelView* levels = w.slicePath()->levelView();
    QVERIFY(levels->active());
    constexpr int64_t kTileBytes = int64_t(ui::LevelView::kTileSide) * ui::LevelView::kTileSide * 4;
    levels->setTileCacheBytes(12 * kTileBytes);  // the 32 tiles of level 0 do not all fit
    showAtZoomOne(w);
    QCOMPARE(levels->levelForZoom(view->zoom()), 0);
    QTRY_COMPARE(levels->readsPending(), 0);
    QVERIFY(levels->viewRefined());
    QCOMPARE(columnsNotFromLevel0(view), 0);

    const ui::LevelView::TileCounts before = levels->tileCounts();  // the fitted view's included
    view->setTool(render::SliceView::Tool::Pan);
    QPointF mouse(view->width() / 2.0, view->height() / 2.0);
    sendMouse(view, QEvent::MouseButtonPress, mouse);
    const double startX = view->widgetToImage(mouse).x();
    int moves = 0;
    // Synthetic moves (as the pan benchmark's): the mouse may leave the widget, the drag goes on.
    for (; view->widgetToImage({double(view->width()), 0}).x() < kWidth - 150 && moves < 200;
         ++moves) {
      mouse.rx() -= 150;  // the image follows the mouse left: the view travels right
      sendMouse(view, QEvent::MouseMove, mouse);
      // Asked for at the move itself, not after a pause.
      QVERIFY2(levels->viewRefined() || levels->readsPending() > 0,
               qPrintable(QString("move %1 asked for no tile").arg(moves)));
      QTRY_COMPARE(levels->readsPending(), 0);
      QVERIFY(levels->viewRefined());
      QTRY_COMPARE(columnsNotFromLevel0(view), 0);
      QVERIFY(levels->tileCache().bytes() <= 12 * kTileBytes);
    }
    sendMouse(view, QEvent::MouseButtonRelease, mouse);
    QVERIFY2(moves >= 40, qPrintable(QString("%1 moves").arg(moves)));
    QVERIFY(view->widgetToImage({0, 0}).x() > startX + 6000);
    // Every tile of level 0 along the way was read once: nothing was read twice or in vain.
    const ui::LevelView::TileCounts& counts = levels->tileCounts();
    QCOMPARE(counts.readStale, before.readStale);
    QVERIFY2(counts.read - before.read <= 32 - 4,  // the first view's 2 × 2 were read before
             qPrintable(QString("%1 tiles read").arg(counts.read - before.read)));
  }

  // Jumping the view across the plane many times before the event loop runs reads only the
  // tiles already being read at the first place (at most maxReads()) and those of the last.
  void tilesThatLeaveTheViewBeforeTheirTurnAreNotRead() {
    QTemporaryDir dir;
    const QString path = writeStripes(dir);
    ui::MainWindow w;
    w.slicePath()->setRawSliceBudget(size_t(1) << 20);
    QVERIFY(testing::openInWindow(w, path, QSize(800, 600)));
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    render::SliceView* view = w.sliceView();
    ui::LevelView* levels = w.slicePath()->levelView();
    showAtZoomOne(w);
    QTRY_COMPARE(levels->readsPending(), 0);
    const ui::LevelView::TileCounts before = levels->tileCounts();

    for (int jump = 1; jump <= 10; ++jump) {
      view->setView(1.0, QPointF(view->width() / 2.0 + jump * 700.0, kHeight / 2.0));
      view->setZoom(1.0);  // as a user's move: the view says it moved
    }
    QTRY_COMPARE(levels->readsPending(), 0);
    QVERIFY(levels->viewRefined());
    QCOMPARE(columnsNotFromLevel0(view), 0);

    const ui::LevelView::TileCounts& after = levels->tileCounts();
    // At most: the columns of tiles over the view and half a view ahead, two rows.
    const int wantedNow = int(std::ceil(view->width() * 1.5 / 512.0) + 1) * 2;
    QVERIFY2(after.readStale - before.readStale <= levels->maxReads(),
             qPrintable(QString("%1 stale reads").arg(after.readStale - before.readStale)));
    QVERIFY(after.read - before.read <= levels->maxReads() + wantedNow);
    QVERIFY(after.cancelled - before.cancelled >= 8);  // the places passed over, never read
  }
};

STACKLENS_GL_QTEST_MAIN(PanRefineTest)
#include "pan_refine_qtest.moc"
