// View ▸ Contours on a stack of cones: listed levels give closed circles of their radius about
// each slice's apex (the slider moves them), drawn in green over the view (read back on the
// circle, not at the apex), a count gives levels inside the limits, and the DS9 export holds one
// polygon per circle in 1-based image coordinates with its level; another file of another size is
// refused with the reason.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "io/stack_writer.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/framebuffer_checks.h"
#include "tests/ui/open_in_window.h"
#include "ui/display/contours_panel.h"
#include "ui/display/contours_tool.h"
#include "ui/frame/main_window.h"
#include "ui/frame/navigation_bar.h"

using namespace stacklens;

using stacklens::testing::greenNear;

class ContoursTest : public QObject {
  Q_OBJECT
 private slots:
  void circlesAboutEachSlicesApex() {
    QTemporaryDir dir;
    const int n = 64;
    const double apex[2][2] = {{30, 28}, {36, 33}};
    std::vector<float> v(2 * n * n);
    for (int z = 0; z < 2; ++z)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x)
          v[size_t((z * n + y) * n + x)] = float(std::hypot(x - apex[z][0], y - apex[z][1]));
    const QString path = dir.filePath("cones.tif");
    io::writeStack(path.toStdString(), v.data(), 2, n, n, {});
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, path, QSize(900, 700)));
    ui::ContoursPanel* panel = ui::showContours(&w);
    QSignalSpy ready(panel, &ui::ContoursPanel::contoursReady);
    ready.clear();
    panel->setLevelList("10, 20");
    QVERIFY(ready.count() > 0 || ready.wait(10000));
    const int first = w.slicePath()->currentZ();  // the viewer opens at the middle slice
    for (int z : {first, 1 - first}) {
      if (z != first) {
        ready.clear();
        w.navigation()->setValue(z);
        QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty() && ready.last().at(0).toInt() == z, 10000);
      }
      const auto& lines = panel->lines();
      QCOMPARE(int(lines.size()), 2);
      for (const auto& line : lines) {
        QVERIFY(line.closed);
        for (const auto& p : line.points)
          QVERIFY2(
              std::abs(std::hypot(p.x - apex[z][0], p.y - apex[z][1]) - line.level) < 0.1,
              qPrintable(
                  QString("slice %1 level %2 at %3, %4").arg(z).arg(line.level).arg(p.x).arg(p.y)));
      }
    }
    const int shown = 1 - first;
    render::SliceView* view = w.sliceView();
    const QImage frame = view->grabFramebuffer();
    QVERIFY(greenNear(frame, view->imageToWidget({apex[shown][0] + 10, apex[shown][1]}), 2));
    QVERIFY(!greenNear(frame, view->imageToWidget({apex[shown][0], apex[shown][1]}), 2));

    const QString reg = dir.filePath("c.reg");
    QCOMPARE(panel->exportRegions(reg), QString());
    QFile file(reg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    QVERIFY(text.startsWith("# Region file format: DS9"));
    QVERIFY(text.contains("\nimage\n"));
    QCOMPARE(text.count("polygon("), 2);
    QVERIFY(text.contains("tag={contour 10}") && text.contains("tag={contour 20}"));
    // The rightmost point of the inner circle, in DS9's 1-based coordinates.
    QVERIFY(
        text.contains(QString("%1.000,%2.000").arg(apex[shown][0] + 11).arg(apex[shown][1] + 1)));

    panel->setLevelCount(3);  // inside the display limits
    QTRY_COMPARE(int(panel->levels().size()), 3);
    panel->setSourceFile(dir.filePath("nope.fits"));
    QVERIFY(panel->status().contains("nope.fits"));
  }
};

STACKLENS_GL_QTEST_MAIN(ContoursTest)
#include "contours_qtest.moc"
