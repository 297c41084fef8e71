// File ▸ Export movie…: the frames, decoded back with FFmpeg, are the slices drawn with the
// view's colormap and limits (colour for colour), the range and size as chosen; Cancel leaves
// nothing behind.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "io/stack_writer.h"
#include "render/colormap.h"
#include "render/display_settings.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/display_panel.h"
#include "ui/main_window.h"
#include "ui/movie_dialog.h"
#ifdef STACKLENS_HAVE_MOVIE
#include "tests/io/movie_decode.h"
#endif

using namespace stacklens;

class MovieDialogTest : public QObject {
  Q_OBJECT
 private slots:
  void framesAreTheViewsColoursOfEachSlice() {
#ifndef STACKLENS_HAVE_MOVIE
    QSKIP("built without FFmpeg");
#else
    QTemporaryDir dir;
    const int nz = 6, ny = 20, nx = 30;
    std::vector<float> v(size_t(nz * ny * nx));
    for (size_t i = 0; i < v.size(); ++i) v[i] = float((i * 37) % 1000);
    const QString in = dir.filePath("stack.tif");
    io::writeStack(in.toStdString(), v.data(), nz, ny, nx, {});
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, in));
    w.displayPanel()->colormapBox()->setCurrentText("magma");
    QTRY_COMPARE(w.displayPanel()->settings().colormap, QString("magma"));
    const render::DisplaySettings display = w.displayPanel()->settings();
    ui::MovieDialog* dialog = w.exportMovie();
    QVERIFY(dialog);
    dialog->firstBox()->setValue(1);
    dialog->lastBox()->setValue(4);
    const QString out = dir.filePath("movie.gif");
    dialog->outputEdit()->setText(out);
    QSignalSpy finished(dialog, &ui::MovieDialog::finished);
    dialog->start();
    QVERIFY(finished.wait(20000));
    const auto d = stacklens::testing::decode(out.toStdString());
    QCOMPARE(int(d.rgb.size()), 4);
    QCOMPARE(d.width, nx);
    const render::Colormap map = render::loadColormap("magma");
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < ny * nx; ++i) {
        const int index = render::colourIndex(display, v[size_t((k + 1) * ny * nx + i)]);
        const uint32_t want = map.rgba[size_t(std::max(index, 0))];
        for (int c = 0; c < 3; ++c)
          QCOMPARE(int(d.rgb[size_t(k)][size_t(i * 3 + c)]), int((want >> (8 * c)) & 0xff));
      }
#endif
  }

  void cancelLeavesNothing() {
    QTemporaryDir dir;
    const int nz = 400, ny = 256, nx = 256;
    std::vector<float> v(size_t(nz) * ny * nx, 1.f);
    const QString in = dir.filePath("big.tif");
    io::writeStack(in.toStdString(), v.data(), nz, ny, nx, {});
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, in));
    ui::MovieDialog* dialog = w.exportMovie();
    const QString out = dir.filePath("cancelled.mp4");
    dialog->outputEdit()->setText(out);
    QSignalSpy cancelled(dialog, &ui::MovieDialog::cancelled);
    QSignalSpy failed(dialog, &ui::MovieDialog::failed);
    dialog->start();
    dialog->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(cancelled.count() + failed.count() == 1, 20000);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(QDir(dir.path()).entryList({"cancelled*"}, QDir::Files).size(), 0);
  }
};

STACKLENS_GL_QTEST_MAIN(MovieDialogTest)

#include "movie_dialog_qtest.moc"
